"""Rounds of a search (several concurrencies at once, one Slurm job array each): the planner and the loop, with a
fake point runner; re-tests of inconclusive concurrencies as the local search makes them."""

from __future__ import annotations

import pytest

from harness.search.driver import Budget, RoundResult, run_rounds, run_search
from harness.search.order import Outcome
from harness.search.rounds import next_round, round_tests
from harness.search.tested import TestedPoint
from tests.unit.test_search_order import fake_point


def test_gallop_round_is_the_next_doublings_capped() -> None:
    assert next_round({}, 1, 32, 4) == [1, 2, 4, 8]
    assert next_round({1: "pass", 2: "pass"}, 1, 32, 3) == [4, 8, 16]
    assert next_round({1: "pass", 2: "pass", 4: "pass", 8: "pass"}, 1, 20, 4) == [16, 20]
    assert next_round({1: "inconclusive"}, 1, 32, 2) == [2, 4]
    assert next_round({}, 3, 3, 4) == [3]


def test_bisect_round_splits_the_interval_into_width_plus_one_parts() -> None:
    assert next_round({1: "pass", 2: "pass", 4: "pass", 8: "pass", 16: "fail"}, 1, 32, 3) == [10, 12, 14]
    assert next_round({8: "pass", 16: "fail"}, 1, 32, 1) == [12]
    assert next_round({8: "pass", 11: "fail"}, 1, 32, 4) == [9, 10]   # fewer inner points than the width
    # an inconclusive point is unknown, not a floor: the untested ones of c1..c15 around it are split
    assert next_round({4: "pass", 8: "inconclusive", 16: "fail"}, 1, 32, 2) == [7, 12]
    assert next_round({4: "pass", 5: "inconclusive", 6: "fail"}, 1, 32, 2) == []   # nothing left to test


def test_empty_round_when_the_search_is_done() -> None:
    assert next_round({1: "fail"}, 1, 32, 4) == []
    assert next_round({7: "pass", 8: "fail"}, 1, 32, 4) == []
    assert next_round({32: "pass", 16: "pass"}, 1, 32, 4) == []
    with pytest.raises(ValueError):
        next_round({}, 1, 32, 0)


@pytest.mark.parametrize("capacity", [0, 1, 5, 7, 11, 31, 32])
def test_width_one_tests_the_points_of_the_local_search(capacity: int) -> None:
    local = run_search(1, 32, lambda c, a: fake_point(c, 0.5 if c <= capacity else 2.0))
    outcomes: dict[int, Outcome] = {}
    order = []
    while concs := next_round(outcomes, 1, 32, 1):
        assert len(concs) == 1
        order.append(concs[0])
        outcomes[concs[0]] = "pass" if concs[0] <= capacity else "fail"
    assert order == [v.conc for v in local.tested]


