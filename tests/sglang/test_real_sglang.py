"""The harness driving REAL SGLang 0.5.23 (plain-torch CPU path, tiny random-weight Llama): a two-point sweep with
readiness, launch token, fingerprint, server metrics and the report, with `--api-key` checked by SGLang; teardown on SIGINT/SIGTERM leaving no scheduler
or detokenizer; a killed scheduler ending the point; `harness eval --limit 5`; one worker behind the real
sglang-router. Verdicts, files and process trees are
asserted, never throughput (other jobs on the machine move it ~10x)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import group_gone, live_routers, wait_for_phase
from tests.sglang.conftest import RECIPE, ROOT, Tier, harness

SGLANG_TITLES = ("sglang::scheduler", "sglang::detokenizer")
FAST = ["--set", "client.duration_s=20", "--set", "client.grace_s=10"]   # a shorter window: a variant
VARIANT = "duration_s=20,grace_s=10"
# the sweep's points must complete: the grace lets requests in flight at the window's end finish (what is still in
# flight after it is cancelled at the cutoff, and the point still completes)
SWEEP = ["--set", "client.duration_s=10", "--set", "client.grace_s=40"]
SWEEP_VARIANT = "duration_s=10,grace_s=40"
API_KEY = "sk-real-sglang-0123456789"


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _cmdlines() -> list[tuple[int, bytes]]:
    """(pid, raw command line) of every process this user can read."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmd = (entry / "cmdline").read_bytes() if entry.name.isdigit() else None
        except OSError:
            continue
        if cmd is not None:
            found.append((int(entry.name), cmd))
    return found


def sglang_processes() -> list[tuple[int, str]]:
    """(pid, title) of every SGLang scheduler or detokenizer process on this machine."""
    titles = [(pid, cmd.split(b"\0")[0].decode(errors="replace")) for pid, cmd in _cmdlines()]
    return [(pid, title) for pid, title in titles if title.startswith(SGLANG_TITLES)]


