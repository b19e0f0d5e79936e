"""The order of a search over concurrency, as a pure function of the outcomes so far.

Each tested concurrency is `pass` (meets the SLO), `fail`, or `inconclusive` (every expression held but the
point is invalid only for too little evidence, e.g. too few completed requests in a short window at a low
concurrency: no sign of the limit, and no pass either).

Gallop: test `min_conc`, then double the highest tested concurrency (capped at `max_conc`) until a point fails.
Bisect: between `floor` (the highest tested concurrency below the lowest failure that did not fail) and the
lowest failure (`first_fail`), test the midpoint until they are adjacent. The search ends there, when
`min_conc` fails, or when `max_conc` is tested without failing. The boundary is the highest passing
concurrency below the lowest failure (`upper_bound_reached` when that is `max_conc`).

A pass above the lowest failure (latency is noisy; a curve need not be monotonic) does not move the boundary;
it is reported (`above_boundary_passes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Outcome = Literal["pass", "fail", "inconclusive"]


@dataclass(frozen=True)
class Bracket:
    """Where the search stands: the boundary so far, the lowest failure, and the next concurrency to test."""

    boundary: int | None       # the highest tested concurrency that meets the SLO below every failure
    first_fail: int | None     # the lowest tested concurrency that fails
    next_conc: int | None      # the concurrency to test next; None when the search is done
    upper_bound_reached: bool  # max_conc met the SLO (the true boundary may be higher)


def check_bounds(min_conc: int, max_conc: int) -> None:
    if min_conc < 1 or max_conc < min_conc:
        raise ValueError(f"expected 1 <= min_conc <= max_conc, got {min_conc}, {max_conc}")


def bracket(outcomes: Mapping[int, Outcome], min_conc: int, max_conc: int) -> Bracket:
    """The state of the search given the `outcomes` (concurrency -> outcome) of the points tested so far."""
    check_bounds(min_conc, max_conc)
    tested = {c: o for c, o in outcomes.items() if min_conc <= c <= max_conc}
    fails = sorted(c for c, o in tested.items() if o == "fail")
    first_fail = fails[0] if fails else None
    below = sorted(c for c in tested if first_fail is None or c < first_fail)   # passes and inconclusive ones
    passes = [c for c in below if tested[c] == "pass"]
    boundary = passes[-1] if passes else None
    upper = boundary == max_conc
    if not below:
        if min_conc in tested:   # min_conc failed
            return Bracket(None, first_fail, None, False)
        return Bracket(None, first_fail, min_conc, False)
    floor = below[-1]
    if first_fail is None:
        next_conc = None if floor >= max_conc else min(2 * floor, max_conc)
        return Bracket(boundary, None, next_conc, upper)
    if first_fail - floor <= 1:
        return Bracket(boundary, first_fail, None, upper)
    return Bracket(boundary, first_fail, (floor + first_fail) // 2, upper)


def above_boundary_passes(outcomes: Mapping[int, Outcome], first_fail: int | None) -> list[int]:
    """Tested concurrencies above the lowest failure that met the SLO anyway (noise, or a curve that is not
    monotonic): reported, never taken as the boundary."""
    if first_fail is None:
        return []
    return sorted(c for c, o in outcomes.items() if o == "pass" and c > first_fail)
