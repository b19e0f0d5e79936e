"""Stopping a sweep: `harness cancel` mid-run, and the walltime margin (USR1 before the time limit)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.slurm.conftest import harness, read_json, status, submit, wait_for


def _phase(pdir: Path) -> str | None:
    st = read_json(pdir / "status.json")
    return st.get("phase") if st else None


def test_cancel_mid_run_keeps_partial_artifacts(slurm: None, harness_env: dict[str, str], tmp_path: Path) -> None:
    job = submit(harness_env, tmp_path, "--points", "c2", "c4", "--throttle", "1", "--duration", "120")
    pdir = tmp_path / "quickstart-sim" / "variants" / "duration_s=120" / "conc2"   # --duration: a variant
    wait_for(lambda: _phase(pdir) == "profiling", 120, "c2 profiling")
    proc = harness(harness_env, "cancel", job, "--wait", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"cancelled job {job}" in proc.stdout
    data = status(harness_env, job)
    first, second = data["points"]
    assert (first["state"], second["state"]) == ("cancelled", "cancelled")
    assert first["reason"] == "interrupted: SIGTERM"
    assert second["reason"] == "slurm: CANCELLED before the point started"
    st = read_json(pdir / "status.json")
    assert st["state"] == "cancelled" and "collecting" in st["phases"]
    for name in ("server.log", "client.log", "harness.log", "server_command.txt", "fingerprint_agg_w0.json"):
        assert (pdir / name).exists(), name
    assert "[state] cancelled: interrupted: SIGTERM" in (pdir / "harness.log").read_text()
    assert (tmp_path / "slurm" / f"{job}_0.out").exists()
    assert not (pdir.parent / "conc4" / "status.json").exists()


def test_cancel_refuses_jobs_it_did_not_submit(slurm: None, harness_env: dict[str, str]) -> None:
    other = subprocess.run(["sbatch", "--parsable", "-o", "/dev/null", "--wrap", "sleep 30"], capture_output=True,
                           text=True, check=True).stdout.strip()
    try:
        proc = harness(harness_env, "cancel", other)
        assert proc.returncode == 2
        assert f"job {other}: not submitted by this harness" in proc.stderr
        state = subprocess.run(["squeue", "-h", "-j", other, "-o", "%T"], capture_output=True, text=True,
                               check=False).stdout
        assert state.strip() in ("PENDING", "RUNNING")
    finally:
        subprocess.run(["scancel", other], check=False)


def test_walltime_margin_flushes_and_marks_cancelled(slurm: None, harness_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    """A 2-minute limit with USR1 50 s before it: the point stops, writes everything, ends `cancelled`. Slurm may
    send the signal up to a minute early (sbatch(1), `--signal`: its limit checks are periodic); under a 1-minute
    limit it came at the job's first instant, before the harness had a handler, and the job died of it."""
    job = submit(harness_env, tmp_path, "--points", "c2", "--duration", "300", "--time", "2",
                 "--signal-margin", "50", "--no-preflight")  # preflight would refuse a walltime this short
    assert "--signal=B:USR1@50" in next((tmp_path / "slurm").glob("job-*.sh")).read_text()
    data = wait_for(lambda: (d := status(harness_env, job))["finished"] and d, 240, "the job to end", 2.0)
    point = data["points"][0]
    assert point["state"] == "cancelled"
    assert point["reason"].startswith("walltime_margin: ")
    assert point["exit_code"] == 138                                   # 128 + SIGUSR1: before the TIMEOUT kill
    pdir = tmp_path / "quickstart-sim" / "variants" / "duration_s=300" / "conc2"
    st = read_json(pdir / "status.json")
    assert st["exit_status"] == 138 and st["phases"].get("collecting")
    assert (pdir / "server.log").exists() and (pdir / "harness.log").exists()
    assert st["server_exit_code"] == 0   # stopped, not abandoned: SIGTERM to its step, from which the sim exits 0


@pytest.mark.parametrize("args,message", [
    (("--points", "c99"), "c99"),
    (("--time", "2h"), "--time '2h'"),
    (("--throttle", "0"), "--throttle"),
])
def test_submit_mistakes_are_one_line(slurm: None, harness_env: dict[str, str], tmp_path: Path,
                                      args: tuple[str, ...], message: str) -> None:
    from tests.slurm.conftest import LOCAL_CI, QUICKSTART

    proc = harness(harness_env, "submit", str(QUICKSTART), "--cluster", str(LOCAL_CI), "--out", str(tmp_path), *args)
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
