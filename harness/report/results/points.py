"""Every point under a report's paths: each record found (`harness.report.results.load`) and each point
directory without one (`harness.report.results.unfinished`).

A record in a point directory is read with the point's `status.json`, reconciled as `status`, `export` and a
resume reconcile them (`harness.point.state.truth`): a record whose status says the point failed or was cancelled
is shown as that failed point, without its numbers; a record that cannot be read is a failed point named in a
note, and never stops the report; its row is set aside (`harness.point.state.quarantine`), so that no reader of
rows counts it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.errors import UserError
from harness.point.state.truth import read_point_status, reconcile, unreadable
from harness.report.results.load import RECORD_FILE, PointResult, find_result_files, read_candidate
from harness.report.results.unfinished import status_point, unfinished_points


def load_results(paths: Iterable[Path]) -> list[PointResult]:
    """All points found under `paths`, in file order (list files expand to several points)."""
    return load_results_noted(paths)[0]


def load_results_noted(paths: Iterable[Path]) -> tuple[list[PointResult], list[str]]:
    """All points found under `paths`, and a note per list file whose non-agentic rows were skipped and per
    point record that could not be read. A point directory of this harness without a record (its point failed,
    was cancelled or is running before AIPerf left any request) is a point too, read from its `status.json`
    (`harness.report.results.unfinished`)."""
    paths = [Path(p) for p in paths]
    points: list[PointResult] = []
    notes: list[str] = []
    for path in find_result_files(paths):
        if path.name == RECORD_FILE and (path.parent / "status.json").exists():
            found, note = _point_record(path)
        elif path.name == RECORD_FILE:
            found, note = _bare_record(path)
        else:
            found, note = read_candidate(path)
        points.extend(found)
        if note:
            notes.append(note)
    points.extend(unfinished_points(p for p in paths if p.is_dir()))
    return points, notes


def _point_record(path: Path) -> tuple[list[PointResult], str | None]:
    """The point of a record in a point directory, as its truth says: the record itself when it describes the
    point, else the point its status describes (no numbers), with a note when the record is unreadable."""

    status = read_point_status(path.parent)
    try:
        found, _ = read_candidate(path)
    except UserError as exc:
        lost = unreadable(path.parent, str(exc))
        truth = reconcile(status, lost)
        shown = None if status is None else status_point({**status, "state": truth.state, "reason": truth.reason},
                                                         path.parent)
        return ([shown] if shown else []), f"{path}: not read, the point counts as failed: {lost.message}"
    truth = reconcile(status, {"state": found[0].state} if found else None)
    if truth.record_usable or status is None:
        return found, None
    shown = status_point({**status, "state": truth.state, "reason": truth.reason}, path.parent)
    return ([shown] if shown else []), None


def _bare_record(path: Path) -> tuple[list[PointResult], str | None]:
    """A record without a `status.json` beside it (a copied result): read as it is; one that cannot be read stops
    the reading with one line, its row set aside first."""
    try:
        return read_candidate(path)
    except UserError as exc:
        raise UserError(unreadable(path.parent, str(exc)).message) from None
