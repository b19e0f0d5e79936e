"""The search loop: ask `order.bracket` for the next concurrency, test it, until the bracket is closed.

Testing a concurrency is a callable (the command runs a fresh server with the ordinary point runner; tests pass
a fake), so the loop is the same wherever the points run. After each point the caller's `on_point` sees the
search so far (the command rewrites `search.json`, so a stopped search leaves what it found).
"""

from __future__ import annotations

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
