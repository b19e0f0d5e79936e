"""The record of submitted jobs, the per-point views and the log tail."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.artifacts import write_json
from harness.errors import UserError
from slurm.follow import LogTail
from slurm.jobs import find_job, record_job
from slurm.progress import exit_status, job_json, point_views, render_table
from slurm.state import TaskState


def _record(out: Path, job_id: str = "42") -> dict[str, object]:
    return {"job_id": job_id, "out_dir": str(out), "points": [
        {"task_id": 0, "name": "c2", "conc": 2, "point_dir": str(out / "k" / "conc2"), "result": "bmk_c2.json"},
        {"task_id": 1, "name": "c4", "conc": 4, "point_dir": str(out / "k" / "conc4"), "result": "bmk_c4.json"}]}


def test_record_and_find(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_STATE_DIR", str(tmp_path / "state"))
    record_job(_record(tmp_path / "a", "42"))
    record_job(_record(tmp_path / "b", "43"))
    assert find_job("42")["out_dir"] == str(tmp_path / "a")
    assert find_job("43_1")["out_dir"] == str(tmp_path / "b")        # an array task id names its job
    assert find_job("42", tmp_path / "a")["job_id"] == "42"
    with pytest.raises(UserError, match="job 44: not submitted by this harness"):
        find_job("44")
    with pytest.raises(UserError, match="job 43: not submitted by this harness"):
        find_job("43", tmp_path / "a")


def test_point_views_and_exit_status(tmp_path: Path) -> None:
    rec = _record(tmp_path)
    p0 = tmp_path / "k" / "conc2"
    write_json(p0 / "status.json", {"state": "completed", "phase": "collecting", "exit_status": 3, "valid": False})
    write_json(p0 / "bmk_c2.json", {})
    write_json(p0 / "point_result.json", {"config_key": "k", "conc": 2, "state": "completed"})
    tasks = {0: TaskState(0, "FAILED", 3, "NonZeroExitCode", "vm", "43"),
             1: TaskState(1, "CANCELLED", 143, None, None, "44")}
    views = point_views(rec, tasks)
    assert [(v["conc"], v["task_id"], v["state"], v["exit_code"], v["result"]) for v in views] == [
        (2, 0, "completed", 3, str(p0 / "bmk_c2.json")), (4, 1, "cancelled", 143, None)]
    assert exit_status(views) == 1
    assert exit_status(views[:1]) == 0
    assert list(job_json(rec, views)) == ["job_id", "out_dir", "points"]
    table = render_table(views).splitlines()
    assert table[0].split() == ["task", "point", "state", "phase", "slurm", "exit", "result", "/", "reason"]
    assert table[2].split()[:6] == ["1", "c4", "cancelled", "-", "CANCELLED", "143"]


def test_log_tail_yields_whole_lines_once(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    tail = LogTail(path)
    assert tail.new_lines() == []
    path.write_text("a\nb")
    assert tail.new_lines() == ["a"]
    with open(path, "a") as fh:
        fh.write("c\nd\n")
    assert tail.new_lines() == ["bc", "d"]
    assert tail.new_lines() == []


def test_follow_shows_each_progress_line_once(tmp_path):
    import io

    from slurm.follow import follow

    pdir = tmp_path / "quickstart-sim" / "conc2"
    pdir.mkdir(parents=True)
    (tmp_path / "slurm").mkdir()
    line = "c2 profiling 17/30 s (ETA 13 s): 7 requests, 0 errors, 67 out tok/s, E2EL p50 0.85 s"
    (tmp_path / "slurm" / "7_0.out").write_text(line + "\n")
    (pdir / "harness.log").write_text(f"2026-12-01T07:28:47Z [phase] profiling (AIPerf)\n"
                                      f"2026-12-01T07:29:04Z [progress] {line}\n")
    record = {"job_id": "7", "out_dir": str(tmp_path), "points": [
        {"task_id": 0, "point_dir": str(pdir), "name": "c2", "conc": 2, "result": "point_result.json"}]}
    buf = io.StringIO()
    follow(record, interval_s=0, out=buf, states=lambda record: ({}, None))
    text = buf.getvalue()
    assert text.count("c2 profiling 17/30 s") == 1 and f"[c2 slurm] {line}" in text
    assert "[c2 harness] 2026-12-01T07:28:47Z [phase] profiling (AIPerf)" in text


def test_a_completed_invalid_point_reads_as_such_in_the_table_and_the_follow_lines(tmp_path: Path) -> None:
    import io

    from slurm.follow import follow

    rec = _record(tmp_path)
    rec["points"] = rec["points"][:1]   # type: ignore[index]
    p0 = tmp_path / "k" / "conc2"
    write_json(p0 / "status.json", {"state": "completed", "phase": "collecting", "exit_status": 3, "valid": False})
    write_json(p0 / "bmk_c2.json", {})
    write_json(p0 / "point_result.json", {"config_key": "k", "conc": 2, "state": "completed"})
    tasks = {0: TaskState(0, "FAILED", 3, "NonZeroExitCode", "vm", "43")}
    row = render_table(point_views(rec, tasks)).splitlines()[1]
    assert "  completed, invalid (exit 3)  " in row and row.split()[:2] == ["0", "c2"]
    buf = io.StringIO()
    follow(rec, interval_s=0, out=buf, states=lambda record: (tasks, "sacct"))
    assert "[c2 task 0] completed, invalid (exit 3) (slurm FAILED)" in buf.getvalue()
