"""Pareto frontier over two axes, each with its own direction ("min" or "max" is better).

A point dominates another when it is at least as good on both axes and strictly better on one. Points
with identical coordinates do not dominate each other, so duplicates of a frontier point are on the
frontier too. Points with a missing or non-finite coordinate are neither on the frontier nor dominated:
they are reported as excluded.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

Direction = Literal["min", "max"]
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Frontier(Generic[K]):
    """Which keys are on the frontier, which are dominated and which had no usable coordinates.

    Each list keeps the order of the input.
    """

    frontier: list[K]
    dominated: list[K]
    excluded: list[K]

    @property
    def coverage(self) -> str:
        """"frontier points / measured points", e.g. "4/6"."""
        return f"{len(self.frontier)}/{len(self.frontier) + len(self.dominated)}"


def _finite(v: float | None) -> bool:
    return v is not None and not isinstance(v, bool) and math.isfinite(v)


def dominates(a: tuple[float, float], b: tuple[float, float], x_dir: Direction, y_dir: Direction) -> bool:
    """True when `a` is at least as good as `b` on both axes and strictly better on one."""
    ax, ay = _oriented(a, x_dir, y_dir)
    bx, by = _oriented(b, x_dir, y_dir)
    return ax <= bx and ay <= by and (ax < bx or ay < by)


def _oriented(p: tuple[float, float], x_dir: Direction, y_dir: Direction) -> tuple[float, float]:
    """Coordinates turned so that smaller is better on both axes."""
    return (p[0] if x_dir == "min" else -p[0], p[1] if y_dir == "min" else -p[1])


def pareto_frontier(
    points: Sequence[tuple[K, float | None, float | None]], x_dir: Direction, y_dir: Direction
) -> Frontier[K]:
    """Split `(key, x, y)` points into frontier, dominated and excluded (a coordinate missing or not finite).

    Sweep in order of the better x (ties: better y first) keeping the best y seen: a point is on the
    frontier when its y beats that best, or when it repeats the coordinates of the point that set it.
    """
    for d in (x_dir, y_dir):
        if d not in ("min", "max"):
            raise ValueError(f"direction must be 'min' or 'max', got {d!r}")
    usable: list[tuple[int, float, float]] = []
    excluded: set[int] = set()
    for i, (_, x, y) in enumerate(points):
        if _finite(x) and _finite(y):
            ox, oy = _oriented((float(x), float(y)), x_dir, y_dir)  # type: ignore[arg-type]
            usable.append((i, ox, oy))
        else:
            excluded.add(i)
    on_frontier: set[int] = set()
    best: tuple[float, float] | None = None  # (x, y) of the point holding the best y so far
    for i, ox, oy in sorted(usable, key=lambda t: (t[1], t[2])):
        if best is None or oy < best[1]:
            best = (ox, oy)
            on_frontier.add(i)
        elif (ox, oy) == best:
            on_frontier.add(i)
    keys = [k for k, _, _ in points]
    return Frontier(
        frontier=[keys[i] for i in range(len(keys)) if i in on_frontier],
        dominated=[keys[i] for i in range(len(keys)) if i not in on_frontier and i not in excluded],
        excluded=[keys[i] for i in sorted(excluded)],
    )
