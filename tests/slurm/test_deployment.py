"""A 4-node prefill/decode deployment on the local Slurm (`SLURM_LOCAL_NODES=4`): one prefill worker spanning
two nodes and two one-node decode workers. `harness submit --reuse-deployment` runs both points in ONE 4-node
task, one srun step per worker node and the router; a second submission cancelled mid-run, and a third stopped
by its walltime margin while serving, end cancelled with no process and no step left on any node.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import live_routers
from tests.slurm.conftest import LOCAL_CI, ROOT, harness, read_json, status, wait_for

RECIPE = ROOT / "tests" / "fixtures" / "recipes" / "disagg-sim-4node.yaml"
PORTS = tuple(str(p) for p in (31000, 31100, 31102, 31200, 31300))   # router, prefill (HTTP, rendezvous), decode
NODES = ("n1", "n2", "n3", "n4")


@pytest.fixture(scope="module")
def four_nodes(slurm: None) -> None:
    names = subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True, check=False).stdout
    if len(set(names.split())) < len(NODES):
        pytest.skip("needs the 4-node local Slurm: SLURM_LOCAL_NODES=4 bash tools/slurm-local-setup.sh start")


def _deployment_processes() -> list[str]:
    """Command lines of any simulator worker of this test's deployment (by its ports), and any router (routers
    retitle themselves: their command lines name no port)."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0") if proc.name.isdigit() else []
        except OSError:
            continue
        line = " ".join(cmd)
        if ("harness.sim" in line or "sglang_router" in line) and any(f" {port}" in line or f":{port}" in line
                                                                      for port in PORTS):
            out.append(line)
    return [*out, *(f"router pid {pid}" for pid in live_routers())]


def _steps(job: str) -> str:
    return subprocess.run(["squeue", "-h", "-s", "-j", job], capture_output=True, text=True, check=False).stdout


