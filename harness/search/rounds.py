"""Rounds of a search: several concurrencies tested at once (as one Slurm job array), as a pure function of the
outcomes so far.

A round follows the same order as one point at a time (`harness.search.order`), only wider:

- gallop: the next concurrency to test and its next doublings, `width` of them (capped at `max_conc`), e.g.
  c1, c2, c4, c8 for width 4;
- bisect: the untested concurrencies of the interval in which the boundary lies (`Bracket.low`, `Bracket.high`),
  split into `width + 1` parts (`width` of them, all when it holds fewer).

A round re-tests no inconclusive concurrency: it stays unknown, and an answer that rests on it is uncertain. With
width 1 a round is the one concurrency `order.bracket` names without re-tests, so the search tests the same points
as the local one would. A round is empty when the search is done.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.search.order import Outcome, bracket, untested_inside


def next_round(outcomes: Mapping[int, Outcome], min_conc: int, max_conc: int, width: int) -> list[int]:
    """The concurrencies of the next round in increasing order (empty: the search is done)."""
    if width < 1:
        raise ValueError(f"expected a round width of at least 1, got {width}")
    state = bracket(outcomes, min_conc, max_conc)
    if state.next_conc is None:
        return []
    tested = [c for c in outcomes if min_conc <= c <= max_conc]
    if not tested or (state.first_fail is None and max(tested) < max_conc):   # the gallop, as in `bracket`
        return _gallop(state.next_conc, max_conc, width)
    return _split(untested_inside(outcomes, state, min_conc), width)


def _gallop(start: int, max_conc: int, width: int) -> list[int]:
    concs = [start]
    while len(concs) < width and concs[-1] < max_conc:
        concs.append(min(2 * concs[-1], max_conc))
    return concs


def _split(concs: list[int], width: int) -> list[int]:
    """Up to `width` of `concs` (increasing), evenly spaced (`width + 1` parts); width 1 gives the middle one, as
    `order.bracket` picks it."""
    if len(concs) <= width:
        return concs
    return sorted({concs[(len(concs) + 1) * i // (width + 1) - 1] for i in range(1, width + 1)})
