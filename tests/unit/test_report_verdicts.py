"""The verdict table: achieved concurrency (recorded, Little's law, absent), marks on percentiles from too
few requests, and the footnotes that explain them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.report.analysis.achieved import achieved_concurrency, littles_law
from harness.report.analysis.verdicts import COLUMNS, FEW, INFLIGHT, footnotes, min_requests, verdict_row
from harness.report.results.load import Reason
from harness.report.results.points import load_results
from harness.report.results.unfinished import status_point

SIM_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "sim-run"


def _point(conc: int = 4):
    return next(p for p in load_results([SIM_RUN]) if p.conc == conc)


def test_littles_law_is_arrival_rate_times_mean_latency():
    assert littles_law(120, 2.0, 60.0) == pytest.approx(4.0)   # 2 requests/s x 2 s
    assert littles_law(None, 2.0, 60.0) is None
    assert littles_law(120, None, 60.0) is None
    assert littles_law(120, 2.0, 0.0) is None
    assert littles_law(0, 2.0, 60.0) is None


def test_achieved_concurrency_prefers_the_record_then_littles_law_then_says_why_absent():
    p = _point()   # a fixture record without `achieved_concurrency`: 120 ok, mean E2EL 2.4 s, window 60 s
    assert achieved_concurrency(p).source == "littles_law"
    assert achieved_concurrency(p).value == pytest.approx(120 / 60 * 2.4)
    recorded = dataclasses.replace(p, achieved_sessions=3.7)
    assert achieved_concurrency(recorded).value == 3.7 and achieved_concurrency(recorded).source == "record"
    blind = dataclasses.replace(p, window_seconds=None)
    a = achieved_concurrency(blind)
    assert a.value is None and a.source == "absent" and "Little's law" in a.reason
    failed = status_point({"conc": 8, "config_key": "k", "state": "failed", "reason": "boom"}, Path("/x/conc8"))
    assert failed is not None and achieved_concurrency(failed).reason == "no record: nothing was measured"


def test_the_record_carries_its_achieved_sessions_and_window(tmp_path):
    import json

    src = SIM_RUN / "quickstart-sim" / "conc4" / "bmk_agentic_quickstart-sim_conc4.json"
    record = {**json.loads(src.read_text()), "achieved_concurrency": {"sessions": 3.9, "requests": 2.2}}
    (tmp_path / src.name).write_text(json.dumps(record))
    (p,) = load_results([tmp_path])
    assert p.achieved_sessions == 3.9 and p.window_seconds == 60.0
    assert verdict_row(p).cells[COLUMNS.index("achieved conc")] == "3.9"


def test_a_percentile_needs_ten_requests_beyond_it():
    assert (min_requests(90), min_requests(50), min_requests(75), min_requests(99)) == (100, 20, 40, 1000)
    with pytest.raises(ValueError):
        min_requests(100)


def test_percentiles_from_few_requests_are_marked_and_footnoted():
    p = _point()
    assert p.num_requests_successful == 120
    row = dict(zip(COLUMNS, verdict_row(p).cells))
    assert row["E2EL p90 (s)"] == "3.000" and row["TTFT p50 (s)"] == "0.200"
    assert row["requests ok"] == "120" and row["achieved conc"] == f"4.8 {INFLIGHT}"
    assert not any(FEW in n for n in footnotes([p]))
    few = dataclasses.replace(p, num_requests_successful=13)
    row = dict(zip(COLUMNS, verdict_row(few).cells))
    assert row["E2EL p90 (s)"] == f"3.000 {FEW}" and row["E2EL p50 (s)"] == f"1.800 {FEW}"
    mid = dict(zip(COLUMNS, verdict_row(dataclasses.replace(p, num_requests_successful=50)).cells))
    assert mid["E2EL p90 (s)"] == f"3.000 {FEW}" and mid["E2EL p50 (s)"] == "1.800"   # p50 needs 20, p90 100
    assert any(n.startswith(f"{FEW} from too few requests") for n in footnotes([few]))
    assert any(n.startswith(INFLIGHT) for n in footnotes([few]))


def test_an_invalid_point_shows_its_reasons_and_publish_label():
    p = dataclasses.replace(_point(), valid=False, invalid_reasons=(Reason("error_rate", "8% > 5%"),),
                            publishable=False, publish_label="not publishable (invalid)")
    row = dict(zip(COLUMNS, verdict_row(p).cells))
    assert (row["valid"], row["publishable"], row["reasons"]) == ("INVALID", "not publishable (invalid)",
                                                                  "error_rate: 8% > 5%")
