"""The point runner against the simulator with real AIPerf: fidelity, accounting, failures, signals."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from harness.point.record.stability import stability_metrics
from harness.point.run import EXIT_FAILED, EXIT_INVALID, PointOptions, run_point
from tests.inferencex_contract import check_contract

from .conftest import DATA, group_gone, sim_plan

pytestmark = pytest.mark.slow


def _files(pdir: Path) -> set[str]:
    return {p.name for p in pdir.iterdir()}


def test_point_matches_the_simulator_truth_and_counts_requests_cancelled_at_the_cutoff(tmp_path):
    truth = tmp_path / "truth.jsonl"
    # No grace period: whatever is in flight at the end of the window is cancelled by AIPerf.
    # Slow decode steps keep requests in flight at the end of the window.
    plan = sim_plan(["--sim-truth-log", str(truth), "--sim-profile", str(DATA / "slow-decode.json")],
                    ["client.grace_s=0", "client.duration_s=25"])
    outcome = run_point(plan, PointOptions(out_dir=tmp_path / "runs", ready_timeout_s=60))
    assert outcome.state == "completed", outcome.reason
    pdir = outcome.point_dir
    assert {"bmk_agentic_it-sim_conc4.json", "status.json", "server.log", "server_command.txt",
            "client_command.txt", "fingerprint_agg_w0.json", "harness.log"} <= _files(pdir)
    assert {"profile_export_aiperf.json", "profile_export.jsonl"} <= _files(pdir / "aiperf")
    # the server's last lines are the harness's own stop, said so
    last = (pdir / "server.log").read_text().splitlines()[-1]
    assert last.startswith("[harness] the harness stopped the server when the point ended") and "not a failure" in last
    assert "profile_export_raw.jsonl" not in _files(pdir / "aiperf")
    status = json.loads((pdir / "status.json").read_text())
    assert status["state"] == "completed" and status["schema_version"] == 1
    assert list(status["phases"]) == ["launching", "loading", "ready", "warmup", "profiling", "draining",
                                      "collecting"]
    # srt-slurm's worker fingerprint, captured by the simulator's own interpreter through the local launcher
    fp = json.loads((pdir / "fingerprint_agg_w0.json").read_text())
    assert list(fp)[:12] == ["hostname", "timestamp", "arch", "os", "cpu", "gpu", "python_version", "cuda_version",
                             "nccl_version", "frameworks", "model", "pip_packages"]
    assert fp["capture"]["python_executable"] == sys.executable and fp["capture"]["exit_code"] == 0
    assert fp["launcher"] == "local" and fp["engine"] == "sim" and sys.executable in fp["pip_packages"]
    assert fp["server"]["server_info"]["version"] and "commit" in fp["harness"]
    assert "fingerprint_capture.py sha256=" in (pdir / "fingerprint_command.txt").read_text()

    server = {}
    for line in truth.read_text().splitlines():
        t = json.loads(line)
        server[t["request_id"]] = t
    records = [json.loads(x) for x in (pdir / "aiperf" / "profile_export.jsonl").read_text().splitlines()]
    # The exact count of requests AIPerf dropped: the ones the server saw from the client (every request
    # after the harness's readiness probe) that appear in no client record. A request whose last token
    # the server wrote just before the client cancelled it is logged "ok" server-side, so counting the
    # server's disconnects alone would race with the cutoff.
    client_start = min(r["metadata"]["request_start_ns"] for r in records)
    recorded = {r["metadata"]["x_request_id"] for r in records}
    vanished = [t for t in server.values() if t["arrival_ns"] >= client_start and t["request_id"] not in recorded]
    disconnected = len(vanished)
    ttft_err, e2el_err = [], []
    for r in records:
        if r.get("error") or not r.get("metrics"):
            continue
        t = server[r["metadata"]["x_request_id"]]
        assert t["status"] == "ok"
        assert r["metrics"]["output_sequence_length"]["value"] == t["completion_tokens"]
        ttft_err.append(r["metrics"]["time_to_first_token"]["value"] / 1e3
                        - (t["first_token_sent_ns"] - t["arrival_ns"]) / 1e9)
        e2el_err.append(r["metrics"]["request_latency"]["value"] / 1e3
                        - (t["last_token_sent_ns"] - t["arrival_ns"]) / 1e9)
    ttft_ms, e2el_ms = np.abs(ttft_err) * 1e3, np.abs(e2el_err) * 1e3
    print(f"\nfidelity over {len(ttft_ms)} requests (client - server truth, ms): "
          f"TTFT p50 {np.percentile(ttft_ms, 50):.2f} p90 {np.percentile(ttft_ms, 90):.2f} "
          f"p99 {np.percentile(ttft_ms, 99):.2f}; E2EL p50 {np.percentile(e2el_ms, 50):.2f} "
          f"p90 {np.percentile(e2el_ms, 90):.2f} p99 {np.percentile(e2el_ms, 99):.2f}")
    assert len(ttft_ms) >= 10
    # a bound on the method (units, clocks, which token), not on speed: a loaded 2-core machine adds ms of
    # scheduling delay between server and client; the figures above are the measurement
    assert np.percentile(ttft_ms, 50) < 20.0 and np.percentile(e2el_ms, 50) < 20.0

    result = outcome.result
    acc = result["request_accounting"]
    print(f"cancelled at cutoff: harness {acc['cancelled_at_cutoff']}, server saw {disconnected} client requests "
          f"that no client record holds ({sum(t['status'] == 'client_disconnected' for t in vanished)} of them "
          "as disconnects)")
    assert acc["cancelled_at_cutoff"] == disconnected > 0
    assert result["num_requests_total"] == acc["records_profiled"] + disconnected
    assert result["engine"] == "sim" and result["simulated"] is True
    # AIPerf's own check, read from its metadata: a smoke recipe runs under --unsafe-override, never publishable
    assert "--unsafe-override" in (pdir / "client_command.txt").read_text()
    assert result["aiperf_submission"]["scenario"] == "agentx"
    assert (result["aiperf_submission"]["submission_valid"],
            result["aiperf_submission"]["submission_invalid_reasons"]) == (False, ["unsafe_override"])
    assert result["publishable"]["publishable"] is False
    assert result["publishable"]["label"] == "unofficial (AIPerf: unsafe_override)"
    assert result["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] > 0
    # InferenceX's stability diagnostics over the same records: a 25 s point has no 600 s window, says so
    written = json.loads((pdir / "point_result.json").read_text())
    assert written["stability"] == stability_metrics(records, 25) == result["stability"]
    assert (written["stability"]["expected_window_count"], written["stability"]["reason"]) == \
        (0, "duration_shorter_than_window")
    assert written["stability"]["root_trajectory_count"] >= 1
    assert group_gone(status["server_pid"]) and group_gone(status["client_pid"])
    row = json.loads((pdir / "bmk_agentic_it-sim_conc4.json").read_text())
    check_contract(row)
    server = row["server_metrics"]
    assert (server["adapter"], server["present"]) == ("sglang", True)  # from AIPerf's server_metrics_export.json
    assert (pdir / "aiperf" / "server_metrics_export.json").is_file()
    pool = server["kv_cache"]["gpu_total_tokens"]
    assert row["kv_cache_pool_tokens"] == pool and f"max_total_num_tokens={pool}," in (pdir / "server.log").read_text()
    assert server["tokens"]["prompt_total"] > 0 and 0 < server["cache"]["gpu_cache_hit_rate"] < 1


def test_dp_attention_and_dcp_render_run_and_publish(tmp_path):
    from harness.tokenizer import DEMO_TOKENIZER_DIR

    plan = sim_plan([], ["client.duration_s=8", "parallelism.tp=2", "hardware.gpus_per_node=2",
                         "parallelism.dp_attention=2", "parallelism.dcp=2", f"client.tokenizer={DEMO_TOKENIZER_DIR}"])
    argv = " ".join(plan.server.argv)
    assert "--tp-size 2 --attn-dp-size 2 --dcp-size 2" in argv  # SGLang 0.5.23's spelling
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60))
    assert outcome.state == "completed", outcome.reason
    row = json.loads((outcome.point_dir / "bmk_agentic_it-sim_conc4.json").read_text())
    check_contract(row)
    assert (row["tp"], row["dp_attention"], row["dcp_size"], row["pcp_size"], row["num_gpus"]) == (
        2, "true", 2, 1, 2)
    assert "] max_total_num_tokens=" in (outcome.point_dir / "server.log").read_text().split("DP0 TP0", 1)[1]
    # the record names the tokenizer AIPerf built the prompts with, and AIPerf was given exactly that one
    used = json.loads((outcome.point_dir / "point_result.json").read_text())["client"]["tokenizer"]
    assert used == {"source": str(DEMO_TOKENIZER_DIR), "name": "local/demo", "kind": "model"}
    assert "--tokenizer local/demo" in (outcome.point_dir / "client_command.txt").read_text()
    # the launch token the readiness check found echoed by the server, and the fingerprint recorded
    token = re.search(r"--weight-version (harness-launch-[0-9a-f]{16})",
                      (outcome.point_dir / "server_command.txt").read_text())
    fp = json.loads((outcome.point_dir / "fingerprint_agg_w0.json").read_text())
    assert token is not None and fp["server"]["server_info"]["weight_version"] == token.group(1)
    # our record and the published row name one arm (reports and compare pair a run with its export)
    from harness.report.results.load import parse_result
    from harness.report.results.points import load_results

    (record,) = load_results([outcome.point_dir])
    published = parse_result(row, outcome.point_dir / "bmk_agentic_it-sim_conc4.json")
    assert record.config_key == "it-sim" and published.config_key is None
    assert record.arm == published.arm and (record.arm.dp_attention, record.arm.spec_decoding) == ("true", "none")


def test_server_crash_mid_run_fails_the_point_and_keeps_artifacts(tmp_path):
    plan = sim_plan(["--sim-crash-after", "8"], ["client.duration_s=40"])
    t0 = time.monotonic()
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60))
    assert time.monotonic() - t0 < 60
    assert outcome.state == "failed" and outcome.exit_status == EXIT_FAILED
    assert outcome.reason.startswith("server_crashed: the server exited with status 1")
    status = json.loads((outcome.point_dir / "status.json").read_text())
    assert status["state"] == "failed" and status["reason"].startswith("server_crashed")
    assert {"server.log", "client.log", "server_command.txt", "fingerprint_agg_w0.json"} <= _files(outcome.point_dir)
    assert group_gone(status["server_pid"]) and group_gone(status["client_pid"])
    assert "[harness] the harness stopped the server" not in (outcome.point_dir / "server.log").read_text()


def test_server_that_never_becomes_ready_fails_within_the_budget(tmp_path):
    plan = sim_plan(["--sim-startup-seconds", "600"])
    t0 = time.monotonic()
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=3))
    assert time.monotonic() - t0 < 30
    assert outcome.state == "failed" and outcome.exit_status == EXIT_FAILED
    assert outcome.reason.startswith("ready_timeout")
    status = json.loads((outcome.point_dir / "status.json").read_text())
    assert status["phase"] == "collecting" and "loading" in status["phases"]
    assert group_gone(status["server_pid"])


def test_burst_of_server_errors_completes_but_is_invalid(tmp_path):
    """Errors once profiling runs (the agentx preset aborts the run on any warm-up failure instead): the seeded
    replay's warm-up sends 13 requests, so errors start after 20 whatever the machine's speed; the client stops live
    above its 10 % threshold, and the point is invalid by InferenceX's error-rate gate and the client's cancelled
    run."""
    plan = sim_plan(["--sim-error-rate", "0.25", "--sim-errors-after-requests", "20"], ["client.duration_s=40"])
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60))
    assert outcome.state == "completed" and outcome.exit_status == EXIT_INVALID
    codes = [r["code"] for r in outcome.result["validity"]["reasons"]]
    assert "error_ratio" in codes
    acc = outcome.result["request_accounting"]
    assert acc["errors"] > 0 and sum(acc["error_categories"].values()) == acc["errors"]
    check_contract(json.loads((outcome.point_dir / "bmk_agentic_it-sim_conc4.json").read_text()))


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_to_harness_run_cancels_the_point_cleanly(tmp_path, sig, code):
    out = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(DATA / "sim-small.yaml"), "--point", "c4",
                             "--duration", "120", "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    status_path = out / "it-sim" / "variants" / "duration_s=120" / "conc4" / "status.json"  # --duration: a variant
    deadline = time.monotonic() + 180  # start-up includes AIPerf's resolver on the point; a loaded machine is slow
    while time.monotonic() < deadline:
        if status_path.exists() and json.loads(status_path.read_text()).get("phase") == "profiling":
            break
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("the point never reached profiling")
    time.sleep(3)
    t0 = time.monotonic()
    os.kill(proc.pid, sig)
    rc = proc.wait(timeout=60)
    assert time.monotonic() - t0 < 60
    assert rc == code, proc.stdout.read().decode() if proc.stdout else ""
    status = json.loads(status_path.read_text())
    assert status["state"] == "cancelled" and status["reason"] == f"interrupted: {sig.name}"
    assert group_gone(status["server_pid"]) and group_gone(status["client_pid"])
    assert (status_path.parent / "server.log").exists()


def test_strict_power_fails_the_point_after_writing_every_audit_file(tmp_path):
    from harness.recipe.thresholds import Thresholds

    plan = sim_plan([], ["client.duration_s=10"])
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60,
                                           thresholds=Thresholds(require_power=True)))
    assert outcome.state == "failed" and outcome.exit_status == EXIT_FAILED
    assert outcome.reason.startswith("power_invalid: ")   # the simulator uses no GPU
    files = _files(outcome.point_dir)
    assert {"power.csv", "power_validation.json", "point_result.json"} <= files
    # a failed point leaves nothing that reads as a result (InferenceX's collectors glob bmk_agentic_*.json)
    assert not [f for f in files if f.startswith("bmk_agentic_")] and outcome.result["row"] is None
    codes = [r["code"] for r in outcome.result["validity"]["reasons"]]
    assert codes[0] == "point_failed" and "power_invalid" in codes
    assert json.loads((outcome.point_dir / "status.json").read_text())["reason"] == outcome.reason
