"""A wall-clock step inside the window: the record's `window_clock` and the `window_clock_mismatch` reason. The
harness times AIPerf's profiling phase on the monotonic clock and holds it against the phase on the wall clock
(AIPerf's `start_time` → `end_time`) both ways, and the window against the longest it can be."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from harness.point.record.validity import verdict, window_clock
from harness.point.replay import client_phase
from harness.point.replay.client_phase import ClientProgress, ProfilingClock
from harness.recipe.thresholds import Thresholds

START = datetime(2026, 3, 1, 12, 0, 0)


def _summary(phase_wall_s: float) -> dict[str, Any]:
    """AIPerf's summary with its naive local `start_time` and `end_time` `phase_wall_s` apart."""
    return {"start_time": START.isoformat(), "end_time": (START + timedelta(seconds=phase_wall_s)).isoformat()}


def _result(wall_s: float, monotonic_s: float | None, requested_s: float = 30.0, *,
            phase_wall_s: float | None = None, phase_monotonic_s: float | None = None) -> dict[str, Any]:
    metrics = {"throughput": {"duration_seconds": wall_s}}
    summary = None if phase_wall_s is None else _summary(phase_wall_s)
    clock = window_clock(metrics, requested_s, 10.0, ProfilingClock(monotonic_s, phase_monotonic_s), summary)
    return {"request_accounting": {"successful": 50, "errors": 0, "cancelled_at_cutoff": 0},
            "request_metrics": metrics, "conc": 4, "achieved_concurrency": {"sessions": 4.0},
            "window_clock": clock}


def _reasons(result: dict[str, Any], requested_s: float = 30.0) -> dict[str, str]:
    return {r["code"]: r["message"] for r in verdict(result, requested_s, Thresholds())["reasons"]}


def test_a_window_that_agrees_with_both_clocks_is_valid() -> None:
    result = _result(29.6, 41.2, phase_wall_s=30.4, phase_monotonic_s=30.9)
    assert result["window_clock"]["agrees"] is True and _reasons(result) == {}


def test_a_phase_twelve_seconds_shorter_on_the_wall_clock_is_invalid_naming_both_spans() -> None:
    # a -12 s step inside a 30 s window: the throughput reads half as high again, within every other bound
    result = _result(18.4, 32.0, phase_wall_s=18.6, phase_monotonic_s=30.6)
    clock = result["window_clock"]
    assert clock["phase_wall_s"] == 18.6 and clock["phase_monotonic_s"] == 30.6 and clock["phase_tolerance_s"] == 2.0
    assert clock["agrees"] is False
    message = _reasons(result)["window_clock_mismatch"]
    assert "18.6 s on the wall clock but 30.6 s on the monotonic clock, 12.0 s shorter" in message
    assert "the wall clock stepped" in message


def test_a_phase_twelve_seconds_longer_on_the_wall_clock_is_invalid() -> None:
    result = _result(30.2, 45.0, phase_wall_s=42.6, phase_monotonic_s=30.6)
    assert result["window_clock"]["agrees"] is False
    assert "42.6 s on the wall clock but 30.6 s on the monotonic clock, 12.0 s longer" in \
        _reasons(result)["window_clock_mismatch"]


def test_the_tolerance_is_two_seconds_or_two_percent_of_the_phase_whichever_is_more() -> None:
    assert _result(29.0, 32.0, phase_wall_s=28.7, phase_monotonic_s=30.6)["window_clock"]["agrees"] is True
    assert _result(29.0, 32.0, phase_wall_s=28.5, phase_monotonic_s=30.6)["window_clock"]["agrees"] is False
    long = _result(1790.0, 1810.0, 1800.0, phase_wall_s=1765.0, phase_monotonic_s=1801.0)["window_clock"]
    assert long["phase_tolerance_s"] == 36.02 and long["agrees"] is True
    assert _result(1790.0, 1810.0, 1800.0, phase_wall_s=1764.0,
                   phase_monotonic_s=1801.0)["window_clock"]["agrees"] is False


