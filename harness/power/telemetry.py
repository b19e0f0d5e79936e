"""Summaries of the context columns the sampler already reads: temperature, utilisation, clocks.

Over the samples inside a window, per GPU and over all GPUs: average and peak temperature (°C),
average utilisation (%), average and lowest SM clock and average memory clock (MHz). A column the
GPU did not report is absent from the summary, never filled in.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import mean
from typing import Any

from harness.power.samples import PowerSample


def _summary(samples: Sequence[PowerSample]) -> dict[str, Any]:
    out: dict[str, Any] = {"samples": len(samples)}
    temps = [s.temp_c for s in samples if s.temp_c is not None]
    utils = [s.util_pct for s in samples if s.util_pct is not None]
    sm = [s.sm_clock_mhz for s in samples if s.sm_clock_mhz is not None]
    mem = [s.mem_clock_mhz for s in samples if s.mem_clock_mhz is not None]
    if temps:
        out.update(avg_temp_c=round(mean(temps), 2), peak_temp_c=max(temps))
    if utils:
        out["avg_util_pct"] = round(mean(utils), 2)
    if sm:
        out.update(avg_sm_clock_mhz=round(mean(sm), 1), min_sm_clock_mhz=min(sm))
    if mem:
        out["avg_mem_clock_mhz"] = round(mean(mem), 1)
    return out


def telemetry_summary(samples: Sequence[PowerSample], start_ns: int, end_ns: int) -> dict[str, Any] | None:
    """`{"all": {...}, "per_gpu": {gpu: {...}}}` over [start_ns, end_ns]; None without a sample inside."""
    inside = [s for s in samples if start_ns <= s.timestamp_ns <= end_ns]
    if not inside:
        return None
    by_gpu: dict[str, list[PowerSample]] = {}
    for s in inside:
        by_gpu.setdefault(s.gpu_key, []).append(s)
    return {"window_start_ns": start_ns, "window_end_ns": end_ns, "all": _summary(inside),
            "per_gpu": {key: _summary(group) for key, group in sorted(by_gpu.items())}}
