"""How many requests would resolve a change that a comparison could not, for the interval the comparison draws
(`harness.report.analysis.quantile_diff`), under the normal approximation of each side's percentile.

With n requests a side, each side's order-statistic bounds lie about z_t · s / √n from its percentile (z_t the
normal quantile at 1 − tail, tail = (1 − level) / 4; s its per-request spread: the bootstrap standard error
times √ of the requests it was computed from, as a percentile's variance falls as 1/n), so the interval of
B − A reaches z_t · (s_A + s_B) / √n from the observed change, which itself varies by √(s_A² + s_B²) / √n. A
change of `delta` (seconds) is resolved with power `power` when

    n = ((z_t · (s_A + s_B) + z_power · √(s_A² + s_B²)) / delta)²

At the observed request rate of a run that is a `--duration` of n / rate seconds.
"""

from __future__ import annotations

import math
from statistics import NormalDist

LEVEL = 0.95
POWER = 0.80
METHOD = (f"the {LEVEL:.0%} order-statistic interval under the normal approximation, {POWER:.0%} power, "
          "per-request spread from the bootstrap")


def requests_per_side(se_a: float, n_a: int, se_b: float, n_b: int, delta: float, level: float = LEVEL,
                      power: float = POWER) -> int | None:
    """Requests on each side that resolve a change of `delta` given each side's bootstrap standard error
    (`se_*`) at its `n_*` requests; None for a zero change or no spread to scale."""
    if delta == 0 or n_a <= 0 or n_b <= 0:
        return None
    s_a, s_b = se_a * math.sqrt(n_a), se_b * math.sqrt(n_b)
    if s_a + s_b <= 0:
        return None
    z_t = NormalDist().inv_cdf(1 - (1 - level) / 4)
    z_p = NormalDist().inv_cdf(power)
    return max(1, math.ceil(((z_t * (s_a + s_b) + z_p * math.hypot(s_a, s_b)) / delta) ** 2))


def duration_for(requests: int, rate_per_s: float | None) -> float | None:
    """Seconds of profiling that give `requests` at `rate_per_s` successful requests per second."""
    if rate_per_s is None or rate_per_s <= 0:
        return None
    return requests / rate_per_s
