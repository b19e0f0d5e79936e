"""The accept length a correct server shows for the output lengths a run actually had.

The achieved accept length is measured from `/metrics` counter deltas as (generated tokens − requests) /
verify steps: the first token of a request comes from its prefill, every further token from a verify step.
A request stops at `max_tokens` (with `ignore_eos`, every request does): SGLang caps its completion tokens
there but still counts the last verify step, which commits only the tokens left. So even a server hitting the
golden accept length exactly measures less than it on short outputs (−3.5% at 50 output tokens for AL 4.05 and
block size 8). The check therefore compares the measured value with its expectation for the run's own output
lengths: for a request with n = output − 1 tokens after the first, the expected verify steps E[N(n)] follow
from the per-step accept-length distribution (the renewal recursion E[N(n)] = 1 + Σ_a p(a)·E[N(n − a)],
E[N(≤ 0)] = 0), and the expected measured value is Σ n / Σ E[N(n)].
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def step_distribution(value: float, method: str, max_len: int) -> dict[int, float]:
    """P(accept length = a) per verify step, as SGLang draws it (`harness.sim.batching.spec.draw_accept_length`).

    match-expected: v clamped to [1, max_len], floor with probability 1 − frac, floor + 1 with probability frac.
    multinomial: round(clamp(N(v, 1), 1, max_len)), half to even.
    """
    if method == "multinomial":
        def cdf(x: float) -> float:
            return 0.5 * (1.0 + math.erf((x - value) / math.sqrt(2.0)))

        probs: dict[int, float] = {}
        for a in range(1, max_len + 1):
            # round half to even: a takes (a − 0.5, a + 0.5) with the even end included; ties have measure zero
            lo = -math.inf if a == 1 else a - 0.5
            hi = math.inf if a == max_len else a + 0.5
            probs[a] = cdf(hi) - cdf(lo)
        return probs
    v = max(1.0, min(float(max_len), value))
    lower = int(v // 1)
    frac = v - lower
    if lower >= max_len or frac == 0:
        return {lower: 1.0}
    return {lower: 1.0 - frac, lower + 1: frac}


def expected_steps(max_tokens: int, dist: dict[int, float]) -> list[float]:
    """E[verify steps to commit n tokens] for n = 0 … max_tokens (the step that overshoots counts)."""
    e = [0.0] * (max_tokens + 1)
    for n in range(1, max_tokens + 1):
        e[n] = 1.0 + sum(p * e[max(0, n - a)] for a, p in dist.items())
    return e


def expected_measured(output_lengths: Iterable[int], value: float, method: str, max_len: int) -> float | None:
    """The accept length the counters should show for requests of these output lengths (None: no tokens)."""
    after_first = [n - 1 for n in output_lengths if n > 1]
    if not after_first:
        return None
    e = expected_steps(max(after_first), step_distribution(value, method, max_len))
    steps = sum(e[n] for n in after_first)
    return sum(after_first) / steps if steps else None
