"""InferenceX's measured frontier, "upper_right", and its coverage result (code-owner Check 14).

InferenceX's review counts the frontier points of a curve of throughput per GPU (y, higher is better) against
E2EL (x, lower is better) with the rule its app draws the frontier by (`.github/scripts/pareto-coverage.cjs`,
mirroring InferenceX-app's `chartFrontier(points, 'upper_right')`):

- a point is eligible when x and y are finite and above zero; any other point is invalid evidence: it is never
  on the frontier, and a curve with one cannot pass;
- eligible points are sorted by x ascending, ties by y descending;
- a point joins the frontier when its y rises above the best y so far, or when it repeats the best y at a
  larger x than the last frontier point (an equal-throughput plateau stays on the frontier);
- so an exact duplicate of a frontier point is dropped, and of two points at one x only the higher counts;
- PASS needs at least `RECOMMENDED_POINTS` frontier points and no invalid point; anything else is a WARN.

This differs from the report's own frontier (`harness.report.analysis.pareto`), which keeps exact duplicates of a
frontier point, drops a plateau point that is dominated in x, and reads x <= 0 as a coordinate like any other.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

K = TypeVar("K", bound=Hashable)
RECOMMENDED_POINTS = 5
CoverageStatus = Literal["PASS", "WARN"]


@dataclass(frozen=True)
class UpperRight(Generic[K]):
    """The frontier keys in x order, how many points were given, and which were invalid (in input order)."""

    frontier: list[K]
    measured: int
    invalid: list[K]

    @property
    def status(self) -> CoverageStatus:
        return "PASS" if not self.invalid and len(self.frontier) >= RECOMMENDED_POINTS else "WARN"

    @property
    def count(self) -> str:
        """"frontier points/measured points", e.g. "9/11"."""
        return f"{len(self.frontier)}/{self.measured}"


def _eligible(v: float | None) -> bool:
    return v is not None and not isinstance(v, bool) and math.isfinite(v) and v > 0


def upper_right(points: Sequence[tuple[K, float | None, float | None]]) -> UpperRight[K]:
    """The upper_right frontier of `(key, x, y)` points: x lower is better, y higher is better."""
    eligible = [(k, float(x), float(y)) for k, x, y in points if _eligible(x) and _eligible(y)]  # type: ignore[arg-type]
    invalid = [k for k, x, y in points if not (_eligible(x) and _eligible(y))]
    frontier: list[tuple[K, float, float]] = []
    best_y = -math.inf
    for key, x, y in sorted(eligible, key=lambda t: (t[1], -t[2])):
        plateau = bool(frontier) and y == best_y and x > frontier[-1][1]
        if y > best_y or plateau:
            if frontier and x == frontier[-1][1]:
                frontier[-1] = (key, x, y)
            else:
                frontier.append((key, x, y))
            best_y = y
    return UpperRight(frontier=[k for k, _, _ in frontier], measured=len(points), invalid=invalid)
