"""`harness eval` end to end: the simulator answering GSM8K over HTTP, real lm-eval as a subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.evals.row import EvalRow

from .conftest import group_gone, wait_until_evaluating

ROOT = Path(__file__).parents[2]
QUICKSTART = ROOT / "recipes" / "quickstart-sim.yaml"
H200 = ROOT / "recipes" / "musespark-fp4-h200-sglang-agentic-dflash.yaml"


def harness_eval(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "eval", *args], capture_output=True, text=True,
                          timeout=timeout, start_new_session=True)


def _read(path: Path) -> dict:
    return json.loads(path.read_text())


def test_eval_of_a_speculative_recipe_passes_and_writes_every_artifact(tmp_path):
    r = harness_eval(str(H200), "--set", "engine=sim", "--limit", "8", "--out", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    edir = tmp_path / "musespark-fp4-h200-sglang-agentic-dflash" / "eval-conc48"   # default: highest concurrency
    for name in ("meta_env.json", "eval_row_gsm8k.json", "eval_result.json", "status.json", "server.log",
                 "server_command.txt", "client_command.txt", "fingerprint_agg_w0.json", "lm_eval.log",
                 "task_gsm8k.yaml", "plan.json", "harness.log"):
        assert (edir / name).exists(), name
    row = _read(edir / "eval_row_gsm8k.json")
    EvalRow.model_validate(row)
    # the simulator stands in for the H200s: the row's hw says "SIM", as a simulated point's row does
    assert (row["score"], row["n_eff"], row["conc"], row["hw"], row["spec_decoding"]) == (1.0, 8, 48, "SIM", "dflash")
    assert (row["tp"], row["ep"], row["model_prefix"]) == (8, 8, "musespark")
    result = _read(edir / "eval_result.json")
    assert result["passed"] is True and result["simulated"] is True and result["min_score"] == 0.90
    samples = edir / result["lm_eval_samples"]
    logged = [json.loads(line) for line in samples.read_text().splitlines()]
    assert {s["doc_id"] for s in logged} == set(range(8)) and {s["filter"] for s in logged} == \
        {"strict-match", "flexible-extract"}
    assert (edir / result["lm_eval_results"]).exists()
    server_cmd = (edir / "server_command.txt").read_text()
    assert "--speculative-algorithm DFLASH" in server_cmd and "SGLANG_SIMULATE_ACC" not in server_cmd
    client_cmd = (edir / "client_command.txt").read_text()
    assert "num_concurrent=48" in client_cmd and "HF_DATASETS_OFFLINE=1" in client_cmd
    status = _read(edir / "status.json")
    assert status["state"] == "completed" and status["exit_status"] == 0 and "evaluating" in status["phases"]
    assert "PARTIAL" in r.stdout and "(n=8) [partial: --limit 8] (simulated)" in r.stdout


def test_below_threshold_exits_3_with_score_and_threshold(tmp_path):
    r = harness_eval(str(QUICKSTART), "--limit", "6", "--out", str(tmp_path),
                     "--set", "sim_args.sim-eval-accuracy=0.0")
    assert r.returncode == 3, r.stdout + r.stderr
    assert "em_strict = 0.0000" in r.stdout and "threshold 0.90 (default): FAIL" in r.stdout
    result = _read(tmp_path / "quickstart-sim" / "eval-conc8" / "eval_result.json")
    assert result["state"] == "completed" and result["passed"] is False and result["score"] == 0.0


@pytest.mark.slow
def test_200_problems_score_within_the_binomial_band_of_p(tmp_path):
    p, n = 0.8, 200
    # the H200 recipe's highest point on the simulator: lm-eval keeps 48 problems in flight, not the quickstart's 8
    r = harness_eval(str(H200), "--set", "engine=sim", "--limit", str(n), "--out", str(tmp_path),
                     "--set", f"sim_args.sim-eval-accuracy={p}", timeout=600)
    assert r.returncode in (0, 3), r.stdout + r.stderr
    row = _read(tmp_path / "musespark-fp4-h200-sglang-agentic-dflash" / "eval-conc48" / "eval_row_gsm8k.json")
    assert row["n_eff"] == n and row["infrastructure_success"] is True
    band = 3 * (p * (1 - p) / n) ** 0.5   # 3 sigma: 0.085
    assert abs(row["em_strict"] - p) <= band, row
    assert row["em_flexible"] == row["em_strict"]   # every simulated answer ends in its '#### <number>' line


def test_server_dying_mid_eval_exits_1_keeps_artifacts_and_leaves_no_process(tmp_path):
    r = harness_eval(str(QUICKSTART), "--limit", "400", "--out", str(tmp_path),
                     "--set", "sim_args.sim-crash-after=2")
    assert r.returncode == 1, r.stdout + r.stderr
    edir = tmp_path / "quickstart-sim" / "eval-conc8"
    status = _read(edir / "status.json")
    assert status["state"] == "failed" and status["reason"].startswith("server_crashed"), status
    assert group_gone(status["server_pid"]) and group_gone(status["client_pid"])
    for name in ("server.log", "lm_eval.log", "meta_env.json", "fingerprint_agg_w0.json", "eval_result.json"):
        assert (edir / name).exists(), name
    row = _read(edir / "eval_row_gsm8k.json")
    EvalRow.model_validate(row)
    assert row["infrastructure_success"] is False and row["integration_error"]["type"] == "server_crashed"
    assert row["score"] is None and "simulated crash" in (edir / "server.log").read_text()


def test_sigterm_cancels_the_eval_cleanly(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "harness", "eval", str(QUICKSTART), "--limit", "400",
                             "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    status_path = tmp_path / "quickstart-sim" / "eval-conc8" / "status.json"
    wait_until_evaluating(proc, status_path, within_s=60)
    time.sleep(2)
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    status = _read(status_path)
    assert status["state"] == "cancelled" and status["reason"] == "interrupted: SIGTERM"
    assert group_gone(status["server_pid"]) and group_gone(status["client_pid"])


def test_bad_input_exits_2(tmp_path):
    r = harness_eval(str(QUICKSTART), "--limit", "0", "--out", str(tmp_path))
    assert r.returncode == 2 and "--limit" in r.stderr
    r = harness_eval(str(QUICKSTART), "--point", "c99", "--out", str(tmp_path))
    assert r.returncode == 2 and "c99" in r.stderr
    assert not (tmp_path / "quickstart-sim").exists()


@pytest.mark.slow
def test_sweep_with_eval_runs_the_eval_after_the_points_and_reports_its_gate(tmp_path):
    # from another working directory with a relative --out (lm-eval itself runs in the task's directory)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    short = ["--duration", "5", "--set", "client.warmup_requests_per_lane=1"]   # the eval is checked, not the point
    r = subprocess.run([sys.executable, "-m", "harness", "sweep", str(QUICKSTART), "--points", "c4", *short,
                        "--out", "rel-sweep", "--with-eval", "--limit", "6"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, start_new_session=True)
    assert r.returncode in (0, 3), r.stdout + r.stderr
    assert "[eval] c4 gsm8k: starting" in r.stdout
    assert "accuracy eval: PARTIAL at c4 gsm8k em_strict 1.0000" in r.stdout and "[simulated]" in r.stdout
    curve = tmp_path / "rel-sweep" / "quickstart-sim"
    assert (curve / "eval-conc4" / "eval_row_gsm8k.json").exists()
    report = json.loads((curve / "report" / "report.json").read_text())
    assert report["evals"]["quickstart-sim"]["gate"] == "PARTIAL"   # --limit 6: what check judges too
    assert "## Accuracy evals" in (curve / "report" / "report.md").read_text()
    assert "Accuracy evals" in (curve / "report" / "report.html").read_text()
    again = subprocess.run([sys.executable, "-m", "harness", "sweep", str(QUICKSTART), "--points", "c4", *short,
                            "--out", "rel-sweep", "--with-eval", "--limit", "6", "--no-report"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "[eval] c4 gsm8k: already completed" in again.stdout


def test_lm_eval_crash_exits_1_with_its_error(tmp_path):
    """Every prompt is longer than the served context: the server answers 400, lm-eval gives up after its
    retries and exits non-zero."""
    r = harness_eval(str(QUICKSTART), "--limit", "2", "--out", str(tmp_path), "--set", "args.context-length=600")
    assert r.returncode == 1, r.stdout + r.stderr
    edir = tmp_path / "quickstart-sim" / "eval-conc8"
    status = _read(edir / "status.json")
    assert status["state"] == "failed" and status["reason"].startswith("client_failed: lm-eval exited 1")
    assert status["client_exit_code"] == 1 and group_gone(status["server_pid"]) and group_gone(status["client_pid"])
    assert "longer than the model's context length" in (edir / "lm_eval.log").read_text()
    row = _read(edir / "eval_row_gsm8k.json")
    assert row["infrastructure_success"] is False and row["integration_error"]["type"] == "client_failed"


def test_a_frozen_lm_eval_ends_the_eval_client_stalled_and_its_group_torn_down(tmp_path):
    """SIGSTOP of lm-eval's whole process group soon after it starts: no new answer, no log or output growth
    and no CPU time for the stall bound (8 s) ends the eval `client_stalled`, long before --eval-timeout."""
    proc = subprocess.Popen([sys.executable, "-m", "harness", "eval", str(QUICKSTART), "--limit", "400",
                             "--stall-timeout", "8", "--out", str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    status_path = tmp_path / "quickstart-sim" / "eval-conc8" / "status.json"
    wait_until_evaluating(proc, status_path, within_s=120)
    client_pid = None
    for _ in range(200):                 # bounded by the eval's own start of lm-eval, not by the clock
        client_pid = _read(status_path).get("client_pid")
        if client_pid:
            break
        time.sleep(0.1)
    assert client_pid, "lm-eval never started"
    time.sleep(1)
    os.killpg(client_pid, signal.SIGSTOP)
    try:
        code = proc.wait(timeout=300)    # the eval's own budget (--eval-timeout) is 6 h
    finally:
        for pgid in ((proc.pid, client_pid) if proc.poll() is None else ()):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
    out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    assert code == 1, out
    status = _read(status_path)
    assert status["state"] == "failed" and status["client_pid"] == client_pid, status
    assert re.match(r"client_stalled: no new lm-eval answer, no client log output and no CPU time in the client's "
                    r"\d+ processes for \d+ s \(bound 8 s; (\d+) of \1 stopped \(SIGSTOP\); \d+ lm-eval answers\)$",
                    status["reason"]), status["reason"]
    assert group_gone(status["server_pid"]) and group_gone(client_pid)
    result = _read(status_path.parent / "eval_result.json")
    assert result["state"] == "failed" and result["state_reason"] == status["reason"] and result["passed"] is None
    row = _read(status_path.parent / "eval_row_gsm8k.json")
    assert row["infrastructure_success"] is False and row["integration_error"]["type"] == "client_stalled"
