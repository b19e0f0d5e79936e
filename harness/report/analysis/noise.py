"""Is a change in a latency percentile more than noise? The interval of B − A and what it rests on.

Each side is one point's per-request latencies (its successful profiled requests). The interval of a change
(`NoiseInterval`, computed by `harness.report.analysis.quantile_diff`) is distribution-free: order statistics
of each side bound its percentile, so it holds at small samples where a bootstrap, whose resampled percentiles
never leave the sample's range, is narrowest exactly where the tail is unknown. An interval that contains zero is
`within noise`: these requests cannot tell B from A at that percentile. A side measured more than once
(`harness run --repeat N`) is pooled: its interval is drawn from all its runs' requests, and a change no larger
than the spread of the percentile between one side's runs is `within the repeats' spread` however narrow the
pooled interval. Fewer than `min_requests(q)` requests on a side give no interval (a reason instead).

Each side's bootstrap standard error (`resampled_percentiles`) is kept only for the estimate of how many requests
would resolve a change (`harness.report.analysis.resolve`), and `harness history` draws one run's display band
from it. A resampled percentile is drawn exactly without materialising any resample: the k-th smallest of n draws
from the sorted sample is the sample value at ceil(n·U) where U, the k-th smallest of n uniforms, is
Beta(k, n − k + 1); the next one up is U + (1 − U)·Beta(1, n − k).

One point's percentile against a fixed threshold (`quantile_bounds`, what `harness search` judges) is bounded
without resampling, by order statistics: of n independent requests, the number below the true q-quantile is
Binomial(n, q) whatever the latency distribution, so a sorted sample's k-th value is an upper bound of the
quantile with probability P(Binomial(n, q) <= k - 1). Unlike a bootstrap, whose draws never exceed the sample's
largest value, such a bound can lie at the maximum or beyond it: it is unbounded when n is too small
(q^n > 1 - level; a p90 needs 29 requests for a 95 % upper bound).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

LEVEL = 0.95
RESAMPLES = 2000
SEED = 20240601
MIN_REQUESTS = 10

NO_RECORDS = "no per-request records: no interval"
WHOLE_RUN = "whole-run figure: no per-request interval"


@dataclass(frozen=True)
class NoiseInterval:
    """The distribution-free interval of B − A at one percentile, or the reason there is none."""

    n_a: int | None                           # requests on each side; None: that side has no records
    n_b: int | None
    diff: tuple[float, float] | None = None   # (low, high) of B − A, in the metric's unit
    pct: tuple[float, float] | None = None    # (low, high) of (B − A) / A in percent; None when A can be 0
    reason: str | None = None                 # why there is no interval
    se_a: float | None = None                 # bootstrap standard error of each side's percentile
    se_b: float | None = None
    observed: tuple[float, float] | None = None   # each side's percentile over all its requests
    runs_a: int = 1                           # runs pooled on each side (`harness run --repeat N`)
    runs_b: int = 1
    repeat_spread_pct: float | None = None    # the widest spread of the percentile between one side's runs

    @property
    def observed_pct(self) -> float | None:
        """(B − A) / A in percent over all requests of each side; None without both, or A of 0."""
        if self.observed is None or self.observed[0] == 0:
            return None
        return (self.observed[1] - self.observed[0]) / self.observed[0] * 100.0

    @property
    def within_noise(self) -> bool | None:
        """True when the interval contains zero, or the change is no larger than the spread between one
        side's repeated runs; None without an interval."""
        if self.diff is None:
            return None
        return self.diff[0] <= 0.0 <= self.diff[1] or self.within_repeat_spread

    @property
    def within_repeat_spread(self) -> bool:
        change = self.observed_pct
        return self.repeat_spread_pct is not None and change is not None and abs(change) <= self.repeat_spread_pct

    @property
    def reading(self) -> str:
        """How the noise table reads the change: within noise, within the repeats' spread, outside noise, or
        why there is no interval."""
        if self.diff is None:
            return self.reason or NO_RECORDS
        if self.diff[0] <= 0.0 <= self.diff[1]:
            return "within noise"
        return "within the repeats' spread" if self.within_repeat_spread else "outside noise"

    def as_json(self) -> dict[str, Any]:
        return {
            "n_a": self.n_a, "n_b": self.n_b,
            "diff": None if self.diff is None else [round(v, 6) for v in self.diff],
            "pct": None if self.pct is None else [round(v, 3) for v in self.pct],
            "within_noise": self.within_noise,
            "reason": self.reason,
            "runs_a": self.runs_a, "runs_b": self.runs_b,
            "repeat_spread_pct": None if self.repeat_spread_pct is None else round(self.repeat_spread_pct, 3),
        }


def no_interval(reason: str, n_a: int | None = None, n_b: int | None = None) -> NoiseInterval:
    return NoiseInterval(n_a=n_a, n_b=n_b, reason=reason)


