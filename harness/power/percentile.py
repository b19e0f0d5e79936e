"""Time-weighted percentiles of the total GPU power curve over a window (InferenceX's p75/p90 power).

Each GPU's power is piecewise linear between its samples (interpolated at the window edges); the
curves are summed on the union of their sample times, so the total is piecewise linear too. Over each
segment the total is uniformly distributed between its end values, weighted by the segment's
duration (a constant segment is a point mass). The q-th percentile is the smallest power P with
time(total ≤ P) ≥ q × window: elapsed time weights the percentile, not the number of samples. The
per-GPU figure InferenceX publishes is this fleet percentile divided by the GPU count.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence

Series = Sequence[tuple[float, float]]  # (time s, power W), sorted by time, bracketing the window


def power_at(series: Series, t: float) -> float:
    """Power at `t` by linear interpolation between the samples around it."""
    times = [s[0] for s in series]
    i = bisect.bisect_left(times, t)
    if i < len(series) and series[i][0] == t:
        return series[i][1]
    if i == 0 or i == len(series):
        raise ValueError(f"time {t} is outside the samples [{times[0]}, {times[-1]}]")
    (t0, p0), (t1, p1) = series[i - 1], series[i]
    return p0 + (p1 - p0) * (t - t0) / (t1 - t0)


def total_power_segments(gpus: Sequence[Series], start: float, end: float) -> list[tuple[float, float, float]]:
    """(power at segment start, power at segment end, duration) of the summed curve over [start, end]."""
    knots = sorted({start, end, *(t for series in gpus for t, _ in series if start < t < end)})
    totals = [sum(power_at(series, t) for series in gpus) for t in knots]
    return [(p0, p1, t1 - t0) for (t0, p0), (t1, p1) in itertools.pairwise(zip(knots, totals, strict=True))]


def _time_at_or_below(segments: Sequence[tuple[float, float, float]], value: float) -> float:
    total = 0.0
    for p0, p1, duration in segments:
        low, high = min(p0, p1), max(p0, p1)
        if value >= high:
            total += duration
        elif value > low:
            total += duration * (value - low) / (high - low)
    return total


def time_weighted_percentile(gpus: Sequence[Series], start: float, end: float, q: float) -> float:
    """The q-quantile (0 < q ≤ 1) of total power over [start, end], weighted by time."""
    if not 0 < q <= 1 or end <= start or not gpus:
        raise ValueError("need 0 < q <= 1, end > start and at least one GPU")
    segments = total_power_segments(gpus, start, end)
    target = (end - start) * q
    slack = (end - start) * 1e-12  # float sums of durations may fall a hair short of the window
    # Time-below is piecewise linear between the segments' end values, with a jump where a constant
    # segment (a point mass) sits: find the first end value whose time-below reaches the target.
    values = sorted({p for p0, p1, _ in segments for p in (p0, p1)})
    i = next(i for i, v in enumerate(values) if _time_at_or_below(segments, v) >= target - slack)
    if i == 0:
        return values[0]
    low, high = values[i - 1], values[i]
    mass_at_high = sum(d for p0, p1, d in segments if p0 == p1 == high)
    t_low, t_high_left = _time_at_or_below(segments, low), _time_at_or_below(segments, high) - mass_at_high
    if target >= t_high_left or t_high_left <= t_low:
        return high
    return low + (high - low) * (target - t_low) / (t_high_left - t_low)