@pytest.mark.parametrize("width", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("capacity", [0, 1, 6, 7, 12, 31, 40])
def test_rounds_find_the_same_boundary_as_one_point_at_a_time(capacity: int, width: int) -> None:
    rounds: list[list[int]] = []

    def test_round(number: int, tests: list[tuple[int, int]]) -> RoundResult:
        assert number == len(rounds) + 1 and all(a == 1 for _, a in tests)
        concs = [c for c, _ in tests]
        rounds.append(concs)
        return RoundResult(tuple(fake_point(c, 0.5 if c <= capacity else 2.0) for c in reversed(concs)))

    run = run_rounds(1, 32, width, test_round)
    local = run_search(1, 32, lambda c, a: fake_point(c, 0.5 if c <= capacity else 2.0))
    assert run.complete and run.state == local.state
    assert all(1 <= len(r) <= width for r in rounds)
    tested = [v.conc for v in run.tested]
    assert tested == [c for r in rounds for c in r] and len(set(tested)) == len(tested)
    if width > 1 and capacity >= 6:
        assert len(rounds) < len(local.tested)   # wider rounds take fewer of them


def test_a_stopped_round_ends_the_run_incomplete_with_its_tested_points() -> None:
    def test_round(number: int, tests: list[tuple[int, int]]) -> RoundResult:
        if number == 2:
            return RoundResult((fake_point(tests[0][0], 0.5),), stopped=True)
        return RoundResult(tuple(fake_point(c, 0.5) for c, _ in tests))

    run = run_rounds(1, 32, 2, test_round)
    assert not run.complete and [v.conc for v in run.tested] == [1, 2, 4]
    with pytest.raises(ValueError, match="round 1"):
        run_rounds(1, 32, 2, lambda n, tests: RoundResult((fake_point(tests[0][0], 0.5),)))


def test_a_round_re_tests_an_inconclusive_point_inside_the_bracket() -> None:
    outcomes: dict[int, Outcome] = {4: "pass", 8: "inconclusive", 16: "fail"}
    assert round_tests(outcomes, {4: 1, 8: 1, 16: 1}, 1, 32, 1, 3) == [(8, 2)]   # as `order.bracket` picks it
    assert round_tests(outcomes, {4: 1, 8: 1, 16: 1}, 1, 32, 3, 3) == [(8, 2), (7, 1), (12, 1)]
    assert round_tests(outcomes, {4: 1, 8: 2, 16: 1}, 1, 32, 2, 3) == [(8, 3), (10, 1)]   # the third test
    # an inconclusive point below the boundary is not re-tested; nor one in the gallop
    assert round_tests({4: "inconclusive", 8: "pass", 16: "fail"}, {4: 1, 8: 1, 16: 1}, 1, 32, 2, 3) == [
        (10, 1), (13, 1)]
    assert round_tests({1: "inconclusive"}, {1: 1}, 1, 32, 2, 3) == [(2, 1), (4, 1)]


def test_attempts_beyond_the_budget_are_not_scheduled_and_width_caps_the_round() -> None:
    outcomes: dict[int, Outcome] = {4: "pass", 5: "inconclusive", 6: "fail"}
    assert round_tests(outcomes, {4: 1, 5: 3, 6: 1}, 1, 32, 4, 3) == []   # spent: the answer is uncertain
    assert round_tests(outcomes, {4: 1, 5: 1, 6: 1}, 1, 32, 4, 1) == []
    assert round_tests(outcomes, {4: 1, 5: 2, 6: 1}, 1, 32, 4, 3) == [(5, 3)]
    many: dict[int, Outcome] = {4: "pass", **dict.fromkeys(range(5, 10), "inconclusive"), 10: "fail"}
    tests = dict.fromkeys(many, 1)
    assert round_tests(many, tests, 1, 32, 2, 3) == [(6, 2), (8, 2)]   # evenly spaced, as a split
    assert len(round_tests(many, tests, 1, 32, 8, 3)) == 5


def _noisy(conc: int, attempt: int) -> TestedPoint:
    """c1..c6 pass, c7 is inconclusive on its first test only, above c7 fails."""
    if conc == 7:
        return fake_point(7, 0.5, ("too_few_completed",)) if attempt == 1 else fake_point(7, 0.5)
    return fake_point(conc, 0.5 if conc < 7 else 2.0)


@pytest.mark.parametrize("width", [1, 2, 4])
def test_rounds_re_test_and_count_every_test_as_the_local_search_does(width: int) -> None:
    rounds: list[list[tuple[int, int]]] = []

    def test_round(number: int, tests: list[tuple[int, int]]) -> RoundResult:
        rounds.append(tests)
        return RoundResult(tuple(_noisy(c, a) for c, a in tests))

    run = run_rounds(1, 32, width, test_round)
    local = run_search(1, 32, _noisy)
    assert run.complete and run.state == local.state and run.state.boundary == 7
    assert (7, 2) in [t for r in rounds for t in r] and [v.conc for v in run.tested].count(7) == 2
    if width == 1:
        assert [c for r in rounds for c, _ in r] == [v.conc for v in local.tested]
    # the budget counts re-tests too
    capped = run_rounds(1, 32, width, test_round, budget=Budget(max_points=len(run.tested) - 1))
    assert len(capped.tested) == len(run.tested) - 1 and capped.budget_reason is not None