def resampled_percentiles(sample: Sequence[float] | npt.NDArray[np.float64], q: float,
                          rng: np.random.Generator, resamples: int = RESAMPLES) -> npt.NDArray[np.float64]:
    """`resamples` bootstrap draws of `np.percentile(resample, 100 * q)` (linear interpolation)."""
    xs = np.sort(np.asarray(sample, dtype=np.float64))
    n = len(xs)
    h = (n - 1) * q
    k = int(np.floor(h))          # 0-based: the percentile lies between order statistics k and k + 1
    frac = h - k
    u_k = rng.beta(k + 1, n - k, size=resamples)
    low = xs[_index(u_k, n)]
    if frac == 0.0 or k + 1 >= n:
        return low
    u_next = u_k + (1.0 - u_k) * rng.beta(1, n - k - 1, size=resamples)
    return low + frac * (xs[_index(u_next, n)] - low)


def _index(u: npt.NDArray[np.float64], n: int) -> npt.NDArray[np.intp]:
    """The sorted-sample index a uniform draw lands on: ceil(n·u) − 1, kept inside [0, n − 1]."""
    return np.clip(np.ceil(u * n).astype(np.intp) - 1, 0, n - 1)


def binomial_cdf(n: int, q: float) -> npt.NDArray[np.float64]:
    """P(Binomial(n, q) <= k) for k = 0..n (0 < q < 1), from the log of each term (no overflow at large n)."""
    k = np.arange(n + 1, dtype=np.float64)
    log_comb = np.concatenate(([0.0], np.cumsum(np.log(np.arange(n, 0, -1, dtype=np.float64)) - np.log(k[1:]))))
    return np.cumsum(np.exp(log_comb + k * np.log(q) + (n - k) * np.log1p(-q)))


def quantile_bounds(sample: Sequence[float] | npt.NDArray[np.float64], q: float,
                    level: float = LEVEL) -> tuple[float, float]:
    """Distribution-free one-sided `level` bounds (low, high) of the q-quantile (0 < q < 1) of the population
    `sample` was drawn from: order statistics of the sorted sample x(1) <= ... <= x(n), from the binomial law
    of how many requests fall below the quantile.

    - high = x(k), k the smallest with P(Binomial(n, q) <= k - 1) >= level; +inf when none (q^n > 1 - level);
    - low = x(j), j the largest with P(Binomial(n, q) <= j - 1) <= 1 - level; -inf when none ((1 - q)^n > 1 - level).

    Each bound is one-sided at `level` (not a central interval whose ends hold (1 - level) / 2 each) because each
    is used alone: a point meets `metric <= threshold` only when `high` is below the threshold, and breaches it
    only when `low` is above it. The true quantile lies on one side of the threshold, so only one of the two
    claims can be wrong, and it is wrong with probability at most 1 - level.
    """
    xs = np.sort(np.asarray(sample, dtype=np.float64))
    n = len(xs)
    if n == 0:
        raise ValueError("quantile_bounds: an empty sample has no bounds")
    cdf = binomial_cdf(n, q)          # cdf[k - 1] = P(Binomial(n, q) <= k - 1), the coverage of x(k)
    above = np.flatnonzero(cdf[:n] >= level)
    below = np.flatnonzero(cdf[:n] <= 1.0 - level)
    high = float(xs[above[0]]) if above.size else math.inf
    low = float(xs[below[-1]]) if below.size else -math.inf
    return low, high


def min_requests_for_bound(q: float, level: float = LEVEL) -> int:
    """The fewest requests whose largest value is a one-sided `level` upper bound of the q-quantile: the
    smallest n with q^n <= 1 - level (29 for a p90 at 95 %)."""
    n = 1
    while q ** n > 1.0 - level:
        n += 1
    return n


def min_requests(q: float, level: float = LEVEL) -> int:
    """The fewest requests a side needs for an interval of a change in its q-quantile: `MIN_REQUESTS`, or as many
    as bound the quantile on both sides, each bound missing with probability at most (1 − level) / 4
    (`harness.report.analysis.quantile_diff`: 10 for a p50, 16 for a p75, 42 for a p90, 437 for a p99 at 95 %)."""
    tail = (1.0 - level) / 4.0
    return max(MIN_REQUESTS, min_requests_for_bound(q, 1.0 - tail), min_requests_for_bound(1.0 - q, 1.0 - tail))


def too_few_requests(need: int, n_a: int, n_b: int) -> str:
    """Why a change has no interval when a side has fewer than `need` requests, with both sides' counts."""
    return f"fewer than {need} requests ({n_a} vs {n_b}): no interval"


def spread_between_runs(runs: Sequence[Sequence[float]], q: float) -> float | None:
    """(max − min) / median in percent of percentile q over the runs (each run's requests); None for fewer
    than two runs with requests, or a median of 0."""
    values = [float(np.percentile(np.asarray(r, dtype=np.float64), 100 * q)) for r in runs if len(r)]
    if len(values) < 2:
        return None
    median = float(np.median(values))
    return None if median == 0 else (max(values) - min(values)) / median * 100.0
