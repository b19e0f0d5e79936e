"""A prefill/decode deployment end to end on this host: the simulator's two roles behind the real sglang-router,
real AIPerf through the router, InferenceX's multi-node row, one deployment reused across two points, a worker
killed mid-run, and no process left behind."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.inferencex_contract import check_contract

from .conftest import live_routers, port_listeners

pytest.importorskip("sglang_router", reason="sglang-router is a dev extra (pip install -e .[dev])")
pytestmark = pytest.mark.slow

RECIPE = Path(__file__).parents[1] / "fixtures" / "recipes" / "pd-local-sim.yaml"
API_KEY = "sk-deployment-0123456789"
PORTS = (32000, 32001, 32100, 32200)   # router HTTP and metrics, the two workers' HTTP (ports.base 32000)


def deployment_processes() -> list[str]:
    """Processes left of this recipe's deployment: listeners on its ports, and any router (routers retitle
    themselves, so their command lines name no port)."""
    return [*port_listeners(PORTS), *(f"router pid {pid}" for pid in live_routers())]


def harness(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "harness", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kwargs)  # type: ignore[call-overload]


def test_one_deployment_serves_two_points_and_publishes_multinode_rows(tmp_path: Path) -> None:
    proc = harness("sweep", str(RECIPE), "--out", str(tmp_path), "--reuse-deployment")
    out, _ = proc.communicate(timeout=400)
    assert proc.returncode in (0, 3), out
    curve = tmp_path / "pd-local-sim"
    records = {c: json.loads((curve / f"conc{c}" / "point_result.json").read_text()) for c in (2, 4)}
    for conc, record in records.items():
        assert record["state"] == "completed", record["state_reason"]
        assert record["deployment"]["shape"] == "1p1d tp1/tp1" and record["num_gpus"] == 2
        assert record["fingerprint"]["path"] == "fingerprint_prefill_w0.json"   # the first worker's, summarized
        row = json.loads((curve / f"conc{conc}" / record["row"]).read_text())
        check_contract(row)   # InferenceX's AgentXMultinodeRow
        assert row["is_multinode"] is True and row["disagg"] is True and row["num_prefill_gpu"] == 1
        assert row["router"] == {"name": "sglang-router", "version": "0.3.2"} and "pp" not in row
        assert row["num_requests_successful"] > 0
        # a fingerprint per worker, in every point's directory
        assert {"fingerprint_prefill_w0.json", "fingerprint_decode_w0.json"} <= {p.name for p in
                                                                                  (curve / f"conc{conc}").iterdir()}
    first, second = records[2]["deployment"]["run"], records[4]["deployment"]["run"]
    assert first["reused"] is False and second["reused"] is True
    assert first["deployment_id"] == second["deployment_id"] and second["started_in"] == str(curve / "conc2")
    assert second["idle_wait"]["polls"] >= 3
    # each point's own cache-bust marker: AIPerf digests it over its per-invocation benchmark id
    assert first["aiperf_benchmark_id"] and first["aiperf_benchmark_id"] != second["aiperf_benchmark_id"]
    # the deployment's logs stay where it was started; the router and both workers were stopped at the end
    for log in ("router.log", "server_prefill_w0.log", "server_decode_w0.log"):
        assert "[harness] the harness stopped the server" in (curve / "conc2" / log).read_text()
    assert not (curve / "conc4" / "router.log").exists()
    assert deployment_processes() == []
    # the curve is the InferenceX series; the deployment's shape is an attribute of its points
    md = (curve / "report" / "report.md").read_text()
    assert "### pd/agentic-coding/sim_sglang/bf16 · pd-local-sim (SIMULATED)" in md
    assert "topology disagg 1p1d tp1/tp1" in md
    assert "== pd/agentic-coding/sim_sglang/bf16 · pd-local-sim  SIMULATED" in out


def test_a_worker_killed_mid_run_ends_the_point_and_nothing_is_left(tmp_path: Path) -> None:
    proc = harness("run", str(RECIPE), "--point", "c2", "--out", str(tmp_path), "--set", "client.duration_s=30")
    # killed once AIPerf runs (its warmup): the deployment is ready and serving
    deadline = time.monotonic() + 180
    pids: dict[str, int] = {}
    status = tmp_path / "none"
    while time.monotonic() < deadline:
        status = next(tmp_path.rglob("status.json"), status)   # under variants/: the window is changed
        data = json.loads(status.read_text()) if status.exists() else {}
        if "warmup" in data.get("phases", {}):
            pids = data["server_pids"]
            break
        time.sleep(0.5)
    assert pids, "the point never reached its warmup"
    os.killpg(pids["decode_w0"], signal.SIGKILL)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1, out
    final = json.loads(status.read_text())
    assert final["state"] == "failed"
    assert final["reason"].startswith("server_crashed: decode_w0 on node 1 exited with status -9"), final["reason"]
    assert deployment_processes() == []


def test_sessions_stay_on_their_dp_rank_behind_smg_consistent_hashing(tmp_path: Path) -> None:
    """Single-node DP attention behind smg --dp-aware, as InferenceX's DSv4 AgentX launcher runs it: AIPerf sends
    its correlation id as X-SMG-Routing-Key, every session's turns land on one rank, several ranks serve. The
    workers check an API key: the router sends it to them (it reads their /server_info), and no file holds it."""
    pytest.importorskip("smg", reason="smg is a dev extra (pip install -e .[dev])")
    recipe = Path(__file__).parents[2] / "recipes" / "examples" / "dpa-smg-affinity-sim.yaml"
    proc = harness("sweep", str(recipe), "--out", str(tmp_path), "--no-report", "--duration", "10",
                   "--set", "client.warmup_requests_per_lane=2", "--set", f"args.api-key={API_KEY}")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode in (0, 3), out
    pdir = next(tmp_path.rglob("point_result.json")).parent
    record = json.loads((pdir / "point_result.json").read_text())
    assert record["state"] == "completed", record["state_reason"]
    assert "AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID=true" in (pdir / "client_command.txt").read_text()
    affinity = record["deployment"]["affinity"]
    assert affinity["aggregated"]["sticky_share"] == 1.0 and affinity["aggregated"]["targets"] > 1
    assert affinity["aggregated"]["sessions"] >= 2 and 0 < affinity["prefix_cache_hit_rate"] <= 1
    row = json.loads((pdir / record["row"]).read_text())
    check_contract(row)   # one worker on one node: a single-node row, with the router's metadata
    assert row["is_multinode"] is False and row["router"] == {"name": "smg", "version": "1.13.0"}
    assert "--api-key '<redacted>'" in (pdir / "server_command.txt").read_text().split("# router")[1]
    assert [p for p in tmp_path.rglob("*") if p.is_file() and API_KEY.encode() in p.read_bytes()] == []
    assert live_routers() == []
    assert record["deployment"]["shape"] == "1x dep4" and row["dp_attention"] == "true"


def test_a_deployment_never_ready_fails_the_point_naming_the_worker_and_nothing_is_left(tmp_path: Path,
                                                                                          capsys) -> None:
    from harness.point.run import PointOptions, run_point
    from harness.recipe.points import load_plans

    _, (plan, _) = load_plans(RECIPE, None, ["sim_args.sim-startup-seconds=120"])
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=8, progress_every_s=1))
    assert outcome.state == "failed" and outcome.exit_status == 1
    assert outcome.reason and outcome.reason.startswith("ready_timeout: prefill_w0 /health not 200 after 8 s")
    status = json.loads((outcome.point_dir / "status.json").read_text())
    assert "profiling" not in status["phases"]
    # progress while it loads names the worker awaited and its log's last line
    assert "c2 server loading " in capsys.readouterr().out
    assert "(ready budget 8 s): prefill_w0: " in (outcome.point_dir / "harness.log").read_text()
    assert deployment_processes() == []


def test_a_worker_that_exits_while_starting_is_named_with_its_last_log_line(tmp_path: Path) -> None:
    from harness.point.run import PointOptions, run_point
    from harness.recipe.points import load_plans

    _, (plan, _) = load_plans(RECIPE, None, ["sim_args.sim-crash-after=0"])   # both workers exit once ready
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60))
    assert outcome.state == "failed" and outcome.reason is not None
    assert re.fullmatch(r"server_exited: (prefill|decode)_w0 exited with status 1 before the deployment was "
                        r"ready; server_\1_w0\.log: \[sim\] simulated crash \(--sim-crash-after\)", outcome.reason), \
        outcome.reason
    assert deployment_processes() == []
