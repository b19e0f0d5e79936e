"""The search order: gallop up from min_conc, bisect between the last pass and the first failure; the loop
with a fake point runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.search.driver import run_search
from harness.search.order import Bracket, bracket
from harness.search.slo import parse_slo
from harness.search.spread import Interval
from harness.search.tested import Check, TestedPoint

SLO = parse_slo("ttft_p90<=1")


def fake_point(conc: int, ttft: float, invalid: tuple[str, ...] = ()) -> TestedPoint:
    return TestedPoint(conc, Path(f"/runs/conc{conc}"), "completed", not invalid, invalid,
                        (Check(SLO, ttft, Interval(None, "fake")),), None, "fake")


def search_with(capacity: int, min_conc: int = 1, max_conc: int = 32) -> tuple[list[int], Bracket, bool]:
    """A fake curve: ttft 0.5 s up to `capacity`, 2 s above it."""
    order: list[int] = []

    def test(conc: int, attempt: int) -> TestedPoint:
        order.append(conc)
        return fake_point(conc, 0.5 if conc <= capacity else 2.0)

    run = run_search(min_conc, max_conc, test)
    return order, run.state, run.complete


def test_gallop_then_bisect_to_adjacent_concurrencies() -> None:
    order, state, complete = search_with(capacity=11)
    assert order == [1, 2, 4, 8, 16, 12, 10, 11]
    assert (state.boundary, state.first_fail, state.upper_bound_reached, complete) == (11, 12, False, True)


def test_a_boundary_at_a_power_of_two_needs_no_bisection_below_it() -> None:
    order, state, _ = search_with(capacity=8)
    assert order == [1, 2, 4, 8, 16, 12, 10, 9]
    assert (state.boundary, state.first_fail) == (8, 9)


def test_max_conc_meeting_the_slo_is_the_upper_bound() -> None:
    order, state, _ = search_with(capacity=1000, max_conc=20)
    assert order == [1, 2, 4, 8, 16, 20]
    assert (state.boundary, state.first_fail, state.upper_bound_reached) == (20, None, True)


def test_min_conc_failing_ends_the_search_without_a_boundary() -> None:
    order, state, _ = search_with(capacity=2, min_conc=4)
    assert order == [4]
    assert (state.boundary, state.first_fail, state.next_conc) == (None, 4, None)


def test_the_search_starts_at_min_conc() -> None:
    order, state, _ = search_with(capacity=5, min_conc=3, max_conc=32)
    assert order == [3, 6, 4, 5]
    assert (state.boundary, state.first_fail) == (5, 6)


def test_an_invalid_point_fails_the_slo_whatever_its_metrics() -> None:
    order: list[int] = []

    def test(conc: int, attempt: int) -> TestedPoint:
        order.append(conc)
        return fake_point(conc, 0.1, () if conc < 4 else ("error_ratio",))

    run = run_search(1, 32, test)
    assert order == [1, 2, 4, 3]
    assert (run.state.boundary, run.state.first_fail) == (3, 4)
    assert [v.outcome for v in run.tested] == ["pass", "pass", "fail", "pass"]


def test_too_little_evidence_at_low_concurrency_is_inconclusive_and_the_gallop_goes_on() -> None:
    """A short window at c1 and c2 completes too few requests: no pass, no sign of the limit either; below the
    boundary they never matter, so they are not tested again."""
    order: list[int] = []

    def test(conc: int, attempt: int) -> TestedPoint:
        order.append(conc)
        return fake_point(conc, 0.5 if conc <= 11 else 2.0, ("too_few_completed",) if conc < 4 else ())

    run = run_search(1, 32, test)
    assert order == [1, 2, 4, 8, 16, 12, 10, 11]
    assert [v.outcome for v in run.tested][:3] == ["inconclusive", "inconclusive", "pass"]
    assert (run.state.boundary, run.state.first_fail) == (11, 12)


def test_a_breach_on_too_small_a_sample_is_inconclusive_and_another_invalidity_a_failure() -> None:
    assert fake_point(2, 2.0, ("too_few_completed",)).outcome == "inconclusive"
    assert fake_point(2, 0.5, ("too_few_completed", "error_ratio")).outcome == "fail"


def test_only_inconclusive_points_below_the_failure_give_no_boundary() -> None:
    assert bracket({1: "inconclusive", 2: "fail"}, 1, 32) == Bracket(None, 2, None, False, None, 1)
    assert bracket({1: "inconclusive", 2: "fail"}, 1, 32, {1}).next_conc == 1     # re-tested while it may be
    assert bracket({1: "inconclusive", 4: "fail"}, 1, 32) == Bracket(None, 4, 2, False, None, 3)


def test_a_pass_above_the_first_failure_does_not_move_the_boundary() -> None:
    state = bracket({1: "pass", 2: "pass", 4: "fail", 8: "pass", 3: "fail"}, 1, 32)
    assert state == Bracket(boundary=2, first_fail=3, next_conc=None, upper_bound_reached=False, low=2, high=2)


def test_a_stopped_search_is_incomplete_and_keeps_what_it_found() -> None:
    def test(conc: int, attempt: int) -> TestedPoint | None:
        return fake_point(conc, 0.5) if conc < 4 else None

    run = run_search(1, 32, test)
    assert [v.conc for v in run.tested] == [1, 2]
    assert (run.complete, run.state.boundary, run.state.next_conc) == (False, 2, 4)


def test_each_point_is_seen_as_it_completes() -> None:
    seen: list[list[int]] = []
    run_search(1, 4, lambda c, a: fake_point(c, 0.5), lambda r: seen.append([v.conc for v in r.tested]))
    assert seen == [[1], [1, 2], [1, 2, 4]]


def test_equal_bounds_test_one_point() -> None:
    assert bracket({}, 5, 5).next_conc == 5
    assert bracket({5: "pass"}, 5, 5) == Bracket(5, None, None, True, 5, 5)
    assert bracket({5: "fail"}, 5, 5) == Bracket(None, 5, None, False, None, None)
    assert bracket({5: "inconclusive"}, 5, 5) == Bracket(None, None, None, False, None, 5)
    assert bracket({5: "inconclusive"}, 5, 5, {5}).next_conc == 5


def test_bounds_are_checked() -> None:
    with pytest.raises(ValueError, match="min_conc <= max_conc"):
        bracket({}, 4, 2)
