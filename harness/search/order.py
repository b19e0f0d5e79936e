"""The order of a search over concurrency, as a pure function of the outcomes so far.

Each tested concurrency is `pass` (meets the SLO on a point whose sample can tell), `fail`, or `inconclusive`
(its sample cannot tell: `harness.search.tested`). An inconclusive concurrency is never counted as a pass or a
fail: it is re-tested while it may be (`retestable`: the caller counts its tests), else it stays unknown.

Gallop: test `min_conc`, then double the highest tested concurrency (capped at `max_conc`) until a point fails
or `max_conc` is tested. Then the boundary lies in `[low, high]`: `low` the highest pass below the lowest
failure (`first_fail`), `high` the concurrency below that failure (`max_conc` without one). While `low < high`:
re-test an inconclusive concurrency inside `(low, high]` that may be re-tested (the middle one), else test the
middle one of the untested concurrencies there. The search ends when `low == high` (the answer is certain:
the boundary's neighbours are a pass and a failure, or `max_conc` passed, or `min_conc` failed), or when only
inconclusive concurrencies that may not be re-tested are left inside: then the answer is uncertain, and
`[low, high]` is where the boundary lies.

A pass above the lowest failure (latency is noisy; a curve need not be monotonic) does not move the boundary;
it is reported (`above_boundary_passes`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

Outcome = Literal["pass", "fail", "inconclusive"]


@dataclass(frozen=True)
class Bracket:
    """Where the search stands: the boundary so far, the lowest failure, the next concurrency to test, and the
    interval `[low, high]` in which the boundary lies (`low` None: possibly no concurrency meets the SLO; `high`
    None: none does, `min_conc` failed)."""

    boundary: int | None       # the highest tested concurrency that meets the SLO below every failure
    first_fail: int | None     # the lowest tested concurrency that fails
    next_conc: int | None      # the concurrency to test next; None when the search is done
    upper_bound_reached: bool  # max_conc met the SLO (the true boundary may be higher)
    low: int | None = None
    high: int | None = None

    @property
    def settled(self) -> bool:
        """The boundary is known: `low == high`."""
        return self.low == self.high

    def unknown(self, outcomes: Mapping[int, Outcome]) -> list[int]:
        """The inconclusive concurrencies inside the interval: why the answer is not settled."""
        lo = 0 if self.low is None else self.low
        hi = lo if self.high is None else self.high
        return sorted(c for c, o in outcomes.items() if o == "inconclusive" and lo < c <= hi)


def check_bounds(min_conc: int, max_conc: int) -> None:
    if min_conc < 1 or max_conc < min_conc:
        raise ValueError(f"expected 1 <= min_conc <= max_conc, got {min_conc}, {max_conc}")


def bracket(outcomes: Mapping[int, Outcome], min_conc: int, max_conc: int,
            retestable: Collection[int] = ()) -> Bracket:
    """The state of the search given the `outcomes` (concurrency -> outcome) of the points tested so far;
    `retestable`: the inconclusive concurrencies that may be tested again."""
    check_bounds(min_conc, max_conc)
    tested = {c: o for c, o in outcomes.items() if min_conc <= c <= max_conc}
    fails = sorted(c for c, o in tested.items() if o == "fail")
    first_fail = fails[0] if fails else None
    passes = [c for c in sorted(tested) if tested[c] == "pass" and (first_fail is None or c < first_fail)]
    boundary = passes[-1] if passes else None
    upper = boundary == max_conc
    low = boundary
    high = max_conc if first_fail is None else (first_fail - 1 if first_fail > min_conc else None)
    if not tested:
        return Bracket(None, None, min_conc, False, None, max_conc)
    top = max(tested)
    if first_fail is None and top < max_conc:   # gallop
        return Bracket(boundary, None, min(2 * top, max_conc), upper, low, high)
    if high is None or (low is not None and low >= high):
        return Bracket(boundary, first_fail, None, upper, low, high)
    inside = range((min_conc if low is None else low + 1), high + 1)
    again = [c for c in inside if tested.get(c) == "inconclusive" and c in retestable]
    fresh = [c for c in inside if c not in tested]
    pick = _middle(again) if again else _middle(fresh)
    return Bracket(boundary, first_fail, pick, upper, low, high)


def retestable(outcomes: Mapping[int, Outcome], tests: Mapping[int, int], attempts: int) -> set[int]:
    """The inconclusive concurrencies that may be tested again: tested fewer than `attempts` times (`tests`)."""
    return {c for c, o in outcomes.items() if o == "inconclusive" and tests.get(c, 0) < attempts}


def untested_inside(outcomes: Mapping[int, Outcome], state: Bracket, min_conc: int) -> list[int]:
    """The untested concurrencies inside the bracket's interval, in increasing order."""
    if state.high is None:
        return []
    start = min_conc if state.low is None else state.low + 1
    return [c for c in range(start, state.high + 1) if c not in outcomes]


def _middle(concs: list[int]) -> int | None:
    """The middle one of `concs` (the lower of two middles); None when empty."""
    return concs[(len(concs) + 1) // 2 - 1] if concs else None


def above_boundary_passes(outcomes: Mapping[int, Outcome], first_fail: int | None) -> list[int]:
    """Tested concurrencies above the lowest failure that met the SLO anyway (noise, or a curve that is not
    monotonic): reported, never taken as the boundary."""
    if first_fail is None:
        return []
    return sorted(c for c, o in outcomes.items() if o == "pass" and c > first_fail)
