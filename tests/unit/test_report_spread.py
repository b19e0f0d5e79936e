"""The spread of repeated runs of one point: min, median, max and (max - min) / median per metric."""

from __future__ import annotations

import argparse

import pytest

from harness.commands.running.run import _repeat_count, worst_exit
from harness.report.analysis.spread import render, spreads


def _record(tput: float, e2el_p90: float, requests: int = 100) -> dict[str, object]:
    lat = {"p50": e2el_p90 / 2, "p90": e2el_p90}
    return {"num_requests_successful": requests,
            "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": tput}},
                                "latency": {"e2el": lat, "ttft": {"p50": 0.1, "p90": 0.2}}}}


def test_spread_is_max_minus_min_over_the_median() -> None:
    rows = {s.metric: s for s in spreads([_record(100, 2.0), _record(110, 2.2), _record(90, 1.8)])}
    tput = rows["total tok/s/GPU"]
    assert (tput.low, tput.median, tput.high) == (90, 100, 110)
    assert tput.spread_pct == pytest.approx(20.0)
    assert rows["E2EL p90 (s)"].spread_pct == pytest.approx(20.0)
    assert rows["TTFT p50 (s)"].spread_pct == 0.0


def test_a_metric_missing_from_a_run_is_left_out() -> None:
    broken = _record(100, 2.0)
    broken["request_metrics"]["latency"]["e2el"] = {"p50": float("nan")}   # type: ignore[index]
    names = {s.metric for s in spreads([_record(100, 2.0), broken])}
    assert "total tok/s/GPU" in names and "E2EL p90 (s)" not in names and "E2EL p50 (s)" not in names
    assert "out tok/s/GPU" not in names   # the records carry no output throughput


def test_render_needs_two_runs() -> None:
    assert "needs at least 2" in render(spreads([_record(100, 2.0)]), 1)
    text = render(spreads([_record(100, 2.0), _record(120, 2.0)]), 2)
    assert "spread over 2 runs" in text and "18.2 %" in text


def test_repeat_count_and_the_exit_status_of_several_runs() -> None:
    assert _repeat_count("3") == 3
    for bad in ("0", "-1", "x", "101"):
        with pytest.raises(argparse.ArgumentTypeError):
            _repeat_count(bad)
    assert worst_exit([0, 3, 0]) == 3 and worst_exit([0, 1, 3]) == 1 and worst_exit([0, 130]) == 130
    assert worst_exit([0, 0]) == 0