def _submit(env: dict[str, str], out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return harness(env, "submit", str(RECIPE), "--cluster", str(LOCAL_CI), "--out", str(out), "--reuse-deployment",
                   "--unofficial", *extra, timeout=420)


def test_reused_deployment_runs_every_point_in_one_four_node_task(four_nodes: None, harness_env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    proc = _submit(harness_env, tmp_path, "--wait", "--json", "--interval", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    job = json.loads(proc.stdout)
    assert [(p["name"], p["task_id"], p["state"]) for p in job["points"]] == [("c2", 0, "completed"),
                                                                              ("c4", 0, "completed")]
    script = next((tmp_path / "slurm").glob("job-*.sh")).read_text()
    assert "--array=0-0 --nodes=4 --ntasks-per-node=1 --gres=gpu:8" in script
    for i, p in enumerate(job["points"]):
        pdir = Path(p["point_dir"])
        row = json.loads((pdir / f"bmk_agentic_disagg-sim-4node_conc{2 * (i + 1)}.json").read_text())
        assert row["is_multinode"] is True and row["disagg"] is True
        assert (row["prefill_num_workers"], row["prefill_tp"], row["num_prefill_gpu"]) == (1, 8, 8)
        assert (row["decode_num_workers"], row["num_decode_gpu"], row["num_gpus"]) == (2, 8, 16)
        st = read_json(pdir / "status.json") or {}
        assert st["state"] == "completed" and st["deployment_reuse"]["reused"] is (i > 0)
    commands = (Path(job["points"][0]["point_dir"]) / "server_command.txt").read_text()
    for node in NODES:
        assert f"--nodelist={node}" in commands
    # the prefill worker's two nodes join on its leader's rendezvous port (n1's address)
    assert commands.count("--dist-init-addr 127.0.1.1:31102 --nnodes 2") == 2
    assert {"fingerprint_prefill_w0.json", "fingerprint_prefill_w0_n1.json", "fingerprint_decode_w1.json"} <= \
        {f.name for f in Path(job["points"][1]["point_dir"]).iterdir()}
    # the sweep stops the deployment through Slurm: each member's step gets SIGTERM (srun would SIGKILL it, 137)
    # and the simulator exits 0 from it; each log (where the deployment started) ends saying so (the prefill
    # worker's follower node exits by itself once its leader has shut down)
    for log in ("server_prefill_w0.log", "server_decode_w0.log", "server_decode_w1.log"):
        last = (Path(job["points"][0]["point_dir"]) / log).read_text().splitlines()[-1]
        assert "(SIGTERM to its Slurm step's tasks (scancel --signal=TERM " in last, (log, last)
        assert "; exit status 0)" in last, (log, last)
    assert _deployment_processes() == []
    assert _steps(job["job_id"]).strip() == ""


def test_cancel_mid_run_leaves_no_process_on_any_node(four_nodes: None, harness_env: dict[str, str],
                                                      tmp_path: Path) -> None:
    proc = _submit(harness_env, tmp_path, "--set", "client.duration_s=120")
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip()
    pdir = tmp_path / "disagg-sim-4node" / "variants" / "duration_s=120" / "conc2"   # --set: a variant
    wait_for(lambda: (read_json(pdir / "status.json") or {}).get("phase") == "profiling", 180, "c2 profiling")
    assert len(_deployment_processes()) >= 5
    cancelled = harness(harness_env, "cancel", job, "--wait", timeout=120)
    assert cancelled.returncode == 0, cancelled.stderr
    first, second = status(harness_env, job)["points"]
    assert (first["state"], second["state"]) == ("cancelled", "cancelled")
    assert first["reason"] == "interrupted: SIGTERM"
    st = read_json(pdir / "status.json") or {}
    assert set(st["server_exit_codes"]) == {"router", "prefill_w0", "prefill_w0_n1", "decode_w0", "decode_w1"}
    wait_for(lambda: _deployment_processes() == [] and _steps(job).strip() == "", 30,
             "no deployment process and no step left")


def test_walltime_margin_stops_the_deployment_on_every_node(four_nodes: None, harness_env: dict[str, str],
                                                            tmp_path: Path) -> None:
    """USR1 150 s before the limit arrives while the deployment serves: the limit is cut to 3 minutes once the point
    profiles (the signal is then due; slurmctld sends it on its next time-limit check). The point ends `cancelled`
    (walltime_margin), every member's exit status is recorded, no process or step is left."""
    proc = harness(harness_env, "submit", str(RECIPE), "--cluster", str(LOCAL_CI), "--out", str(tmp_path),
                   "--unofficial", "--points", "c2", "--duration", "300", "--time", "10", "--signal-margin", "150",
                   "--no-preflight")
    assert proc.returncode == 0, proc.stderr
    job_id = proc.stdout.strip()
    pdir = tmp_path / "disagg-sim-4node" / "variants" / "duration_s=300" / "conc2"
    wait_for(lambda: (read_json(pdir / "status.json") or {}).get("phase") == "profiling", 180, "c2 profiling")
    subprocess.run(["scontrol", "update", f"JobId={job_id}", "TimeLimit=3"], check=True)
    job = wait_for(lambda: (d := status(harness_env, job_id))["finished"] and d, 150, "the job to end", 2.0)
    (point,) = job["points"]
    assert (point["state"], point["exit_code"]) == ("cancelled", 138), point   # 128 + SIGUSR1
    assert point["reason"].startswith("walltime_margin: ")
    st = read_json(Path(point["point_dir"]) / "status.json") or {}
    assert "ready" in st["phases"] and "collecting" in st["phases"]   # stopped while serving, then written out
    assert set(st["server_exit_codes"]) == {"router", "prefill_w0", "prefill_w0_n1", "decode_w0", "decode_w1"}
    wait_for(lambda: _deployment_processes() == [] and _steps(job["job_id"]).strip() == "", 30,
             "no deployment process and no step left")
