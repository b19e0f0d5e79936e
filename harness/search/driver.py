"""The search loop: ask `order.bracket` for the next concurrency, test it, until the bracket is closed; or, in
rounds (`run_rounds`, a Slurm job array each), ask `rounds.next_round` for several and test them together.

Testing a concurrency is a callable (the command runs a fresh server with the ordinary point runner; tests pass
a fake), so the loop is the same wherever the points run. After each point the caller's `on_point` sees the
search so far (the command rewrites `search.json`, so a stopped search leaves what it found).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from harness.search.order import Bracket, bracket
from harness.search.verdict import PointVerdict


@dataclass(frozen=True)
class SearchRun:
    """The tested points in the order tested, the bracket they give, and whether the search reached its end."""

    tested: tuple[PointVerdict, ...]
    state: Bracket
    complete: bool


def run_search(min_conc: int, max_conc: int, test: Callable[[int], PointVerdict | None],
               on_point: Callable[[SearchRun], object] | None = None) -> SearchRun:
    """Test concurrencies in the search's order; `test` returns None when the search must stop (a signal, a
    full disk): then the run is incomplete."""
    tested: list[PointVerdict] = []
    while True:
        state = bracket({v.conc: v.outcome for v in tested}, min_conc, max_conc)
        if state.next_conc is None:
            return SearchRun(tuple(tested), state, True)
        verdict = test(state.next_conc)
        if verdict is None:
            return SearchRun(tuple(tested), state, False)
        if verdict.conc != state.next_conc:
            raise ValueError(f"tested c{verdict.conc} for c{state.next_conc}")
        tested.append(verdict)
        if on_point is not None:
            on_point(SearchRun(tuple(tested), bracket({v.conc: v.outcome for v in tested}, min_conc, max_conc),
                               False))


@dataclass(frozen=True)
class RoundResult:
    """A tested round: the verdicts it gave (in increasing concurrency) and whether the search must stop."""

    verdicts: tuple[PointVerdict, ...]
    stopped: bool = False


def run_rounds(min_conc: int, max_conc: int, width: int, test_round: Callable[[int, list[int]], RoundResult],
               on_round: Callable[[SearchRun], object] | None = None) -> SearchRun:
    """Test rounds of up to `width` concurrencies (`rounds.next_round`) until the bracket is closed.
    `test_round(n, concs)` tests round n (from 1); a stopped round ends the run incomplete, with the verdicts it
    did give."""
    from harness.search.rounds import next_round

    tested: list[PointVerdict] = []
    for number in itertools.count(1):
        outcomes = {v.conc: v.outcome for v in tested}
        concs = next_round(outcomes, min_conc, max_conc, width)
        if not concs:
            return SearchRun(tuple(tested), bracket(outcomes, min_conc, max_conc), True)
        result = test_round(number, concs)
        given = {v.conc for v in result.verdicts}
        if given - set(concs) or (not result.stopped and given != set(concs)):
            raise ValueError(f"round {number} of {concs} gave verdicts for {sorted(given)}")
        tested.extend(sorted(result.verdicts, key=lambda v: v.conc))
        run = SearchRun(tuple(tested), bracket({v.conc: v.outcome for v in tested}, min_conc, max_conc), False)
        if result.stopped:
            return run
        if on_round is not None:
            on_round(run)
    raise AssertionError("unreachable")
