"""A point whose record cannot be read keeps no row a collector of `bmk_agentic_*.json` would publish: the first
reader that notices (report, check --results, export, ingest) moves the row into `quarantine/` with a note, until
the point is re-run."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import UserError
from harness.point.state import quarantine
from harness.point.state.attempt import start_attempt
from harness.report.results.export import export_inferencex
from harness.report.results.points import load_results, load_results_noted
from harness.store.entry import read_run_dir
from tests.store_support import write_point

SET_ASIDE = "quarantine/bmk_agentic_row.json.quarantined"


def _corrupt_point(run: Path, conc: int = 4) -> Path:
    """A completed point whose record was cut short after its row was written."""
    pdir = write_point(run / "quickstart-sim" / f"conc{conc}", conc=conc, e2el=[1.0, 1.2, 1.4])
    record = pdir / "point_result.json"
    record.write_text(record.read_text()[:40])
    return pdir


def _rows(run: Path) -> list[Path]:
    """What a collector that globs rows under the run (InferenceX's does) would publish."""
    return sorted(run.rglob("bmk_agentic_*.json"))


def test_a_report_sets_the_row_of_an_unreadable_record_aside_with_a_note(tmp_path: Path) -> None:
    pdir = _corrupt_point(tmp_path / "run")
    points, notes = load_results_noted([tmp_path / "run"])
    assert [(p.state, p.valid) for p in points] == [("failed", False)]
    (note,) = notes
    assert "not read, the point counts as failed" in note and "set aside in quarantine/ until the point is re-run" \
        in note
    assert _rows(tmp_path / "run") == [] and (pdir / SET_ASIDE).is_file()
    why = (pdir / "quarantine" / "why.txt").read_text()
    assert f"bmk_agentic_row.json -> {SET_ASIDE}: the point's record cannot be read" in why
    assert (pdir / "point_result.json").is_file()   # the record stays, as the evidence
    # a second reading finds nothing more to move and still says where the row is
    assert "set aside in quarantine/" in load_results_noted([tmp_path / "run"])[1][0]


def test_check_results_sets_the_row_aside(tmp_path: Path) -> None:
    _corrupt_point(tmp_path / "run", conc=4)
    write_point(tmp_path / "run" / "quickstart-sim" / "conc8", conc=8, e2el=[1.0, 1.1])
    main(["check", "--results", str(tmp_path / "run")])
    assert [p.relative_to(tmp_path / "run").as_posix() for p in _rows(tmp_path / "run")] == \
        ["quickstart-sim/conc8/bmk_agentic_row.json"]


def test_an_export_sets_the_row_aside(tmp_path: Path) -> None:
    pdir = _corrupt_point(tmp_path / "run")
    with pytest.raises(UserError, match="all 1 points failed: .*record_corrupt: .*set aside in quarantine/"):
        export_inferencex(tmp_path / "run", tmp_path / "out")
    assert _rows(tmp_path / "run") == [] and (pdir / SET_ASIDE).is_file()


def test_an_ingest_sets_the_row_aside(tmp_path: Path) -> None:
    pdir = _corrupt_point(tmp_path / "run")
    with pytest.raises(UserError, match=r"point_result.json: not readable as JSON: .*; its row is set aside in quarantine/"):
        read_run_dir(tmp_path / "run")
    assert _rows(tmp_path / "run") == [] and (pdir / SET_ASIDE).is_file()


def test_a_re_run_writes_a_fresh_row_and_sets_the_quarantine_aside_with_its_attempt(tmp_path: Path) -> None:
    pdir = _corrupt_point(tmp_path / "run")
    load_results([tmp_path / "run"])
    start_attempt(pdir)
    write_point(pdir, attempt="20260102T000000Z-bbbbbb", e2el=[1.0, 1.2, 1.4])
    (point,) = load_results([tmp_path / "run"])
    assert (point.state, point.valid) == ("completed", True)
    assert _rows(tmp_path / "run") == [pdir / "bmk_agentic_row.json"]
    assert not (pdir / "quarantine").exists()
    assert (pdir / "attempts" / "20260101T000000Z-aaaaaa" / SET_ASIDE).is_file()


def test_a_row_that_cannot_be_moved_is_named_and_the_reading_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pdir = _corrupt_point(tmp_path / "run")

    def read_only(src: Path, dst: Path) -> Path:
        raise OSError(errno.EROFS, "Read-only file system", str(dst))

    monkeypatch.setattr(quarantine, "move_aside", read_only)
    points, (note,) = load_results_noted([tmp_path / "run"])
    assert [p.state for p in points] == ["failed"]
    assert f"its row could not be moved aside ({pdir / SET_ASIDE}: Read-only file system)" in note
    assert (pdir / "bmk_agentic_row.json").is_file()
