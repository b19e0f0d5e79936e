"""The arithmetic of the gate, pure and small.

- Student-t: the distribution function through the regularized incomplete beta function (a continued fraction,
  Numerical Recipes' `betacf`), its quantile by bisection; the 95 % interval of a mean over repeated runs
  (mean ± t₀.₉₇₅,ₙ₋₁ · s/√n) and Welch's interval of a difference of two means.
- A latency percentile's change: compare's distribution-free interval (`harness.report.analysis.quantile_diff`,
  the interval `compare` prints), in percent of the baseline, with the p-value that inverts it: the smallest level
  at which that interval excludes zero, so a corrected call never disagrees with the interval it prints.
- Holm's step-down and Benjamini-Hochberg's step-up adjustments of a family of p-values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.report.analysis.noise import LEVEL, min_requests, too_few_requests
from harness.report.analysis.quantile_diff import Side, p_value, pct_bounds, union_tail

CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


def _betacf(a: float, b: float, x: float) -> float:
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The `p` quantile (0.5 < p < 1) of Student's t with `df` degrees of freedom."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class MeanInterval:
    """A metric over repeated runs: mean, sample standard deviation, CV, standard error and the Student-t interval."""

    n: int
    mean: float
    std: float
    se: float
    low: float
    high: float

    @property
    def cv_pct(self) -> float | None:
        return None if self.mean == 0 else self.std / abs(self.mean) * 100.0


def mean_interval(values: Sequence[float], level: float = LEVEL) -> MeanInterval | None:
    """The Student-t `level` interval of the mean of `values`; None for fewer than two."""
    n = len(values)
    if n < 2:
        return None
    xs = np.asarray(values, dtype=np.float64)
    mean, std = float(xs.mean()), float(xs.std(ddof=1))
    se = std / math.sqrt(n)
    half = t_quantile(0.5 + level / 2.0, n - 1) * se
    return MeanInterval(n, mean, std, se, mean - half, mean + half)


@dataclass(frozen=True)
class Change:
    """B − A of one metric in percent of A: the observed change, its interval and a two-sided p-value (None with a
    reason when there is none)."""

    observed_pct: float | None
    low_pct: float | None = None
    high_pct: float | None = None
    p: float | None = None
    reason: str | None = None
    method: str = ""


def welch_change(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Change:
    """Welch's interval of mean(B) − mean(A) over runs, in percent of mean(A)."""
    ma, mb = float(np.mean(a)) if len(a) else 0.0, float(np.mean(b)) if len(b) else 0.0
    observed = None if not len(a) or not len(b) or ma == 0 else (mb - ma) / abs(ma) * 100.0
    if len(a) < 2 or len(b) < 2:
        return Change(observed, reason="one run a side: no interval (whole-run figure; --repeat gives one)")
    va, vb = float(np.var(a, ddof=1)) / len(a), float(np.var(b, ddof=1)) / len(b)
    se = math.sqrt(va + vb)
    diff = mb - ma
    if se == 0.0 or ma == 0:
        return Change(observed, observed, observed, 1.0 if diff == 0 else 0.0, method="welch")
    df = (va + vb) ** 2 / ((va * va / (len(a) - 1) if va else 0.0) + (vb * vb / (len(b) - 1) if vb else 0.0))
    half = t_quantile(0.5 + level / 2.0, df) * se
    p = 2.0 * (1.0 - t_cdf(abs(diff) / se, df))
    scale = 100.0 / abs(ma)
    return Change(observed, (diff - half) * scale, (diff + half) * scale, p, method="welch")


def percentile_change(a: Sequence[float], b: Sequence[float], q: float, level: float = LEVEL) -> Change:
    """Compare's distribution-free interval of percentile q of B − A in percent of A, with the p-value that
    inverts it (`harness.report.analysis.quantile_diff`)."""
    if len(a) == 0 or len(b) == 0:
        return Change(None, reason="no per-request samples: no interval")
    side_a, side_b = Side.of(a, q), Side.of(b, q)
    oa, ob = float(np.percentile(side_a.xs, 100 * q)), float(np.percentile(side_b.xs, 100 * q))
    observed = None if oa == 0 else (ob - oa) / abs(oa) * 100.0
    need = min_requests(q, level)
    if min(len(a), len(b)) < need:
        return Change(observed, reason=too_few_requests(need, len(a), len(b)))
    pct = pct_bounds(side_a, side_b, union_tail(level))
    if pct is None:
        return Change(observed, reason="a baseline percentile bound of 0: no interval in percent")
    return Change(observed, pct[0], pct[1], p_value(side_a, side_b), method="order statistics")


def adjust(pvalues: Sequence[float], method: str) -> list[float]:
    """Holm (`holm`) or Benjamini-Hochberg (`bh`) adjusted p-values, in the given order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [1.0] * m
    if method == "holm":
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * pvalues[i]))
            out[i] = running
        return out
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, min(1.0, m * pvalues[i] / (rank + 1)))
        out[i] = running
    return out
