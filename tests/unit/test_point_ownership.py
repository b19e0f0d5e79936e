"""One writer per point: a second writer is refused at once naming the holder; a lock whose holder is gone
is taken over, and a `running` status it left reads `failed: harness_killed` to every reader."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main as cli
from harness.point.state.ownership import LOCK_FILE, PointBusy, PointLock, holder_gone
from harness.point.state.status import read_status

ROOT = Path(__file__).resolve().parents[2]
SIM_SMALL = ROOT / "tests" / "integration" / "data" / "sim-small.yaml"

_HOLDER = """
import json, os, socket, sys, time
from pathlib import Path
from harness.point.state.ownership import PointLock
d = Path(sys.argv[1])
lock = PointLock(d, command="harness run held-by-test")
lock.acquire()
if len(sys.argv) > 2:   # a point that was running when its harness died
    (d / "status.json").write_text(json.dumps({"schema_version": 1, "config_key": "it-sim", "conc": 4,
        "state": "running", "phase": "profiling", "phases": {}, "exit_status": None, "harness_pid": os.getpid(),
        "harness_host": socket.gethostname(), "engine": "sim", "simulated": True, "image": "img:1"}))
print("locked", flush=True)
time.sleep(600)
"""


def _holder(point: Path, running: bool = False) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(point), *(["running"] if running else [])],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def _kill(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def test_a_second_writer_is_refused_at_once_naming_the_holder(tmp_path: Path) -> None:
    point = tmp_path / "p"
    proc = _holder(point)
    try:
        with pytest.raises(PointBusy) as exc:
            PointLock(point).acquire()
        assert f"pid {proc.pid} on {socket.gethostname()}" in str(exc.value)
        assert "harness run held-by-test" in str(exc.value)
        assert holder_gone(point) is False
    finally:
        _kill(proc)


def test_harness_run_of_a_point_being_written_exits_2_naming_the_holder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    proc = _holder(out / "it-sim" / "conc4")
    try:
        rc = cli(["run", str(SIM_SMALL), "--point", "c4", "--out", str(out)])
    finally:
        _kill(proc)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "another harness writes this point now" in err[0] and f"pid {proc.pid}" in err[0]
    assert not (out / "it-sim" / "conc4" / "status.json").exists()   # nothing of the point was touched


def test_sweep_of_a_point_being_written_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    proc = _holder(out / "it-sim" / "conc4")
    try:
        rc = cli(["sweep", str(SIM_SMALL), "--out", str(out)])
    finally:
        _kill(proc)
    assert rc == 2 and f"pid {proc.pid}" in capsys.readouterr().err


def test_a_lock_whose_holder_was_killed_is_taken_over(tmp_path: Path) -> None:
    point = tmp_path / "p"
    _kill(_holder(point))
    assert holder_gone(point) is True
    lock = PointLock(point)
    lock.acquire()
    try:
        assert json.loads((point / LOCK_FILE).read_text())["pid"] == os.getpid()
        assert holder_gone(point) is False   # held by this process now
    finally:
        lock.release()


def test_a_running_status_left_by_a_killed_holder_reads_failed_for_every_reader(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    point = out / "it-sim" / "conc4"
    proc = _holder(point, running=True)
    assert read_status(point)["state"] == "running"     # its holder is alive: left as it is
    _kill(proc)

    assert cli(["status", str(out)]) == 0                # `harness status DIR`
    table = capsys.readouterr().out
    assert "it-sim/conc4" in table and "failed" in table and f"harness_killed: the harness process {proc.pid}" in table
    status = json.loads((point / "status.json").read_text())
    assert status["state"] == "failed" and status["exit_status"] == 1
    assert "[state] failed: harness_killed" in (point / "harness.log").read_text()


def test_report_reconciles_a_stale_running_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    point = out / "it-sim" / "conc4"
    _kill(_holder(point, running=True))
    assert cli(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    (p,) = report["curves"][0]["points"]
    assert p["conc"] == 4 and p["valid"] is False and p["state"] == "failed"
    assert p["invalid_reasons"][0]["code"] == "point_failed"
    assert p["invalid_reasons"][0]["message"].startswith("harness_killed")


def test_follow_and_status_of_a_job_reconcile_alike(tmp_path: Path) -> None:
    from slurm.progress import point_views

    point = tmp_path / "runs" / "it-sim" / "conc4"
    _kill(_holder(point, running=True))
    record = {"points": [{"task_id": 0, "point_dir": str(point), "result": "point_result.json", "conc": 4,
                          "name": "c4"}]}
    (view,) = point_views(record, {})   # what `follow` and `status JOB` show once Slurm forgot the task
    assert view["state"] == "failed" and view["reason"].startswith("harness_killed")


def test_an_eval_of_a_directory_being_written_exits_2_naming_the_holder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    proc = _holder(out / "it-sim" / "eval-conc4")
    try:
        rc = cli(["eval", str(SIM_SMALL), "--out", str(out), "--limit", "2"])
    finally:
        _kill(proc)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and f"pid {proc.pid}" in err[0] and "eval-conc4" in err[0]


def test_a_slurm_task_of_a_point_being_written_exits_2_naming_the_holder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.point.record.result import point_dir
    from slurm.sweep_plan import load_sweep_plan

    out = tmp_path / "runs"
    assert cli(["submit", str(ROOT / "recipes" / "quickstart-sim.yaml"), "--cluster", str(ROOT / "clusters" /
                "local-ci.yaml"), "--points", "c2", "--out", str(out), "--dry-run", "--no-preflight"]) == 0
    plan_file = Path(capsys.readouterr().err.split("plan:", 1)[1].split()[0])
    sweep = load_sweep_plan(plan_file)
    proc = _holder(point_dir(out, sweep.points[0], sweep.options().variant))
    try:
        rc = cli(["run-point", str(plan_file), "--task-id", "0"])   # what the array task execs
    finally:
        _kill(proc)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and f"pid {proc.pid}" in err[0]


def test_the_holder_never_records_a_secret_of_its_command_line(tmp_path: Path) -> None:
    lock = PointLock(tmp_path / "p", command="harness run r.yaml --set server.env.HF_TOKEN=hf_abcdefghijklmnop1234")
    lock.acquire()
    try:
        text = (tmp_path / "p" / LOCK_FILE).read_text()
        assert "hf_abcdefghijklmnop1234" not in text and json.loads(text)["pid"] == os.getpid()
    finally:
        lock.release()
