"""InferenceX's own AgentX run is the reference for the harness's numbers.

InferenceX's standalone AgentX command (`inferencex-e2e/docs/agentx-standalone.md`: `aiperf profile --scenario
agentx --url ... --endpoint /v1/chat/completions --model ... --tokenizer ... --concurrency N --public-dataset ...
--output-artifact-dir ...`, plus `--server-metrics URL/metrics`, on a fresh server) is run here as written, with
the local quickstart corpus in place of the public dataset and therefore `--unsafe-override`, against a fresh
simulator started with the point's exact server command. The harness runs the same point twice (`harness run
--repeat 2`, each on its own fresh simulator, same seed, concurrency and window). All three servers run the demo
profile with its noise turned off (a copy with zero sigmas): what is compared is the measurement, and a noisy
server would need many runs a side to resolve a difference in it. The reference run's numbers
must lie within the spread of the harness's two runs, widened by that spread on each side (and at least by the
floors below; E2EL's grows with its length): requests, throughput per GPU, TTFT and E2EL percentiles. Both sides' numbers come from the same per-request arithmetic
(`harness.point.record.result_fields`, which the InferenceX-aggregator fixtures hold equal to InferenceX's), so what is
compared is the measurement itself: the client, its scenario and what the harness adds to its command.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from harness.point.record import result_fields
from harness.point.replay import aiperf
from harness.recipe.points import load_plans
from harness.report.analysis.spread import spreads
from harness.sim.batching.timing import PROFILE_DIR
from harness.tokenizer import DEMO_TOKENIZER_DIR, DEMO_TOKENIZER_NAME, register_in_hf_cache

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "quickstart-sim.yaml"
POINT = "c4"
WINDOW_S = 45
# AIPerf's default grace after the window (InferenceX's standalone command sets none): the harness gets the same
WINDOW_SETTINGS = [f"client.duration_s={WINDOW_S}", "client.grace_s=30"]
# Each metric may lie outside the harness's two runs by their spread, and at least by a floor below which a shared
# 2-core runner cannot resolve a difference: 3 ms of latency (the scheduling jitter of the simulator's ~10 ms
# TTFTs on a loaded machine), 1 % of throughput, one request at the window's edge.
# The least widening of the harness's spread, per metric: (absolute, relative to the harness's median). A call's E2EL
# sums the timer wake-ups of its ~100+ decode steps, so its run-to-run jitter on a busy machine grows with its length.
FLOORS = {"tok/s/GPU": (0.0, 0.01), "E2EL p50 (s)": (0.003, 0.002), "E2EL p90 (s)": (0.003, 0.002),
          "TTFT p50 (s)": (0.003, 0.0), "TTFT p90 (s)": (0.003, 0.0), "requests": (1.0, 0.0)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    port = _free_port()
    server_argv = list(plan.server.argv)
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
    accounting = result_fields.request_accounting(records, None)
    return {"request_metrics": result_fields.request_metrics(records, plan.resources.num_gpus),
            "num_requests_successful": accounting["successful"]}


def _harness_runs(out: Path, settings: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run([str(Path(sys.executable).parent / "harness"), "run", str(RECIPE), "--point", POINT,
                           "--repeat", "2", "--out", str(out), *(f"--set={s}" for s in settings)],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode in (0, 3), done.stdout[-3000:] + done.stderr[-3000:]
    (pdir,) = (p.parent for p in out.rglob("client_command.txt") if "attempts" not in p.parts)  # a variant's dir
    paths = [pdir / "point_result.json", *sorted((pdir / "attempts").glob("*/point_result.json"))]
    records = [json.loads(p.read_text()) for p in paths if p.exists()]
    assert len(records) == 2, paths
    command = (pdir / "client_command.txt").read_text()
    assert "--scenario agentx" in command and records[0]["client"]["tool"]["name"] == "agentx-harness"
    return records


def test_the_harness_point_measures_what_inferencex_standalone_run_measures(tmp_path: Path,
                                                                           settings: list[str]) -> None:
    runs = _harness_runs(tmp_path / "harness", settings)
    reference = _reference_run(tmp_path, settings)
    spread = {s.metric: s for s in spreads(runs)}
    ref_values = {s.metric: s.values[0] for s in spreads([reference])}
    outside = []
    for metric, (absolute, relative) in FLOORS.items():
        band = spread[metric]
        width = max(band.high - band.low, absolute, relative * band.median)
        value = ref_values[metric]
        if not band.low - width <= value <= band.high + width:
            outside.append(f"{metric}: InferenceX's run {value:.4g}, the harness's runs {band.values}")
    assert not outside, "; ".join(outside)
    assert min(spread["requests"].values) >= 15   # enough requests for the percentiles to mean something
