"""Rounds of a search: several concurrencies tested at once (as one Slurm job array), as a pure function of the
outcomes so far.

A round follows the same order as one point at a time (`harness.search.order`), only wider:

- gallop: the next concurrency to test and its next doublings, `width` of them (capped at `max_conc`), e.g.
  c1, c2, c4, c8 for width 4;
- bisect: the open interval between the highest non-failing concurrency below the lowest failure and that failure,
  split into `width + 1` parts (its `width` inner points, fewer when it holds fewer).

With width 1 a round is the one concurrency `order.bracket` names, so the search tests the same points as the
local one. A round is empty when the search is done.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.search.order import Outcome, bracket


def next_round(outcomes: Mapping[int, Outcome], min_conc: int, max_conc: int, width: int) -> list[int]:
    """The concurrencies of the next round in increasing order (empty: the search is done)."""
    if width < 1:
        raise ValueError(f"expected a round width of at least 1, got {width}")
    state = bracket(outcomes, min_conc, max_conc)
    if state.next_conc is None:
        return []
    if state.first_fail is None:
        return _gallop(state.next_conc, max_conc, width)
    floor = max(c for c in outcomes if min_conc <= c < state.first_fail)   # as in `bracket`
    return _split(floor, state.first_fail, width)


def _gallop(start: int, max_conc: int, width: int) -> list[int]:
    concs = [start]
    while len(concs) < width and concs[-1] < max_conc:
        concs.append(min(2 * concs[-1], max_conc))
    return concs


def _split(low: int, high: int, width: int) -> list[int]:
    """Up to `width` concurrencies strictly between `low` and `high`, evenly spaced (`width + 1` parts)."""
    inner = high - low - 1
    if inner <= width:
        return list(range(low + 1, high))
    return sorted({low + (high - low) * i // (width + 1) for i in range(1, width + 1)})
