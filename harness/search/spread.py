"""The measured spread of a point's percentile: the central 95 % of its bootstrap distribution over the point's
per-request records (`harness.report.analysis.noise.resampled_percentiles`, fixed seed: the same records give the same
interval). The per-request records hold TTFT and E2EL; other metrics, and means, have no interval (a reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.report.analysis.noise import LEVEL, MIN_REQUESTS, RESAMPLES, SEED, resampled_percentiles
from harness.report.results.samples import load_request_samples, record_file
from harness.search.slo import Slo

SAMPLED = ("ttft", "e2el")   # the metrics the per-request samples hold


@dataclass(frozen=True)
class Interval:
    """(low, high) of the statistic, or the reason there is none."""

    bounds: tuple[float, float] | None
    reason: str | None = None


def interval_of(samples: list[float], q: float) -> Interval:
    """The bootstrap `LEVEL` interval of percentile q (0..1) of `samples`."""
    if len(samples) < MIN_REQUESTS:
        return Interval(None, f"{len(samples)} requests (fewer than {MIN_REQUESTS}): no interval")
    draws = resampled_percentiles(samples, q, np.random.default_rng(SEED), RESAMPLES)
    tail = (1.0 - LEVEL) / 2.0 * 100.0
    lo, hi = np.percentile(draws, [tail, 100.0 - tail])
    return Interval((float(lo), float(hi)))


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
