"""A change in a latency percentile between two points, bounded distribution-free: the interval `compare` prints
and the p-value `regress` corrects.

Of n independent requests the number below the true q-quantile is Binomial(n, q) whatever the latency
distribution, so order statistics of each side's sorted sample bound its quantile (`noise.quantile_bounds`). Each
of the four bounds (A's low and high, B's low and high) misses with probability at most `tail`; with all four at
`tail = (1 − level) / 4` (a union bound), B − A lies in

    [low_B − high_A, high_B − low_A]

with probability at least `level`, and (B − A) / A in [low_B / high_A − 1, high_B / low_A − 1] (A's values
positive). Unlike a bootstrap, whose resampled percentiles never leave the sample's range, the bounds widen to
the sample's ends and beyond (unbounded) where the requests are too few to see the tail: a side needs
`noise.min_requests(q)` of them (42 for a p90 at 95 %).

The p-value of "B and A have the same q-quantile" inverts the same interval: the smallest overall level
`4 · tail` at which the interval excludes zero (the bounds tighten as `tail` grows, so there is one crossing,
found by bisection on log(tail)). The interval at 95 % excludes zero exactly when p <= 0.05, so a gate that
corrects these p-values for a family never calls a change within noise that the printed interval puts outside it,
nor the other way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.report.analysis.noise import (
    LEVEL,
    NO_RECORDS,
    RESAMPLES,
    SEED,
    NoiseInterval,
    binomial_cdf,
    min_requests,
    no_interval,
    resampled_percentiles,
    too_few_requests,
)

BISECTIONS = 80
SMALLEST_TAIL = 1e-300


def union_tail(level: float = LEVEL) -> float:
    """Each bound's miss probability for a `level` interval of a difference: (1 − level) / 4."""
    return (1.0 - level) / 4.0


@dataclass(frozen=True)
class Side:
    """One point's requests sorted, with the binomial law of how many fall below its q-quantile."""

    xs: npt.NDArray[np.float64]
    cdf: npt.NDArray[np.float64]      # cdf[k] = P(Binomial(n, q) <= k), k = 0..n

    @classmethod
    def of(cls, sample: npt.ArrayLike, q: float) -> Side:
        xs = np.sort(np.asarray(sample, dtype=np.float64))
        return cls(xs, binomial_cdf(len(xs), q))

    def bounds(self, tail: float) -> tuple[float, float]:
        """(low, high) of the quantile, each missing with probability at most `tail` (±inf where none can)."""
        n = len(self.xs)
        head = self.cdf[:n]                                   # head[k - 1]: the coverage of x(k) as a high bound
        k = int(np.searchsorted(head, 1.0 - tail, side="left"))   # the first with coverage >= 1 − tail
        j = int(np.searchsorted(head, tail, side="right"))        # past the last with P(miss) <= tail
        high = float(self.xs[k]) if k < n else math.inf
        low = float(self.xs[j - 1]) if j > 0 else -math.inf
        return low, high


def diff_bounds(a: Side, b: Side, tail: float) -> tuple[float, float]:
    """(low, high) of B − A, each of the four quantile bounds missing with probability at most `tail`."""
    la, ha = a.bounds(tail)
    lb, hb = b.bounds(tail)
    return lb - ha, hb - la


def pct_bounds(a: Side, b: Side, tail: float) -> tuple[float, float] | None:
    """(low, high) of (B − A) / A in percent; None where A's low bound is not positive (no ratio)."""
    la, ha = a.bounds(tail)
    lb, hb = b.bounds(tail)
    if not la > 0:
        return None
    return (lb / ha - 1.0) * 100.0, (hb / la - 1.0) * 100.0


def p_value(a: Side, b: Side) -> float:
    """The smallest overall level 4 · tail at which B − A's interval excludes zero (1.0 when none does)."""
    def excludes(tail: float) -> bool:
        low, high = diff_bounds(a, b, tail)
        return low > 0.0 or high < 0.0

    lo, hi = math.log(SMALLEST_TAIL), math.log(0.25)
    if not excludes(math.exp(hi)):
        return 1.0
    if excludes(math.exp(lo)):
        return 4.0 * SMALLEST_TAIL
    for _ in range(BISECTIONS):          # excludes(exp(hi)) holds, excludes(exp(lo)) does not
        mid = (lo + hi) / 2.0
        if excludes(math.exp(mid)):
            hi = mid
        else:
            lo = mid
    return min(1.0, 4.0 * math.exp(hi))


def percentile_diff_interval(a: npt.ArrayLike, b: npt.ArrayLike, q: float, *, level: float = LEVEL) -> NoiseInterval:
    """The distribution-free `level` interval of percentile q (0..1) of B minus that of A, with each side's
    bootstrap standard error (for `resolve`) and its percentile over all its requests."""
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    n_a, n_b = len(xa), len(xb)
    if n_a == 0 or n_b == 0:
        return no_interval(NO_RECORDS, n_a or None, n_b or None)
    need = min_requests(q, level)
    if min(n_a, n_b) < need:
        return no_interval(too_few_requests(need, n_a, n_b), n_a, n_b)
    side_a, side_b, tail = Side.of(xa, q), Side.of(xb, q), union_tail(level)
    rng = np.random.default_rng(SEED)
    se_a = float(np.std(resampled_percentiles(side_a.xs, q, rng, RESAMPLES)))
    se_b = float(np.std(resampled_percentiles(side_b.xs, q, rng, RESAMPLES)))
    observed = (float(np.percentile(side_a.xs, 100 * q)), float(np.percentile(side_b.xs, 100 * q)))
    return NoiseInterval(n_a=n_a, n_b=n_b, diff=diff_bounds(side_a, side_b, tail),
                         pct=pct_bounds(side_a, side_b, tail), se_a=se_a, se_b=se_b, observed=observed)
