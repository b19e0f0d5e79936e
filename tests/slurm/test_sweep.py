"""A 3-point sweep of the quickstart recipe on the simulator as one job array on the local Slurm,
followed to completion; the two tasks that share the node get different GPUs, and their servers use them.
(One warmup call per lane: what is tested is the array, not the window; the preset's ten take ~90 s at c8. Every
lane starts the window at once, as in `make demo`.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.inferencex_contract import check_contract
from tests.slurm.conftest import LOCAL_CI, QUICKSTART, ROOT, harness, read_json, status

WARMUP = 1
VARIANT = f"burst_phase_starts=true,warmup_requests_per_lane={WARMUP},duration_s=10"   # --set, --duration: a variant
ARTIFACTS = ("status.json", "plan.json", "server_command.txt", "client_command.txt", "server.log", "client.log",
             "harness.log", "fingerprint_agg_w0.json")


def _server_env(port: str) -> dict[str, str] | None:
    """The environment of the simulator process listening on `port` (it runs as an srun step)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            if b"harness.sim" not in cmd or b"--port" not in cmd or cmd[cmd.index(b"--port") + 1] != port.encode():
                continue
            if Path(cmd[0].decode()).name == "srun":          # the step's client, not the server itself
                continue
            env = (proc / "environ").read_bytes().split(b"\0")
        except (OSError, IndexError):
            continue
        return dict(e.decode().split("=", 1) for e in env if b"=" in e)
    return None


@pytest.fixture(scope="module")
def sweep(slurm: None, harness_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("sweep")
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "submit", str(QUICKSTART), "--cluster", str(LOCAL_CI), "--out", str(out),
         "--set", "client.burst_phase_starts=true", "--set", f"client.warmup_requests_per_lane={WARMUP}",
         "--duration", "10", "--wait", "--json",
         "--interval", "1"],
        cwd=ROOT, env=harness_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    servers: dict[str, dict[str, str]] = {}
    deadline = time.monotonic() + 420
    while proc.poll() is None and time.monotonic() < deadline:
        for cmd_file in out.glob("*/variants/*/conc*/server_command.txt"):  # --duration: a variant
            name = cmd_file.parent.name
            st = read_json(cmd_file.parent / "status.json") or {}
            if name in servers or st.get("phase") != "profiling":
                continue
            port = re.search(r"--port (\d+)", cmd_file.read_text())
            env = _server_env(port.group(1)) if port else None
            if env is not None:
                servers[name] = env
        time.sleep(0.5)
    stdout, stderr = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    return {"out": out, "rc": proc.returncode, "json": json.loads(stdout) if stdout.strip() else None,
            "stderr": stderr, "servers": servers}


def test_every_point_completes_with_its_artifacts(sweep: dict[str, Any]) -> None:
    assert sweep["rc"] == 0, sweep["stderr"][-3000:]
    data = sweep["json"]
    assert list(data)[:3] == ["job_id", "out_dir", "points"] and data["out_dir"] == str(sweep["out"])
    assert [(p["conc"], p["task_id"], p["state"]) for p in data["points"]] == [
        (2, 0, "completed"), (4, 1, "completed"), (8, 2, "completed")]
    for p in data["points"]:
        assert p["exit_code"] in (0, 3)                          # 3: completed, verdict invalid (short window)
        assert Path(p["result"]).name == "point_result.json"
        row = Path(p["result"]).parent / f"bmk_agentic_quickstart-sim_conc{p['conc']}.json"
        check_contract(json.loads(row.read_text()))   # InferenceX's AgentX contract, unchanged
        result = json.loads(Path(p["result"]).read_text())
        assert (result["state"], result["engine"], result["conc"]) == ("completed", "sim", p["conc"])
        pdir = Path(p["result"]).parent
        assert result["client"]["burst_phase_starts"] is True
        assert "(burst; first-request spread 0.0s)" in (pdir / "client.log").read_text()   # AIPerf did it
        for name in ARTIFACTS:
            assert (pdir / name).exists(), name
        slurm_out = sweep["out"] / "slurm" / f"{data['job_id']}_{p['task_id']}.out"
        assert f"conc{p['conc']}: completed" in slurm_out.read_text()
    # the phases streamed while following
    assert "[c4 task 1] running / profiling" in sweep["stderr"]
    # --wait ends with the report of the whole array, a SIMULATED curve of its variant
    assert data["report"] == str(sweep["out"] / "report" / "report.html") and Path(data["report"]).exists()
    assert f"== quickstart-sim [{VARIANT}]  SIMULATED" in sweep["stderr"]
    assert (sweep["out"] / "report" / "report.csv").read_text().count(f'\nquickstart-sim,"{VARIANT}",') == 3


def test_status_and_logs_agree(sweep: dict[str, Any], harness_env: dict[str, str]) -> None:
    job = sweep["json"]["job_id"]
    data = status(harness_env, job)
    assert data["finished"] is True and "sacct" in data["source"]
    assert [p["state"] for p in data["points"]] == ["completed"] * 3
    logs = harness(harness_env, "logs", job, "--point", "c4", "--kind", "harness")
    assert logs.returncode == 0
    assert "==> c4 (task 1) harness:" in logs.stdout and "[state] completed" in logs.stdout
    assert "c2" not in logs.stdout.split("==>", 1)[0]
    bad = harness(harness_env, "logs", job, "--point", "c99")
    assert bad.returncode == 2 and "--point c99: job" in bad.stderr


def test_tasks_sharing_the_node_use_their_own_gpus(sweep: dict[str, Any]) -> None:
    """Tasks 0 and 1 run side by side with 4 fake GPUs each: one of them does not start at 0, and each
    point's server sees exactly the GPUs Slurm gave that task."""
    out = sweep["out"]
    pdirs = out / "quickstart-sim" / "variants" / VARIANT
    slurm_env = {n: read_json(pdirs / n / "status.json")["slurm"] for n in ("conc2", "conc4")}
    gpus = {n: e["CUDA_VISIBLE_DEVICES"] for n, e in slurm_env.items()}
    assert sorted(gpus.values()) == ["0,1,2,3", "4,5,6,7"], gpus
    for name, env in slurm_env.items():
        assert env["SLURM_JOB_GPUS"] == gpus[name]
        assert env["SLURM_ARRAY_JOB_ID"] == sweep["json"]["job_id"]
        server = sweep["servers"].get(name)
        assert server is not None, f"{name}: server process not observed"
        assert server["CUDA_VISIBLE_DEVICES"] == gpus[name]
        assert server["SLURM_STEP_GPUS"] == gpus[name]
        assert server["FAKE_PYXIS_IMAGE"] == "lmsysorg/sglang:v0.5.23-cu130"   # started as a pyxis step
        assert server["FAKE_PYXIS_MOUNT_HOME"] == "0"
        # the worker fingerprint was captured by its own pyxis step of the same image, with the task's GPUs
        fp = read_json(pdirs / name / "fingerprint_agg_w0.json")
        assert fp["capture"]["exit_code"] == 0 and fp["capture"]["argv"][0] == "srun", fp["capture"]
        assert "--container-image=lmsysorg/sglang:v0.5.23-cu130" in fp["capture"]["argv"]
        assert fp["env"]["CUDA_VISIBLE_DEVICES"] == gpus[name] and fp["launcher"] == "pyxis"
