"""The measured spread of a point's percentile: distribution-free 95 % bounds of it from the point's per-request
records (`harness.report.analysis.noise.quantile_bounds`: order statistics and the binomial law, each bound
one-sided at 95 %). A bound can lie at or beyond the sample's largest value, and is unbounded when the point has too
few requests for it (a p90 needs `min_requests_for_bound(0.9)` = 29 for an upper bound): such a point cannot pass a
`<=` condition, however low its measured percentile. The per-request records hold TTFT and E2EL; other metrics, and
means, have no interval (a reason).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from harness.report.analysis.noise import LEVEL, min_requests_for_bound, quantile_bounds
from harness.report.results.samples import load_request_samples, record_file
from harness.search.slo import Slo

SAMPLED = ("ttft", "e2el")   # the metrics the per-request samples hold
ORDER_STATISTICS = "distribution-free 95 % bounds"   # how the console names a percentile's interval
WILSON = "95 % Wilson interval"                       # ... and attainment's


@dataclass(frozen=True)
class Interval:
    """(low, high) of the statistic (either end may be infinite: unbounded), or the reason there is none; `name`
    says what kind of interval it is, in words."""

    bounds: tuple[float, float] | None
    reason: str | None = None
    name: str = ORDER_STATISTICS

    def as_json(self) -> list[float | None] | None:
        """[low, high] rounded, an unbounded end as null; None without bounds."""
        if self.bounds is None:
            return None
        return [round(v, 6) if math.isfinite(v) else None for v in self.bounds]

    def text(self) -> str:
        """`[0.235, unbounded]`: the bounds as the console shows them."""
        if self.bounds is None:
            return "none"
        return "[" + ", ".join(f"{v:.4g}" if math.isfinite(v) else "unbounded" for v in self.bounds) + "]"


def interval_of(samples: list[float], q: float) -> Interval:
    """The `LEVEL` bounds of percentile q (0..1) of `samples` (see the module docstring); no interval without
    samples."""
    if not samples:
        return Interval(None, "no requests: no interval")
    low, high = quantile_bounds(samples, q, LEVEL)
    unbounded = [f"{min_requests_for_bound(p, LEVEL)} for a {LEVEL:.0%} {side} bound"
                 for side, p, end in (("lower", 1.0 - q, low), ("upper", q, high)) if math.isinf(end)]
    reason = f"{len(samples)} requests: a p{round(q * 100)} needs {' and '.join(unbounded)}" if unbounded else None
    return Interval((low, high), reason)


def percentile_interval(point_dir: Path, slo: Slo) -> Interval:
    """The interval of `slo`'s statistic on the point in `point_dir`, from its per-request records."""
    if slo.metric not in SAMPLED:
        return Interval(None, f"the per-request records hold no {slo.metric} samples")
    if not slo.stat.startswith("p"):
        return Interval(None, f"no interval for a {slo.stat}")
    path = record_file(point_dir)
    if path is None:
        return Interval(None, "no per-request records")
    samples = load_request_samples(path)
    values = list(samples.ttft if slo.metric == "ttft" else samples.e2el)
    return interval_of(values, int(slo.stat[1:]) / 100.0)
