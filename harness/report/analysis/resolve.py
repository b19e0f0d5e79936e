"""How many requests would resolve a change that a comparison could not: the standard two-sample
sample-size computation under the normal approximation.

A change of `delta` (seconds) in a percentile is resolved, at two-sided level `level` with power `power`,
when each side holds n requests with

    n = (z_{1 − (1 − level)/2} + z_{power})² · (v_A + v_B) / delta²

where v is one side's per-request variance of the percentile estimate: its bootstrap variance times the
requests it was computed from (a percentile's variance falls as 1/n). At the observed request rate of a run
that is a `--duration` of n / rate seconds.
"""

from __future__ import annotations

import math
from statistics import NormalDist

LEVEL = 0.95
POWER = 0.80
METHOD = (f"two-sample normal approximation, two-sided {LEVEL:.0%} level, {POWER:.0%} power, per-request "
          "variance from the bootstrap")


def requests_per_side(se_a: float, n_a: int, se_b: float, n_b: int, delta: float, level: float = LEVEL,
                      power: float = POWER) -> int | None:
    """Requests on each side that resolve a change of `delta` given each side's bootstrap standard error
    (`se_*`) at its `n_*` requests; None for a zero change or no spread to scale."""
    if delta == 0 or n_a <= 0 or n_b <= 0:
        return None
    z = NormalDist().inv_cdf(1 - (1 - level) / 2) + NormalDist().inv_cdf(power)
    per_request = se_a ** 2 * n_a + se_b ** 2 * n_b
    if per_request <= 0:
        return None
    return max(1, math.ceil(z * z * per_request / (delta * delta)))


def duration_for(requests: int, rate_per_s: float | None) -> float | None:
    """Seconds of profiling that give `requests` at `rate_per_s` successful requests per second."""
    if rate_per_s is None or rate_per_s <= 0:
        return None
    return requests / rate_per_s
