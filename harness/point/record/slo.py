"""SLO attainment and goodput of a point, from its per-request records (pure).

A profiled request is good when it succeeded and its own TTFT, E2EL and interactivity (1 / its mean inter-token
latency, tokens/s) meet every bound of the request SLO (`harness.recipe.request_slo`). The share of good requests,
`attainment`, is over every profiled request plus those cancelled at the cutoff: an error, a request cancelled at
the cutoff, and a successful request without the figure a bound needs (interactivity of a one-token answer) count
as not met, each counted apart. The interval is Wilson's 95 % score interval for a binomial share.

Goodput is over the record's throughput window (first profiled start -> last profiled successful end,
`harness.point.record.result_fields.throughput_block`): good requests per second, and the tokens (input + output,
and output alone) of good requests per second, also per GPU.
"""

from __future__ import annotations

import math
from typing import Any

from harness.point.record.result_fields import RequestRecord
from harness.recipe.request_slo import RequestSlo

Z95 = 1.959963984540054


def wilson_interval(good: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson's score interval of the share good / n; None when n is 0."""
    if n <= 0:
        return None
    p = good / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def request_value(record: RequestRecord, metric: str) -> float | None:
    """A request's own figure for a bound: ttft and e2el in s, intvty in tokens/s (None: not measured)."""
    if metric == "ttft":
        return record.ttft_s
    if metric == "e2el":
        return record.e2el_s
    return 1.0 / record.itl_s if record.itl_s is not None and record.itl_s > 0 else None


def attainment(records: list[RequestRecord], cancelled_at_cutoff: int | None, num_gpus: int,
               slo: RequestSlo) -> dict[str, Any]:
    """The record's `slo_attainment` block: the SLO, the counts (good, and each way of not meeting it), attainment
    with its Wilson interval, and request and token goodput over the throughput window."""
    profiled = [r for r in records if r.phase == "profiling"]
    ok = [r for r in profiled if r.ok]
    over = {m: 0 for m in slo.metrics}
    without = {m: 0 for m in slo.metrics}
    good: list[RequestRecord] = []
    for r in ok:
        met = True
        for b in slo.bounds:
            value = request_value(r, b.metric)
            if value is None:
                without[b.metric] += 1
                met = False
            elif not b.holds(value):
                over[b.metric] += 1
                met = False
        if met:
            good.append(r)
    cancelled = cancelled_at_cutoff or 0
    n = len(profiled) + cancelled
    window = _window_s(ok)
    tin = sum(r.input_tokens or 0 for r in good)
    tout = sum(r.output_tokens or 0 for r in good)
    interval = wilson_interval(len(good), n)
    return {
        "slo": slo.text,
        "requests": n,
        "good": len(good),
        "not_met": {
            "errors": len(profiled) - len(ok),
            "cancelled_at_cutoff": cancelled_at_cutoff,   # None: unknown (no phase-complete line), counted as 0
            "over_bound": over,                  # successful requests breaching a bound, per metric (one may breach two)
            "without_sample": without,           # successful requests without the figure a bound needs
        },
        "attainment": None if n == 0 else len(good) / n,
        "attainment_interval_95": None if interval is None else list(interval),
        "interval_method": "wilson",
        "window_seconds": window,
        "request_goodput_rps": None if not window else len(good) / window,
        "token_goodput": None if not window else {
            "total_tps": (tin + tout) / window, "output_tps": tout / window,
            "total_tps_per_gpu": (tin + tout) / window / num_gpus, "output_tps_per_gpu": tout / window / num_gpus,
            "tokens": {"input": tin, "output": tout}},
        "num_gpus": num_gpus,
        "source": "per-request records (aiperf/profile_export.jsonl)",
    }


def _window_s(ok: list[RequestRecord]) -> float | None:
    """The throughput window in seconds (as `throughput_block` measures it); None without one."""
    if not ok:
        return None
    seconds = (max(r.end_ns for r in ok) - min(r.start_ns for r in ok)) / 1e9
    return seconds if seconds > 0 else None
