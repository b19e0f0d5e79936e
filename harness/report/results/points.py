"""Every point under a report's paths: each record found (`harness.report.results.load`) and each point
directory without one (`harness.report.results.unfinished`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.report.results.load import PointResult, find_result_files, read_candidate
from harness.report.results.unfinished import unfinished_points


def load_results(paths: Iterable[Path]) -> list[PointResult]:
    """All points found under `paths`, in file order (list files expand to several points)."""
    return load_results_noted(paths)[0]


def load_results_noted(paths: Iterable[Path]) -> tuple[list[PointResult], list[str]]:
    """All points found under `paths`, and a note per list file whose non-agentic rows were skipped. A point
    directory of this harness without a record (its point failed, was cancelled or is running before AIPerf
    left any request) is a point too, read from its `status.json` (`harness.report.results.unfinished`)."""
    paths = [Path(p) for p in paths]
    points: list[PointResult] = []
    notes: list[str] = []
    for path in find_result_files(paths):
        found, note = read_candidate(path)
        points.extend(found)
        if note:
            notes.append(note)
    points.extend(unfinished_points(p for p in paths if p.is_dir()))
    return points, notes
