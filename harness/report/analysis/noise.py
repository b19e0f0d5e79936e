"""Is a change in a latency percentile more than noise? A bootstrap interval of the difference B − A.

Each side is one point's per-request latencies (its successful profiled requests). A bootstrap resample of a
side draws n of its n requests with replacement; the statistic is the percentile as numpy computes it
(linear interpolation between the order statistics at (n − 1)·q). The interval is the central 95 % of the
difference of the two sides' resampled percentiles (B − A, and (B − A) / A in percent), over a fixed number
of resamples from a fixed seed, so the same inputs always give the same interval.

The resampled percentile is drawn exactly without materialising any resample: the k-th smallest of n draws
from the sorted sample is the sample value at ceil(n·U) where U, the k-th smallest of n uniforms, is
Beta(k, n − k + 1); the next one up is U + (1 − U)·Beta(1, n − k). The cost is one sort per side plus a few
arrays of the resample count, so 100k requests per side take milliseconds.

An interval that contains zero is `within noise`: these requests cannot tell B from A at that percentile.
A side measured more than once (`harness run --repeat N`) is pooled: its interval is drawn from all its runs'
requests, and a change no larger than the spread of the percentile between one side's runs is
`within the repeats' spread` however narrow the pooled interval.
Fewer than `MIN_REQUESTS` requests on a side give no interval (a reason instead): a bootstrap of a
handful of requests is not a measure of noise.
"""

from __future__ import annotations

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
    """The bootstrap interval of B − A at one percentile, or the reason there is none."""

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


def percentile_diff_interval(a: Sequence[float] | npt.NDArray[np.float64],
                             b: Sequence[float] | npt.NDArray[np.float64], q: float, *,
                             resamples: int = RESAMPLES, level: float = LEVEL, seed: int = SEED) -> NoiseInterval:
    """The bootstrap `level` interval of percentile q (0..1) of B minus that of A."""
    n_a, n_b = len(a), len(b)
    if n_a == 0 or n_b == 0:
        return no_interval(NO_RECORDS, n_a or None, n_b or None)
    if min(n_a, n_b) < MIN_REQUESTS:
        return no_interval(f"fewer than {MIN_REQUESTS} requests: no interval", n_a, n_b)
    rng = np.random.default_rng(seed)
    ra = resampled_percentiles(a, q, rng, resamples)
    rb = resampled_percentiles(b, q, rng, resamples)
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(rb - ra, [tail, 100.0 - tail])
    pct: tuple[float, float] | None = None
    if np.all(ra > 0):
        plo, phi = np.percentile((rb - ra) / ra * 100.0, [tail, 100.0 - tail])
        pct = (float(plo), float(phi))
    observed = (float(np.percentile(np.asarray(a, dtype=np.float64), 100 * q)),
                float(np.percentile(np.asarray(b, dtype=np.float64), 100 * q)))
    return NoiseInterval(n_a=n_a, n_b=n_b, diff=(float(lo), float(hi)), pct=pct, se_a=float(np.std(ra)),
                         se_b=float(np.std(rb)), observed=observed)


def spread_between_runs(runs: Sequence[Sequence[float]], q: float) -> float | None:
    """(max − min) / median in percent of percentile q over the runs (each run's requests); None for fewer
    than two runs with requests, or a median of 0."""
    values = [float(np.percentile(np.asarray(r, dtype=np.float64), 100 * q)) for r in runs if len(r)]
    if len(values) < 2:
        return None
    median = float(np.median(values))
    return None if median == 0 else (max(values) - min(values)) / median * 100.0
