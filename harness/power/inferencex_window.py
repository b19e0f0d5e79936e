"""Power as InferenceX publishes it: over AIPerf's benchmark window, by the power trapezoid.

InferenceX integrates each GPU's board power (trapezoid, linear interpolation at the edges) over
AIPerf's own benchmark window, `start_time` → `end_time` of `profile_export_aiperf.json`, and divides
by the successful profiled requests and their tokens. The harness's own figures (`harness.power.integrate`)
use the window from the first successful request's start to the last one's end and prefer NVML's energy
counter; both are kept in the point's record, and the published row carries this one, so the row
agrees with what InferenceX's aggregation computes from the same samples.

Validity and reasons are InferenceX's (`harness.power.inferencex_audit`: every GPU brackets the window, no gap
over 3 s, the expected GPU count), so the row and the exported audit document say the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any

from harness.power.inferencex_audit import INTEGRATION_METHOD as METHOD
from harness.power.inferencex_audit import PERCENTILE_METHOD, BenchmarkWindow, inferencex_reasons, power_validation
from harness.power.integrate import NS_PER_S
from harness.power.reasons import Reason
from harness.power.samples import PowerSample

WINDOW = "aiperf_benchmark_start_to_end"


def aiperf_window_ns(summary: Mapping[str, Any] | None, naive_tz: tzinfo | None = None) -> tuple[int, int] | None:
    """AIPerf's benchmark window as UTC nanoseconds. AIPerf writes naive local time: they are read in
    `naive_tz` (InferenceX's `agentic_power_timezone_offset.txt`), by default this machine's zone."""
    bounds = aiperf_bounds_ns(summary, naive_tz)
    return bounds if bounds is not None and bounds[1] > bounds[0] else None


def aiperf_bounds_ns(summary: Mapping[str, Any] | None, naive_tz: tzinfo | None = None) -> tuple[int, int] | None:
    """`start_time` and `end_time` of AIPerf's summary as UTC nanoseconds, as they read: an end before the start
    (the wall clock stepped back inside the window) is kept. None where either is missing or unreadable."""
    bounds = []
    for key in ("start_time", "end_time"):
        raw = (summary or {}).get(key)
        if not isinstance(raw, str):
            return None
        try:
            moment = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None and naive_tz is not None:
            moment = moment.replace(tzinfo=naive_tz)
        bounds.append(round(moment.astimezone().timestamp() * NS_PER_S))
    return bounds[0], bounds[1]


def inferencex_power(samples: Sequence[PowerSample], window_ns: tuple[int, int] | None,
                     expected_gpus: int | None, successful: int, input_tokens: int,
                     output_tokens: int, problems: Sequence[Reason] = ()) -> dict[str, Any]:
    """The record's `power_inferencex` block computed from the samples (`inferencex_block` of their audit)."""
    audit = power_validation(samples, benchmark_window(window_ns, successful, input_tokens, output_tokens),
                             expected_gpus, inferencex_reasons(p.code for p in problems), precision=None)
    return inferencex_block(audit, window_ns, problems)


def inferencex_block(audit: Mapping[str, Any], window_ns: tuple[int, int] | None,
                     problems: Sequence[Reason] = ()) -> dict[str, Any]:
    """The record's `power_inferencex` block: window, verdict, InferenceX's reasons and (when valid) the metrics of
    InferenceX's audit (`harness.power.inferencex_audit`, unrounded); `harness_reasons` keeps the harness's own
    codes for the problems met reading the telemetry (`harness.power.samples.read_telemetry`)."""
    block: dict[str, Any] = {"window": WINDOW, "method": METHOD, "percentile_method": PERCENTILE_METHOD}
    if problems:
        block["harness_reasons"] = list(dict.fromkeys(p.code for p in problems))
    if window_ns is not None:
        start_ns, end_ns = window_ns
        block.update(start_ns=start_ns, end_ns=end_ns, duration_s=(end_ns - start_ns) / NS_PER_S)
    block.update(valid=audit["power_valid"], reasons=audit["reasons"], metrics=audit["metrics"])
    if audit["power_valid"]:
        block["gpus"] = audit["observed_gpu_count"]
    return block


def benchmark_window(window_ns: tuple[int, int] | None, successful: int, input_tokens: int,
                     output_tokens: int) -> BenchmarkWindow | None:
    """AIPerf's window in Unix seconds with what was served in it; None without a window."""
    if window_ns is None:
        return None
    return BenchmarkWindow(window_ns[0], window_ns[1], successful, input_tokens, output_tokens)