def no_sglang_left(within_s: float = 20.0) -> list[tuple[int, str]]:
    deadline = time.monotonic() + within_s
    while (left := sglang_processes()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


def start_point(tier: Tier, out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "harness", "run", str(RECIPE), "--point", "c2", "--out", str(out),
                             *extra], cwd=ROOT, env=tier.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def test_sweep_of_two_points_against_real_sglang(sglang_tier: Tier, tmp_path: Path) -> None:
    # the server checks an API key: readiness, the launch-token check, the fingerprint and AIPerf must send it
    assert sglang_processes() == []
    r = harness(sglang_tier.env(), "sweep", str(RECIPE), "--out", str(tmp_path), *SWEEP,
                "--set", f"args.api-key={API_KEY}", timeout=1200)
    assert r.returncode in (0, 3), r.stdout[-3000:] + r.stderr[-3000:]   # 3: a point judged INVALID
    (curve,) = (tmp_path / "tiny-llama-cpu-sglang" / "variants").iterdir()
    assert curve.name.startswith(f"{SWEEP_VARIANT},api-key=redacted-"), curve.name   # a mark, never the key
    assert API_KEY not in curve.name
    for conc in (2, 4):
        pdir = curve / f"conc{conc}"
        status = _read(pdir / "status.json")
        assert status["state"] == "completed", status
        assert {"loading", "ready", "profiling"} <= set(status["phases"])
        log = (pdir / "server.log").read_text()
        assert "The server is fired up and ready to roll!" in log
        assert "sgl_kernel stand-in: SGLang called the CPU kernel" not in log, re.findall(r"kernel '(\w+)'", log)
        # readiness: the launch token passed as --weight-version and echoed by the real /server_info
        token = re.search(r"--weight-version (harness-launch-[0-9a-f]{16})",
                          (pdir / "server_command.txt").read_text())
        fp = _read(pdir / "fingerprint_agg_w0.json")
        assert token is not None and fp["server"]["server_info"]["weight_version"] == token.group(1)
        # the worker fingerprint was captured in the server's own interpreter (the SGLang venv)
        assert str(sglang_tier.venv) in json.dumps(fp), "fingerprint not captured in the SGLang venv"
        assert fp["server"]["server_info"]["version"] == "0.5.23"
        record = _read(pdir / "point_result.json")
        assert (record["engine"], record["hw"], record["engine_label"]) == (
            "sglang", "cpu", "real SGLang, plain-torch CPU path")
        row = _read(pdir / f"bmk_agentic_tiny-llama-cpu-sglang_conc{conc}.json")
        assert row["hw"] == "cpu"
        server = row["server_metrics"]   # from real /metrics, through AIPerf's scrape
        assert (server["adapter"], server["present"]) == ("sglang", True)
        assert server["tokens"]["prompt_total"] > 0
        assert f"max_total_num_tokens={row['kv_cache_pool_tokens']}," in log
    leaked = [str(p) for p in tmp_path.rglob("*") if p.is_file() and API_KEY.encode() in p.read_bytes()]
    assert leaked == []
    reports = list(tmp_path.rglob("report.md"))
    assert reports, "no report built"
    text = reports[0].read_text()
    assert "real SGLang, plain-torch CPU path; not GPU numbers" in text and "SIMULATED" not in text
    assert no_sglang_left() == []


@pytest.mark.parametrize(("sig", "code", "phases"), [
    (signal.SIGINT, 130, ("profiling",)),          # during the run
    (signal.SIGTERM, 143, ("loading", "launching")),   # while SGLang loads
])
def test_a_signal_tears_real_sglang_down_completely(sglang_tier: Tier, tmp_path: Path, sig: signal.Signals,
                                                    code: int, phases: tuple[str, ...]) -> None:
    proc = start_point(sglang_tier, tmp_path, *FAST)
    status_path = tmp_path / "tiny-llama-cpu-sglang" / "variants" / VARIANT / "conc2" / "status.json"
    wait_for_phase(proc, status_path, phases, within_s=600)
    if sig == signal.SIGTERM:
        deadline = time.monotonic() + 120   # SGLang's scheduler and detokenizer exist before we stop it
        while not sglang_processes() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert sglang_processes(), "SGLang started no scheduler"
    os.kill(proc.pid, sig)
    assert proc.wait(timeout=120) == code
    status = _read(status_path)
    assert (status["state"], status["reason"]) == ("cancelled", f"interrupted: {sig.name}")
    assert group_gone(status["server_pid"], within_s=20)
    assert no_sglang_left() == []


def test_a_killed_scheduler_ends_the_point_as_a_server_crash(sglang_tier: Tier, tmp_path: Path) -> None:
    proc = start_point(sglang_tier, tmp_path, *FAST)
    status_path = tmp_path / "tiny-llama-cpu-sglang" / "variants" / VARIANT / "conc2" / "status.json"
    status = wait_for_phase(proc, status_path, ("profiling",), within_s=600)
    schedulers = [pid for pid, title in sglang_processes() if title.startswith("sglang::scheduler")
                  and os.getpgid(pid) == status["server_pid"]]
    assert len(schedulers) == 1
    os.kill(schedulers[0], signal.SIGKILL)
    assert proc.wait(timeout=300) == 1
    status = _read(status_path)
    # named: seen dead here (sglang::scheduler_TP0), or by SGLang's own watchdog (scheduler_0) when that took the
    # server down before the harness looked
    assert status["state"] == "failed" and status["reason"].startswith("server_crashed: "), status
    assert re.search(r"sglang::scheduler|SGLang's scheduler_0", status["reason"]), status
    assert f"(pid {schedulers[0]})" in status["reason"], status
    assert group_gone(status["server_pid"], within_s=20)
    assert no_sglang_left() == []


def test_eval_against_real_sglang_scores_near_zero_and_exits_3(sglang_tier: Tier, tmp_path: Path) -> None:
    # a random-weight model cannot solve GSM8K: the eval completes, scores below the threshold, exits 3
    r = harness(sglang_tier.env(), "eval", str(RECIPE), "--limit", "5", "--out", str(tmp_path), timeout=900)
    assert r.returncode == 3, r.stdout[-3000:] + r.stderr[-3000:]
    (result_path,) = tmp_path.rglob("eval_result.json")
    result = _read(result_path)
    assert result["state"] == "completed" and result["passed"] is False and result["score"] <= 0.2
    assert "[partial: --limit 5]" in r.stdout and "FAIL" in r.stdout
    assert no_sglang_left() == []


def test_real_sglang_behind_the_real_router_serves_a_point(sglang_tier: Tier, tmp_path: Path) -> None:
    """The tiny recipe as a deployment: one real SGLang worker behind sglang-router (both from the tier's venv, as
    an lmsysorg/sglang image has them). The router registers the real worker (its /health, /server_info,
    /model_info), AIPerf streams through it, and the row names the router's version as installed there."""
    import yaml

    raw = yaml.safe_load(RECIPE.read_text())
    raw["model"]["path"] = str(sglang_tier.model)
    raw["client"]["traces"] = str(RECIPE.parent / raw["client"]["traces"])
    raw["points"] = {"c2": {}}
    raw["deployment"] = {"aggregated": {"workers": 1}, "ports": {"base": 31500},
                         "router": {"kind": "sglang-router", "policy": "round_robin"}}
    recipe = tmp_path / "tiny-llama-cpu-router.yaml"
    recipe.write_text(yaml.safe_dump(raw, sort_keys=False))
    r = harness(sglang_tier.env(), "run", str(recipe), "--point", "c2", "--out", str(tmp_path / "runs"), *SWEEP,
                timeout=900)
    assert r.returncode in (0, 3), r.stdout[-3000:] + r.stderr[-3000:]
    pdir = next((tmp_path / "runs").rglob("point_result.json")).parent
    record = _read(pdir / "point_result.json")
    assert record["state"] == "completed" and record["engine"] == "sglang", record["state_reason"]
    assert "The server is fired up and ready to roll!" in (pdir / "server_aggregated_w0.log").read_text()
    assert "--worker-urls http://127.0.0.1:31600" in (pdir / "server_command.txt").read_text()
    row = _read(pdir / record["row"])
    assert row["is_multinode"] is False and row["hw"] == "cpu" and row["num_requests_successful"] > 0
    assert row["router"] == {"name": "sglang-router", "version": "0.3.2"}   # the tier venv's pip freeze
    fp = _read(pdir / "fingerprint_aggregated_w0.json")
    assert fp["server"]["server_info"]["version"] == "0.5.23"
    assert record["deployment"]["affinity"]["aggregated"]["reason"].startswith("stickiness_unmeasured")
    assert no_sglang_left() == []
    assert live_routers() == []

