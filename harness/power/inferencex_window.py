"""Power as InferenceX publishes it: over AIPerf's benchmark window, by the power trapezoid.

InferenceX integrates each GPU's board power (trapezoid, linear interpolation at the edges) over
AIPerf's own benchmark window, `start_time` → `end_time` of `profile_export_aiperf.json`, and divides
by the successful profiled requests and their tokens. The harness's own figures (`harness.power.integrate`)
use the window from the first successful request's start to the last one's end and prefer NVML's energy
counter; both are kept in the point's record, and the published row carries this one, so the row
agrees with what InferenceX's aggregation computes from the same samples.

Validity is the harness's (every check in `harness.power.integrate`, over this window), which covers
InferenceX's checks (every GPU brackets the window, no gap over 3 s, the expected GPU count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any

from harness.power.integrate import NS_PER_S, integrate_samples
from harness.power.percentile import time_weighted_percentile
from harness.power.reasons import Reason
from harness.power.samples import PowerSample

WINDOW = "aiperf_benchmark_start_to_end"
METHOD = "per_device_trapezoidal_with_linear_boundary_interpolation"
PERCENTILE_METHOD = "time_weighted_synchronized_total_piecewise_linear"


def aiperf_window_ns(summary: Mapping[str, Any] | None, naive_tz: tzinfo | None = None) -> tuple[int, int] | None:
    """AIPerf's benchmark window as UTC nanoseconds. AIPerf writes naive local time: they are read in
    `naive_tz` (InferenceX's `agentic_power_timezone_offset.txt`), by default this machine's zone."""
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
    return (bounds[0], bounds[1]) if bounds[1] > bounds[0] else None


def inferencex_power(samples: Sequence[PowerSample], window_ns: tuple[int, int] | None,
                     expected_gpus: int | None, successful: int, input_tokens: int,
                     output_tokens: int, problems: Sequence[Reason] = ()) -> dict[str, Any]:
    """The record's `power_inferencex` block: window, verdict, reasons and (when valid) the metrics.
    `problems` are those met reading the telemetry (`harness.power.samples.read_telemetry`)."""
    block: dict[str, Any] = {"window": WINDOW, "method": METHOD, "percentile_method": PERCENTILE_METHOD}
    if window_ns is None:
        codes = list(dict.fromkeys([*(p.code for p in problems), "aiperf_window_missing"]))
        return {**block, "valid": False, "reasons": codes, "metrics": {}}
    start_ns, end_ns = window_ns
    report = integrate_samples(samples, start_ns, end_ns, expected_gpus, prior_reasons=list(problems))
    block.update(start_ns=start_ns, end_ns=end_ns, duration_s=report.duration_s)
    reasons = report.reason_codes()
    if successful <= 0 or input_tokens <= 0 or output_tokens <= 0:
        reasons.append("incomplete_token_accounting")
    trapezoids = [g.trapezoid_energy_j for g in report.gpus]
    if reasons or not trapezoids or any(e is None for e in trapezoids):
        return {**block, "valid": False, "reasons": reasons or ["no_samples"], "metrics": {}}
    energy = sum(e for e in trapezoids if e is not None)
    gpus = len(trapezoids)
    start_s, end_s = start_ns / NS_PER_S, end_ns / NS_PER_S
    by_gpu: dict[str, list[tuple[float, float]]] = {}
    for s in sorted(samples, key=lambda s: s.timestamp_ns):
        by_gpu.setdefault(s.gpu_key, []).append((s.timestamp_ns / NS_PER_S, s.power_w))
    series = list(by_gpu.values())
    p75 = time_weighted_percentile(series, start_s, end_s, 0.75)
    p90 = time_weighted_percentile(series, start_s, end_s, 0.90)
    total_power = energy / report.duration_s
    metrics = {
        "avg_power_w": total_power / gpus, "p75_power_w": p75 / gpus, "p75_total_gpu_power_w": p75,
        "p90_power_w": p90 / gpus, "p90_total_gpu_power_w": p90, "avg_total_gpu_power_w": total_power,
        "total_gpu_energy_j": energy, "joules_per_successful_query": energy / successful,
        "joules_per_input_token": energy / input_tokens, "joules_per_output_token": energy / output_tokens,
        "joules_per_total_token": energy / (input_tokens + output_tokens),
    }
    return {**block, "valid": True, "reasons": [], "gpus": gpus, "metrics": metrics}
