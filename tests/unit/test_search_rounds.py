"""Rounds of a search (several concurrencies at once, one Slurm job array each): the planner and the loop, with a
fake point runner."""

from __future__ import annotations

import pytest

from harness.search.driver import RoundResult, run_rounds, run_search
from harness.search.order import Outcome
from harness.search.rounds import next_round
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

    def test_round(number: int, concs: list[int]) -> RoundResult:
        assert number == len(rounds) + 1
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
    def test_round(number: int, concs: list[int]) -> RoundResult:
        if number == 2:
            return RoundResult((fake_point(concs[0], 0.5),), stopped=True)
        return RoundResult(tuple(fake_point(c, 0.5) for c in concs))

    run = run_rounds(1, 32, 2, test_round)
    assert not run.complete and [v.conc for v in run.tested] == [1, 2, 4]
    with pytest.raises(ValueError, match="round 1"):
        run_rounds(1, 32, 2, lambda n, concs: RoundResult((fake_point(concs[0], 0.5),)))
