"""The search loop: ask `order.bracket` for the next concurrency, test it, until the bracket is closed; or, in
rounds (`run_rounds`, a Slurm job array each), ask `rounds.round_tests` for several and test them together.

An inconclusive concurrency is tested again (`test(conc, attempt)`: attempt 2 and on), up to `Budget.attempts`
tests in all; the command runs attempt 2 with a longer window and attempt 3 as a repeat of it on a fresh server.
A concurrency counts as its latest test says (in rounds too: a round re-tests as the local order would). The
search spends at most `Budget.max_points` tests, and starts
none once `Budget.out_of_time()` says so; a search that ends on its budget says why (`SearchRun.budget_reason`),
and its answer is uncertain where the bracket is not closed.

Testing a concurrency is a callable (the command runs a fresh server with the ordinary point runner; tests pass
a fake), so the loop is the same wherever the points run. After each point the caller's `on_point` sees the
search so far (the command rewrites `search.json`, so a stopped search leaves what it found).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from harness.search.order import Bracket, Outcome, bracket, retestable
from harness.search.progress import AtMost, at_most, rounds_at_most
from harness.search.rounds import round_tests
from harness.search.tested import TestedPoint

ATTEMPTS = 3   # the first test, a longer window, a repeat of it


@dataclass(frozen=True)
class Budget:
    """What a search may spend: tests in all (None: no bound), tests per concurrency, and time."""

    max_points: int | None = None
    attempts: int = ATTEMPTS
    out_of_time: Callable[[], str | None] = field(default=lambda: None)   # why no further test starts, or None

    def spent(self, tests: int) -> str | None:
        if self.max_points is not None and tests >= self.max_points:
            return f"--max-points {self.max_points} spent"
        return self.out_of_time()


@dataclass(frozen=True)
class SearchRun:
    """The tested points in the order tested, the bracket they give, whether the search reached its end, and
    why it ended before its bracket was closed (its budget), if it did."""

    tested: tuple[TestedPoint, ...]
    state: Bracket
    complete: bool
    budget_reason: str | None = None


def latest_outcomes(tested: Sequence[TestedPoint]) -> dict[int, Outcome]:
    """Each tested concurrency's outcome, as its latest test says."""
    return {v.conc: v.outcome for v in tested}


def state_of(tested: Sequence[TestedPoint], min_conc: int, max_conc: int, attempts: int = ATTEMPTS) -> Bracket:
    """The bracket of the tests so far, an inconclusive concurrency re-testable while it has tests left."""
    outcomes = latest_outcomes(tested)
    return bracket(outcomes, min_conc, max_conc, retestable(outcomes, Counter(v.conc for v in tested), attempts))


def run_search(min_conc: int, max_conc: int, test: Callable[[int, int], TestedPoint | None],
               on_point: Callable[[SearchRun], object] | None = None, budget: Budget | None = None,
               on_start: Callable[[AtMost, int], object] | None = None) -> SearchRun:
    """Test concurrencies in the search's order; `test(conc, attempt)` returns None when the search must stop
    (a signal, a full disk): then the run is incomplete. `on_start(count, conc)` sees each test's number and the
    most tests in all (`progress.at_most`) as it starts."""
    budget = budget or Budget()
    tested: list[TestedPoint] = []
    while True:
        state = state_of(tested, min_conc, max_conc, budget.attempts)
        if state.next_conc is None:
            return SearchRun(tuple(tested), state, True)
        spent = budget.spent(len(tested))
        if spent is not None:
            return SearchRun(tuple(tested), state_of(tested, min_conc, max_conc, 0), True, spent)
        attempt = 1 + sum(1 for v in tested if v.conc == state.next_conc)
        if on_start is not None:
            on_start(at_most(latest_outcomes(tested), Counter(v.conc for v in tested), min_conc, max_conc,
                             budget.attempts, budget.max_points), state.next_conc)
        point = test(state.next_conc, attempt)
        if point is None:
            return SearchRun(tuple(tested), state, False)
        if point.conc != state.next_conc:
            raise ValueError(f"tested c{point.conc} for c{state.next_conc}")
        tested.append(point)
        if on_point is not None:
            on_point(SearchRun(tuple(tested), state_of(tested, min_conc, max_conc, budget.attempts), False))


@dataclass(frozen=True)
class RoundResult:
    """A tested round: the points it tested (in increasing concurrency) and whether the search must stop."""

    tested: tuple[TestedPoint, ...]
    stopped: bool = False


def run_rounds(min_conc: int, max_conc: int, width: int,
               test_round: Callable[[int, list[tuple[int, int]]], RoundResult],
               on_round: Callable[[SearchRun], object] | None = None, budget: Budget | None = None,
               on_start: Callable[[AtMost], object] | None = None) -> SearchRun:
    """Test rounds of up to `width` tests (`rounds.round_tests`) until the bracket is closed.
    `test_round(n, tests)` tests round n (from 1), `tests` its (concurrency, attempt) pairs; a stopped round ends
    the run incomplete, with the points it did test. Every test counts against `budget.max_points` (a round is
    cut to what is left of it, re-tests kept first) and each concurrency as its latest test says. `on_start(count)`
    sees each round's number and the most rounds in all (`progress.rounds_at_most`) as it starts."""
    budget = budget or Budget()
    tested: list[TestedPoint] = []
    for number in itertools.count(1):
        tests = round_tests(latest_outcomes(tested), Counter(v.conc for v in tested), min_conc, max_conc, width,
                            budget.attempts)
        if not tests:
            return SearchRun(tuple(tested), state_of(tested, min_conc, max_conc, budget.attempts), True)
        spent = budget.spent(len(tested))
        if spent is not None:
            return SearchRun(tuple(tested), state_of(tested, min_conc, max_conc, 0), True, spent)
        if budget.max_points is not None:
            tests = tests[:budget.max_points - len(tested)]
        tests = sorted(tests)
        concs = [c for c, _ in tests]
        if on_start is not None:
            on_start(rounds_at_most(latest_outcomes(tested), Counter(v.conc for v in tested), min_conc, max_conc,
                                    width, budget.attempts, number - 1))
        result = test_round(number, tests)
        given = {v.conc for v in result.tested}
        if given - set(concs) or (not result.stopped and given != set(concs)) or len(given) < len(result.tested):
            raise ValueError(f"round {number} of {concs} gave outcomes for {sorted(v.conc for v in result.tested)}")
        tested.extend(sorted(result.tested, key=lambda v: v.conc))
        run = SearchRun(tuple(tested), state_of(tested, min_conc, max_conc, budget.attempts), False)
        if result.stopped:
            return run
        if on_round is not None:
            on_round(run)
    raise AssertionError("unreachable")