def test_a_phase_whose_end_reads_before_its_start_is_invalid() -> None:
    assert "window_clock_mismatch" in _reasons(_result(29.0, 32.0, phase_wall_s=-3570.0, phase_monotonic_s=30.6))


def test_a_forward_step_of_an_hour_reads_hours_long_and_is_invalid() -> None:
    result = _result(3633.0, 41.0)
    assert result["window_clock"] == {"wall_s": 3633.0, "monotonic_s": 41.0, "requested_s": 30.0, "grace_s": 10.0,
                                      "max_s": 42.6, "phase_wall_s": None, "phase_monotonic_s": None,
                                      "phase_tolerance_s": None, "agrees": False}
    assert "window_clock_mismatch" in _reasons(result)


def test_a_backward_step_reads_negative_and_is_invalid() -> None:
    assert "window_clock_mismatch" in _reasons(_result(-3567.0, 41.0))


def test_without_the_monotonic_span_the_requested_window_and_grace_bound_it() -> None:
    assert _result(41.0, None)["window_clock"]["agrees"] is True
    assert "window_clock_mismatch" in _reasons(_result(3633.0, None))


def test_a_window_longer_than_its_monotonic_span_is_refused_even_within_the_requested_bound() -> None:
    # the client ran 20 s by the monotonic clock: a 35 s wall-clock window cannot be
    assert "window_clock_mismatch" in _reasons(_result(35.0, 20.0))


def test_a_phase_not_timed_on_the_monotonic_clock_leaves_the_other_checks() -> None:
    result = _result(29.6, 41.2, phase_wall_s=18.0, phase_monotonic_s=None)
    assert result["window_clock"]["agrees"] is True and result["window_clock"]["phase_tolerance_s"] is None


class _Status:
    def __init__(self) -> None:
        self.data: dict[str, Any] = {"phase": "starting"}

    def phase(self, kind: str, note: str) -> None:
        self.data["phase"] = kind


class _Clock:
    def __init__(self) -> None:
        self.ns = 5_000_000_000

    def monotonic_ns(self) -> int:
        return self.ns

    def monotonic(self) -> float:
        return self.ns / 1e9


def _progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ClientProgress, Path, _Clock]:
    clock = _Clock()
    monkeypatch.setattr(client_phase, "time", clock)
    log = tmp_path / "logs" / "aiperf.log"
    log.parent.mkdir()
    log.write_text("")
    return ClientProgress(tmp_path, _Status()), log, clock   # type: ignore[arg-type]


def _log(log: Path, line: str) -> None:
    with open(log, "a") as fh:
        fh.write(f"2026-03-01 12:00:00.000 - PhaseRunner - NOTICE - {line}\n")


def test_the_harness_times_the_profiling_phase_from_its_start_to_its_end_as_seen_in_aiperfs_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    progress, log, clock = _progress(tmp_path, monkeypatch)
    _log(log, "Phase profiling (profiling) started | phase_index=0 | target: 30.0s duration")
    clock.ns += 1_000_000_000
    progress.tick()
    _log(log, "Phase profiling (profiling) sending complete | sent=22, completed=14, in_flight=8")
    clock.ns += 30_000_000_000
    progress.tick()
    _log(log, "Phase profiling (profiling) complete | completed=22, cancelled=0, errors=0")
    clock.ns += 2_500_000_000
    progress.tick()
    clock.ns += 3_000_000_000   # AIPerf writes its exports, then ends
    assert progress.clock() == ProfilingClock(span_s=35.5, phase_s=32.5)


def test_a_phase_whose_start_and_end_are_first_read_together_has_no_length(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    progress, log, clock = _progress(tmp_path, monkeypatch)
    _log(log, "Phase profiling (profiling) started | phase_index=0 | target: 30.0s duration")
    _log(log, "Phase profiling (profiling) complete | completed=22, cancelled=0, errors=0")
    clock.ns += 2_000_000_000
    assert progress.clock() == ProfilingClock(span_s=0.0, phase_s=None)
