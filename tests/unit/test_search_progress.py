"""The search's progress: the most tests left if every test is conclusive, hand-counted for a few states, and
the "test N of at most M" line with its ETA on a fake clock."""

from __future__ import annotations

from pathlib import Path

from harness.search.driver import Budget, run_search
from harness.search.order import Outcome
from harness.search.progress import AtMost, Progress, at_most, most_tests_left, progress_text, rounds_at_most
from harness.search.rounds import most_rounds_left, round_tests
from harness.search.slo import parse_slo
from harness.search.spread import Interval
from harness.search.tested import Check, TestedPoint

SLO = parse_slo("ttft_p90<=1")
PASSED_TO_8: dict[int, Outcome] = {1: "pass", 2: "pass", 4: "pass", 8: "pass"}


def test_a_fresh_search_of_c1_to_c32_needs_at_most_ten_tests() -> None:
    # c1..c16 pass and c32 fails (6), then c17..c31 bisected: 15 -> 7 -> 3 -> 1 (4)
    assert most_tests_left({}, {}, 1, 32, 1) == 10


def test_a_bracket_of_seven_untested_concurrencies_needs_three() -> None:
    outcomes: dict[int, Outcome] = {**PASSED_TO_8, 16: "fail"}
    assert most_tests_left(outcomes, dict.fromkeys(outcomes, 1), 1, 32, 3) == 3
    assert at_most(outcomes, dict.fromkeys(outcomes, 1), 1, 32, 3, None) == AtMost(6, 8, True)


def test_a_retestable_inconclusive_point_is_counted_once_before_the_halves_it_splits() -> None:
    outcomes: dict[int, Outcome] = {**PASSED_TO_8, 16: "fail", 12: "inconclusive"}
    # c12 again (1), then c9..c11 or c13..c15 (2)
    assert most_tests_left(outcomes, dict.fromkeys(outcomes, 1), 1, 32, 3) == 3


def test_an_inconclusive_point_out_of_tests_is_skipped_and_no_more_are_promised() -> None:
    outcomes: dict[int, Outcome] = {**PASSED_TO_8, 16: "fail", 12: "inconclusive"}
    # c11 of 9,10,11,13,14,15; a pass leaves c13..c15 (2 more), a fail c9..c10 (1 more)
    assert at_most(outcomes, dict.fromkeys(outcomes, 1), 1, 32, 1, None) == AtMost(7, 9, False)


def test_the_total_is_capped_at_max_points() -> None:
    assert at_most({}, {}, 1, 32, 3, 4) == AtMost(1, 4, False)
    assert at_most({}, {}, 1, 32, 3, 40) == AtMost(1, 10, True)


def test_a_finished_search_has_no_test_left() -> None:
    assert most_tests_left({1: "pass", 2: "fail"}, {1: 1, 2: 1}, 1, 2, 3) == 0


def test_the_line_has_no_eta_for_the_first_test_then_the_mean_time_per_test() -> None:
    times = iter([100.0, 400.0, 1000.0])
    progress = Progress(clock=lambda: next(times))
    assert progress.line(AtMost(1, 10, True), 1) == "[search] c1: test 1 of at most 10 (more if a point is inconclusive)"
    assert progress.line(AtMost(2, 10, False), 2) == \
        "[search] c2: test 2 of at most 10, ETA 45 min (5.0 min per test so far)"
    assert progress.line(AtMost(3, 3, False), 4) == "[search] c4: test 3 of at most 3, ETA 8 min (7.5 min per test so far)"


def test_the_search_reports_each_test_as_it_starts() -> None:
    starts: list[tuple[int, int, int]] = []

    def test(conc: int, attempt: int) -> TestedPoint:
        ttft = 0.5 if conc <= 11 else 2.0
        return TestedPoint(conc, Path(f"/runs/conc{conc}"), "completed", True, (),
                           (Check(SLO, ttft, Interval(None, "fake")),), None, "fake")

    run_search(1, 32, test, budget=Budget(attempts=1),
               on_start=lambda count, conc: starts.append((count.number, count.total, conc)))
    assert starts == [(1, 10, 1), (2, 10, 2), (3, 10, 4), (4, 10, 8), (5, 10, 16), (6, 8, 12), (7, 8, 10), (8, 8, 11)]


def _rounds_by_brute_force(outcomes: dict[int, Outcome], lo: int, hi: int, width: int, attempts: int) -> int:
    """Every monotone way each round can end, without the memo."""
    def worst(extra: dict[int, Outcome]) -> int:
        merged = {**outcomes, **extra}
        counts = {**dict.fromkeys(outcomes, 1), **dict.fromkeys(extra, 1)}
        concs = sorted(c for c, _ in round_tests(merged, counts, lo, hi, width, attempts))
        if not concs:
            return 0
        return 1 + max(worst({**extra, **{c: "pass" if i < k else "fail" for i, c in enumerate(concs)}})
                       for k in range(len(concs) + 1))
    return worst({})


def test_rounds_of_one_are_the_tests_of_one_at_a_time() -> None:
    assert most_rounds_left({}, {}, 1, 32, 1, 1) == most_tests_left({}, {}, 1, 32, 1) == 10


def test_a_fresh_search_of_c1_to_c32_in_rounds_of_four_needs_at_most_four() -> None:
    # c1, c2, c4, c8; c16, c32 (c32 fails); c17..c31 split in five parts by four tests; one part's 3 at most
    assert most_rounds_left({}, {}, 1, 32, 4, 1) == 4
    assert rounds_at_most({}, {}, 1, 32, 4, 2, 0) == AtMost(1, 4, True, unit="round")


def test_the_most_rounds_agree_with_brute_force() -> None:
    for width in (2, 3, 4):
        for hi in (8, 20, 64):
            for outcomes in ({}, {4: "inconclusive"}, {2: "pass", 6: "inconclusive"}):
                got = {c: o for c, o in outcomes.items() if c <= hi}
                assert most_rounds_left(got, dict.fromkeys(got, 1), 1, hi, width, 2) == \
                    _rounds_by_brute_force(got, 1, hi, width, 2), (width, hi, got)


def test_the_round_line_has_its_eta_per_round() -> None:
    assert progress_text(AtMost(3, 5, False, unit="round"), 1200.0, 2) == \
        "round 3 of at most 5, ETA 30 min (10.0 min per round so far)"
