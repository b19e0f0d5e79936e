"""The result readers' crash list, one case each: corrupt, foreign, deep, looping and wrong-typed files end in
one line and exit status 2 (or are read as far as they are valid), never a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from harness.cli import _main
from harness.errors import UserError
from harness.inputs.json_input import JsonFields, read_json_object

ROOT = Path(__file__).resolve().parents[2]
POINT = ROOT / "tests" / "fixtures" / "h200-power"
DEEP = "[" * 100_000 + "]" * 100_000


def _point(tmp_path: Path, name: str = "run") -> Path:
    pdir = tmp_path / name / "quickstart-sim" / "conc4"
    shutil.copytree(POINT, pdir, ignore=shutil.ignore_patterns("*.csv", "*.txt", "*.md"))
    return pdir


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = _main(list(argv))
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.mark.parametrize(("body", "expected"), [
    (b"{not json", "not readable as JSON"), (b"[1, 2]", "expected a JSON (a JSON object), got a list"),
    (DEEP.encode(), "nested deeper than 64 levels"), (b"\xff\xfe", "not UTF-8"),
])
def test_fingerprint_diff_on_a_corrupt_or_foreign_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       body: bytes, expected: str) -> None:
    (tmp_path / "a.json").write_bytes(body)
    (tmp_path / "b.json").write_text("{}")
    assert expected in _error(capsys, "fingerprint", "diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"))


@pytest.mark.parametrize(("record", "expected"), [
    ("[]", "point_result.json: <root>: expected a point record (a JSON object), got a list"),
    (DEEP, "point_result.json: not readable as JSON: nested deeper than 64 levels"),
    ('{"row": 7}', "point_result.json: row 7: expected the name of the row file beside the record"),
    (None, "point_result.json: not a regular file inside"),   # a looping record
])
def test_export_on_a_foreign_deep_or_looping_record(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    record: str | None, expected: str) -> None:
    pdir = _point(tmp_path)
    (pdir / "point_result.json").unlink()
    if record is None:
        (pdir / "point_result.json").symlink_to("point_result.json")
    else:
        (pdir / "point_result.json").write_text(record)
    assert expected in _error(capsys, "export", "--inferencex", str(tmp_path / "run"), str(tmp_path / "out"))


def test_report_and_compare_on_symlink_loops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _point(tmp_path, "good")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert "a symlink that leads to no file or directory" in _error(capsys, "report", str(tmp_path / "loop"))
    assert "a symlink that leads to no file or directory" in _error(
        capsys, "compare", str(tmp_path / "good"), str(tmp_path / "loop"))
    _point(tmp_path, "inside")
    (tmp_path / "inside" / "other").mkdir()
    (tmp_path / "inside" / "other" / "bmk_agentic_loop_conc8.json").symlink_to("bmk_agentic_loop_conc8.json")
    line = _error(capsys, "report", str(tmp_path / "inside"), "--out", str(tmp_path / "rep"))
    assert "bmk_agentic_loop_conc8.json: a symlink loop" in line


def test_report_and_compare_on_deep_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdir = _point(tmp_path)
    (pdir / "point_result.json").write_text(DEEP)
    assert "nested deeper than 64 levels" in _error(capsys, "report", str(tmp_path / "run"), "--out",
                                                     str(tmp_path / "rep"))
    _point(tmp_path, "base")
    assert "nested deeper than 64 levels" in _error(capsys, "compare", str(tmp_path / "base"), str(tmp_path / "run"))


@pytest.mark.parametrize("change", [
    {"request_metrics": []}, {"request_metrics": {"throughput": {"per_gpu": [1]}}}, {"request_accounting": "x"},
    {"overrides": 5}, {"power_invalid_reasons": 3}, {"validity": {"valid": True, "reasons": 7}},
    {"num_requests_total": "9" * 5000}, {"tp": 1e300}, {"request_metrics": {"latency": {"e2el": [1, 2]}}},
])
def test_wrong_typed_fields_read_as_absent(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           change: dict[str, object]) -> None:
    pdir = _point(tmp_path)
    record = json.loads((pdir / "point_result.json").read_text())
    (pdir / "point_result.json").write_text(json.dumps({**record, **change}))
    assert _main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "rep"), "--no-records"]) == 0
    capsys.readouterr()
    _point(tmp_path, "base")
    assert _main(["compare", str(tmp_path / "base"), str(tmp_path / "run"), "--json"]) == 0


def test_non_regular_files_are_refused_without_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(UserError, match="is a FIFO; expected a status file"):
        read_json_object(tmp_path / "fifo.json", "status")
    with pytest.raises(UserError, match="is a character device"):
        read_json_object("/dev/zero", "status")
    with pytest.raises(UserError, match="is a directory"):
        read_json_object(tmp_path, "status")
    big = tmp_path / "big.json"
    big.write_text(" " * 2048)
    with pytest.raises(UserError, match="larger than 1 KiB"):
        read_json_object(big, "status", max_bytes=1024)


def test_typed_fields() -> None:
    f = JsonFields({"a": True, "b": 3, "c": 2.0, "d": float("nan"), "e": "x", "g": {"h": 1}, "i": [1]}, "s.json")
    assert (f.integer("a"), f.number("a"), f.boolean("a")) == (None, None, True)   # bools are not numbers
    assert (f.integer("b"), f.integer("c"), f.number("d"), f.text("e")) == (3, 2, None, "x")
    assert f.section("g").integer("h") == 1 and f.section("e").integer("h") is None and f.items("i") == [1]
    with pytest.raises(UserError, match=r"^s\.json: g\.h: expected a string, got a number$"):
        f.section("g").require_str("h")
    with pytest.raises(UserError, match=r"^s\.json: zz: expected an integer, missing$"):
        f.require_int("zz")


def test_compare_of_runs_that_share_no_concurrency(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _point(tmp_path, "a")
    pdir = _point(tmp_path, "b")
    record = json.loads((pdir / "point_result.json").read_text())
    (pdir / "point_result.json").write_text(json.dumps({**record, "conc": 8}))
    assert _main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "added: c8; removed: c4" in out, out


@pytest.mark.parametrize(("jobs", "expected"), [
    ({"jobs": [{"job_id": "7", "out_dir": "/x", "points": 5}]}, "jobs.7.points: Input should be a valid list"),
    ({"jobs": [{"job_id": "7", "out_dir": "/x", "points": [{"task_id": "x"}]}]}, "jobs.7.points.0.task_id"),
    ({"jobs": 5}, "job 7: not submitted by this harness"),
    ([1], "<root>: expected a JSON (a JSON object), got a list"),
])
def test_status_and_follow_on_a_damaged_submission_record(tmp_path: Path, jobs: object, expected: str) -> None:
    from slurm.jobs import JOBS_FILE, find_job

    (tmp_path / JOBS_FILE).write_text(json.dumps(jobs))
    with pytest.raises(UserError, match=re.escape(expected)):
        find_job("7", tmp_path)


@pytest.mark.parametrize("status", [
    {"state": "running", "phase": {"a": 1}}, {"state": "failed", "reason": ["x"]}, {"state": "completed",
                                                                                     "exit_status": "x"},
])
def test_status_views_read_wrong_typed_fields_as_absent(tmp_path: Path, status: dict[str, object]) -> None:
    from slurm.progress import point_views, render_table

    (tmp_path / "status.json").write_text(json.dumps(status))
    (tmp_path / "point_result.json").write_text(json.dumps({"config_key": "k", "conc": 4, "state": status["state"]}))
    record = {"points": [{"task_id": 0, "conc": 4, "name": "c4", "point_dir": str(tmp_path), "result": "r.json"}]}
    line = render_table(point_views(record, {})).splitlines()[-1]
    assert line.split()[:3] == ["0", "c4", status["state"]], line
