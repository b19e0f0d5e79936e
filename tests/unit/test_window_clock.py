"""A wall-clock step inside the window: the record's `window_clock` and the `window_clock_mismatch` reason."""

from __future__ import annotations

from typing import Any

from harness.point.record.validity import verdict, window_clock
from harness.recipe.thresholds import Thresholds


def _result(wall_s: float, monotonic_s: float | None, requested_s: float = 30.0) -> dict[str, Any]:
    metrics = {"throughput": {"duration_seconds": wall_s}}
    return {"request_accounting": {"successful": 50, "errors": 0, "cancelled_at_cutoff": 0},
            "request_metrics": metrics, "conc": 4, "achieved_concurrency": {"sessions": 4.0},
            "window_clock": window_clock(metrics, requested_s, 10.0, monotonic_s)}


def _codes(result: dict[str, Any], requested_s: float = 30.0) -> list[str]:
    return [r["code"] for r in verdict(result, requested_s, Thresholds())["reasons"]]


def test_a_window_that_agrees_with_both_clocks_is_valid() -> None:
    result = _result(29.6, 41.2)
    assert result["window_clock"]["agrees"] is True and _codes(result) == []


def test_a_forward_step_of_an_hour_reads_hours_long_and_is_invalid() -> None:
    result = _result(3633.0, 41.0)
    assert result["window_clock"] == {"wall_s": 3633.0, "monotonic_s": 41.0, "requested_s": 30.0, "grace_s": 10.0,
                                      "max_s": 42.6, "agrees": False}
    assert "window_clock_mismatch" in _codes(result)


def test_a_backward_step_reads_negative_and_is_invalid() -> None:
    assert "window_clock_mismatch" in _codes(_result(-3567.0, 41.0))


def test_without_the_monotonic_span_the_requested_window_and_grace_bound_it() -> None:
    assert _result(41.0, None)["window_clock"]["agrees"] is True
    assert "window_clock_mismatch" in _codes(_result(3633.0, None))


def test_a_window_longer_than_its_monotonic_span_is_refused_even_within_the_requested_bound() -> None:
    # the client ran 20 s by the monotonic clock: a 35 s wall-clock window cannot be
    assert "window_clock_mismatch" in _codes(_result(35.0, 20.0))
