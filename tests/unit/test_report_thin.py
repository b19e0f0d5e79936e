"""A point whose place on the curve rests on little (few requests, or far less load than asked) is marked in every
table of the report and named with its reason in a note under it; a well-sampled point is not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.report.analysis.curves import group_curves
from harness.report.analysis.table import render_curve
from harness.report.analysis.thin import MARK, MIN_REQUESTS, thin_reasons
from harness.report.analysis.verdicts import min_requests
from harness.report.render.build import build_report
from harness.report.results.points import load_results

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "sim-run"


def _run(tmp_path: Path, changes: dict[int, dict[str, object]]) -> Path:
    run = tmp_path / "run"
    shutil.copytree(FIX, run)
    for conc, change in changes.items():
        (row,) = (run / "quickstart-sim" / f"conc{conc}").glob("bmk_agentic_*.json")
        row.write_text(json.dumps({**json.loads(row.read_text()), **change}))
    return run


def test_the_threshold_is_what_a_median_needs() -> None:
    assert MIN_REQUESTS == min_requests(50)


def test_few_requests_and_low_load_are_marked_and_named(tmp_path: Path) -> None:
    run = _run(tmp_path, {2: {"num_requests_successful": 13},
                          8: {"achieved_concurrency": {"sessions": 5.1, "requests": 4.0}}})
    points = {p.conc: p for p in load_results([run])}
    assert thin_reasons(points[2]) == ["13 successful requests (a p50 needs 20)"]
    assert thin_reasons(points[8])[0].startswith("achieved concurrency 5.1 of 8 (under 75%")
    assert sorted(c for c, p in points.items() if thin_reasons(p)) == [2, 8]

    (curve,) = group_curves(load_results([run]))
    text = render_curve(curve)
    rows = {ln.split()[0]: ln for ln in text.splitlines() if ln.strip()[:1].isdigit()}
    assert rows["2"].split()[1] == MARK and rows["8"].split()[1] == MARK and MARK not in rows["4"]
    note = next(ln for ln in text.splitlines() if ln.startswith(f"{MARK} rests on little: "))
    assert "c2: 13 successful requests" in note and "c8: achieved concurrency 5.1 of 8" in note
    assert "c4" not in note

    out = build_report([run], tmp_path / "report", with_records=False)
    md = out.markdown_path.read_text()
    assert f"| 2 {MARK} | valid |" in md and "| 4 | valid |" in md
    assert f"{MARK} rests on little: c2: 13 successful requests" in md
    page = out.html_path.read_text()
    assert f'<td class="n">2 {MARK}</td>' in page and f"{MARK} rests on little: c2" in page


def test_a_well_sampled_curve_has_no_mark(tmp_path: Path) -> None:
    (curve,) = group_curves(load_results([_run(tmp_path, {})]))
    assert MARK not in render_curve(curve)
