"""InferenceX's own AgentX run is the reference for the harness's numbers.

InferenceX's standalone AgentX command (`inferencex-e2e/docs/agentx-standalone.md`: `aiperf profile --scenario
agentx --url ... --endpoint /v1/chat/completions --model ... --tokenizer ... --concurrency N --public-dataset ...
--output-artifact-dir ...`, plus `--server-metrics URL/metrics`, on a fresh server) is run here as written, with
the local quickstart corpus in place of the public dataset and therefore `--unsafe-override`, against a fresh
simulator started with the point's exact server command. The harness runs the same point (`harness run`, on its
own fresh simulator, same seed, concurrency and window). Both servers run the demo profile with its noise turned off
(a copy with zero sigmas), so the server is deterministic up to scheduling, and what is compared is the measurement:
- the same requests: the profiling phase of InferenceX's run holds the same calls (conversation and turn) as the
  harness's, but for at most one at the window's edge. This is what the scenario, its warm-up and its
  window decide, and what a different client, scenario or window changes first;
- the same latencies, call by call: over the calls both runs made, the median difference of TTFT and of E2EL is
  within the scheduling jitter of a loaded 2-core machine. A percentile of ~20 calls is not compared: one call whose
  arrival falls on the other side of a prefill step (~20 ms here) moves it by more than that jitter;
- the same throughput per GPU, within 1 %.
Both sides' numbers come from the same per-request arithmetic (`harness.point.record.result_fields`, which the
InferenceX-aggregator fixtures hold equal to InferenceX's), so equal calls with equal latencies give equal rows.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from harness.point.record import result_fields
from harness.point.replay import aiperf
from harness.point.servers.port_owner import free_port
from harness.recipe.points import load_plans
from harness.sim.batching.timing import PROFILE_DIR
from harness.tokenizer import DEMO_TOKENIZER_DIR, DEMO_TOKENIZER_NAME, register_in_hf_cache

# minutes of windows, and a tolerance of a quiet machine's scheduling jitter: make test-all, by itself
pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.alone]

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "quickstart-sim.yaml"
POINT = "c4"
WINDOW_S = 45
# AIPerf's default grace after the window (InferenceX's standalone command sets none): the harness gets the same
WINDOW_SETTINGS = [f"client.duration_s={WINDOW_S}", "client.grace_s=30"]
# The scheduling jitter of one call's latency on a loaded 2-core machine (TTFT; E2EL sums the timer wake-ups of its
# ~100+ decode steps, so its jitter grows with its length), and the throughput's tolerance.
TTFT_JITTER_S = 0.005
E2EL_JITTER = (0.008, 0.003)   # (absolute s, relative to the call's median E2EL)
THROUGHPUT_TOLERANCE = 0.01
EDGE_CALLS = 1                 # calls that may fall on either side of the window's end


def _wait_ready(url: str, proc: subprocess.Popen[bytes], within_s: float = 120) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the simulator exited ({proc.returncode}) before it was ready")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    pytest.fail("the simulator was not ready in time")


@pytest.fixture
def settings(tmp_path: Path) -> list[str]:
    """The window, and the demo profile without its noise (a JSON copy the simulator loads by path)."""
    profile = json.loads((PROFILE_DIR / "demo.json").read_text())
    profile.update(run_noise_sigma=0.0, step_noise_sigma=0.0, request_noise_sigma=0.0)
    quiet = tmp_path / "demo-quiet.json"
    quiet.write_text(json.dumps(profile))
    return [*WINDOW_SETTINGS, f"sim_profile={quiet}"]


def _reference_run(tmp: Path, settings: list[str]) -> dict[str, Any]:
    """InferenceX's standalone command against a fresh simulator; the point's numbers from its records."""
    _, (plan,) = load_plans(RECIPE, [POINT], settings)
    port = free_port()
    server_argv = plan.server.launch_argv()
    server_argv[server_argv.index("--port") + 1] = str(port)
    assert server_argv[:3] == ["python3", "-m", "harness.sim"]
    server = subprocess.Popen([sys.executable, *server_argv[1:]], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**os.environ, **plan.server.env})
    url = f"http://127.0.0.1:{port}"
    artifacts = tmp / "inferencex" / "aiperf_artifacts"
    # the demo tokenizer, offline in the Hugging Face cache AIPerf reads (as a user's model tokenizer would be)
    tokenizer = register_in_hf_cache(DEMO_TOKENIZER_DIR, DEMO_TOKENIZER_NAME, tmp / "cache" / "hf")
    try:
        _wait_ready(url, server)
        command = [
            aiperf.aiperf_executable(), "profile", "--scenario", "agentx", "--url", url,
            "--endpoint", "/v1/chat/completions", "--model", plan.client.served_model_name,
            "--tokenizer", tokenizer, "--concurrency", str(plan.conc),
            "--custom-dataset-type", "weka_trace", "--input-file", plan.client.traces,   # not the public dataset
            "--output-artifact-dir", str(artifacts),
            "--server-metrics", f"{url}/metrics",
            "--benchmark-duration", str(WINDOW_S), "--unsafe-override",   # a short window on a local corpus
        ]
        env = aiperf.build_env(tmp / "cache", tmp / "cache" / "hf", aiperf.short_tmp_dir())
        done = subprocess.run(command, env={**os.environ, **env}, capture_output=True, timeout=600, check=False)
        assert done.returncode == 0, done.stdout.decode()[-3000:] + done.stderr.decode()[-3000:]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    summary = aiperf.read_summary(artifacts)
    assert summary is not None and summary["metadata"]["scenario"] == "agentx"
    records = [result_fields.parse_record(r) for r in aiperf.read_records(artifacts)]
    return {"request_metrics": result_fields.request_metrics(records, plan.resources.num_gpus),
            "calls": _calls(artifacts)}


Call = tuple[str, int]


def _calls(artifacts: Path) -> dict[Call, tuple[float, float]]:
    """(TTFT, E2EL) in seconds of every successful call of the profiling phase, by (conversation, turn)."""
    calls = {}
    for raw in aiperf.read_records(artifacts):
        meta, record = raw["metadata"], result_fields.parse_record(raw)
        if record.phase == "profiling" and record.ok and record.ttft_s is not None and record.e2el_s is not None:
            calls[(str(meta["conversation_id"]), int(meta["turn_index"]))] = (record.ttft_s, record.e2el_s)
    return calls


def _harness_run(out: Path, settings: list[str]) -> dict[str, Any]:
    done = subprocess.run([str(Path(sys.executable).parent / "harness"), "run", str(RECIPE), "--point", POINT,
                           "--out", str(out), *(f"--set={s}" for s in settings)],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode in (0, 3), done.stdout[-3000:] + done.stderr[-3000:]
    (pdir,) = (p.parent for p in out.rglob("client_command.txt"))   # a variant's dir
    record: dict[str, Any] = json.loads((pdir / "point_result.json").read_text())
    command = (pdir / "client_command.txt").read_text()
    assert "--scenario agentx" in command and record["client"]["tool"]["name"] == "agentx-harness"
    record["calls"] = _calls(pdir / "aiperf")
    return record


def _median_abs(values: list[float]) -> float:
    return float(statistics.median(abs(v) for v in values))


def _differences(reference: dict[Call, tuple[float, float]], run: dict[Call, tuple[float, float]]) -> list[str]:
    """What separates one harness run from InferenceX's, call by call (empty when they agree)."""
    only = sorted(set(reference) ^ set(run))
    both = sorted(set(reference) & set(run))
    found = [f"calls in one run only: {only}"] if len(only) > EDGE_CALLS else []
    if not both:
        return [*found, "no call in both runs"]
    ttft = _median_abs([run[c][0] - reference[c][0] for c in both])
    e2el = _median_abs([run[c][1] - reference[c][1] for c in both])
    e2el_limit = max(E2EL_JITTER[0], E2EL_JITTER[1] * statistics.median(reference[c][1] for c in both))
    print(f"{len(both)} calls in both runs, {len(only)} in one; median |ΔTTFT| {ttft * 1e3:.2f} ms, "
          f"median |ΔE2EL| {e2el * 1e3:.2f} ms (limits {TTFT_JITTER_S * 1e3:.0f} / {e2el_limit * 1e3:.1f} ms)")
    if ttft > TTFT_JITTER_S:
        found.append(f"median |ΔTTFT| per call {ttft * 1e3:.2f} ms")
    if e2el > e2el_limit:
        found.append(f"median |ΔE2EL| per call {e2el * 1e3:.2f} ms")
    return found


def test_the_harness_point_measures_what_inferencex_standalone_run_measures(tmp_path: Path,
                                                                           settings: list[str]) -> None:
    run = _harness_run(tmp_path / "harness", settings)
    reference = _reference_run(tmp_path, settings)
    assert len(reference["calls"]) >= 15   # enough calls for the comparison to mean something
    outside = _differences(reference["calls"], run["calls"])
    ours, theirs = (r["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] for r in (run, reference))
    print(f"tok/s/GPU: InferenceX's run {theirs:.1f}, the harness's {ours:.1f}")
    if abs(theirs - ours) > THROUGHPUT_TOLERANCE * ours:
        outside.append(f"tok/s/GPU: InferenceX's run {theirs:.4g}, the harness's {ours:.4g}")
    assert not outside, "; ".join(outside)
