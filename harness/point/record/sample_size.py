"""How many requests a percentile needs: enough that `MIN_TAIL_SAMPLES` of them lie beyond it (100 for a p90, 20 for
a p50). The verdict table marks a percentile from fewer, and `harness inspect` says so in words."""

from __future__ import annotations

import math

MIN_TAIL_SAMPLES = 10


def min_requests(percentile: float) -> int:
    """Requests a percentile needs so that `MIN_TAIL_SAMPLES` of them lie beyond it: 100 for p90, 20 for p50."""
    if not 0 < percentile < 100:
        raise ValueError(f"percentile must be in (0, 100), got {percentile}")
    return math.ceil(MIN_TAIL_SAMPLES * 100 / min(percentile, 100 - percentile) - 1e-9)
