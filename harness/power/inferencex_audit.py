"""InferenceX's power audit of one single-node point: the body of `power_validation_<name>.json`.

InferenceX's single-node AgentX jobs publish, beside each result, an audit document (schema_version 1) that
its app ingests: whether the power is valid, InferenceX's reason codes, the benchmark window (AIPerf's
profiling window, Unix seconds), the expected and observed GPUs, each GPU's energy, sample count and largest
sampling gap, the teardown rows it skipped, and the metrics. This module computes that document from the
point's samples under InferenceX's rules, so what a reviewer's tooling recomputes from the exported
`gpu_metrics.csv` is what the document already says:

- GPUs are identified as InferenceX reads the exported CSV: by nvidia-smi's `index` column;
- only samples within 3 s of the window count; a missing, non-finite or non-positive reading outside the
  window is teardown noise, counted per GPU in `boundary_degenerate_rows` and otherwise ignored; inside the
  window it is `invalid_power_sample`; readings of one GPU at one instant are averaged;
- every GPU needs two samples (`insufficient_power_samples`), one at or before the window start and one at
  or after its end (`benchmark_window_not_bracketed`), and no gap over 3 s among the samples that cover the
  window (`sampling_gap_exceeded`); the observed GPU count must equal the expected one
  (`expected_gpu_count_mismatch`);
- energy is each GPU's trapezoid with linear interpolation at the window edges, summed; the p75/p90 total
  power is the time-weighted percentile of the summed curve (`harness.power.percentile`); the metrics are
  present only when the power is valid, at audit precision (6 places).

The harness's own reason codes (`harness.power.reasons`) map onto InferenceX's with `inferencex_reason`; the
record keeps ours where they say more.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.power import reasons as rc
from harness.power.percentile import power_at, time_weighted_percentile
from harness.power.samples import PowerSample

SCHEMA_VERSION = 1
MAX_SAMPLE_GAP_S = 3.0
AUDIT_PRECISION = 6
INTEGRATION_METHOD = "per_device_trapezoidal_with_linear_boundary_interpolation"
PERCENTILE_METHOD = "time_weighted_synchronized_total_piecewise_linear"

# The harness's reason codes as InferenceX names the same failure. Codes without an InferenceX counterpart
# (the NVML energy counter's checks: InferenceX integrates power alone) do not invalidate its audit.
INFERENCEX_REASON: dict[str, str | None] = {
    rc.NVML_UNAVAILABLE: "no_usable_power_samples",
    rc.TELEMETRY_FILE_MISSING: "telemetry_file_missing",
    rc.TELEMETRY_FILE_UNREADABLE: "telemetry_file_unreadable",
    rc.TELEMETRY_FILE_EMPTY: "telemetry_file_empty",
    rc.TELEMETRY_COLUMN_MISSING: "power_column_missing",
    rc.INVALID_SAMPLE_ROW: "invalid_power_sample",
    rc.NO_SAMPLES: "no_usable_power_samples",
    rc.WINDOW_INVALID: "invalid_benchmark_window",
    rc.GPU_COUNT_MISMATCH: "expected_gpu_count_mismatch",
    rc.TIMESTAMPS_NOT_MONOTONIC: "invalid_timestamp_sample",
    rc.WINDOW_NOT_BRACKETED: "benchmark_window_not_bracketed",
    rc.SAMPLING_GAP_EXCEEDED: "sampling_gap_exceeded",
    rc.WINDOW_CLOCK_MISMATCH: "benchmark_duration_mismatch",
    rc.ENERGY_COUNTER_NOT_MONOTONIC: None,
    rc.ENERGY_COUNTER_MISMATCH: None,
    rc.INVALID_TOKEN_COUNT: "invalid_output_token_count",
    rc.INVALID_REQUEST_COUNT: "invalid_successful_query_count",
    "aiperf_window_missing": "profile_window_missing",
    "incomplete_token_accounting": "incomplete_token_accounting",
}


def inferencex_reason(code: str) -> str | None:
    """InferenceX's name for one of the harness's power reason codes (None: InferenceX has no such check)."""
    return INFERENCEX_REASON.get(code, code)


def inferencex_reasons(codes: Iterable[str]) -> list[str]:
    """The harness's codes as InferenceX's, in order, each once."""
    return list(dict.fromkeys(r for r in (inferencex_reason(c) for c in codes) if r is not None))


@dataclass(frozen=True)
class BenchmarkWindow:
    """AIPerf's profiling window (wall-clock UTC nanoseconds) and what was served in it."""

    start_ns: int
    end_ns: int
    completed: int
    input_tokens: int
    output_tokens: int

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9

    def to_json(self) -> dict[str, float | int]:
        duration = self.duration_s
        return {"start_time_unix": self.start_ns / 1e9, "end_time_unix": self.end_ns / 1e9,
                "reported_duration_s": duration, "integration_duration_s": duration,
                "completed": self.completed, "total_input_tokens": self.input_tokens,
                "total_output_tokens": self.output_tokens}


def gpu_id(sample: PowerSample) -> str:
    """A GPU as InferenceX identifies it in the exported CSV: nvidia-smi's `index` column."""
    return str(sample.gpu_index)


def _id_order(gpu: str) -> tuple[int, int | str]:
    return (0, int(gpu)) if gpu.isdigit() else (1, gpu)


def _energy_j(series: Sequence[tuple[float, float]], start: float, end: float) -> float:
    """Trapezoid of piecewise-linear power over [start, end]; `series` brackets the window."""
    points = [(start, power_at(series, start)), *((t, p) for t, p in series if start < t < end),
              (end, power_at(series, end))]
    return sum((t1 - t0) * (p0 + p1) / 2.0 for (t0, p0), (t1, p1) in itertools.pairwise(points))


def _usable(power: float) -> bool:
    return math.isfinite(power) and power > 0.0


def _series_by_gpu(samples: Iterable[PowerSample], origin_ns: int, end: float,
                   reasons: list[str]) -> tuple[dict[str, list[tuple[float, float]]], dict[str, int]]:
    """Each GPU's (seconds since the window start, power) samples near the window [0, end], duplicates averaged;
    teardown rows counted apart. Times are kept relative to the start so no precision is lost to the epoch."""
    start = 0.0
    readings: dict[str, dict[float, list[float]]] = {}
    degenerate: dict[str, int] = {}
    for s in samples:
        t = (s.timestamp_ns - origin_ns) / 1e9
        if t < start - MAX_SAMPLE_GAP_S or t > end + MAX_SAMPLE_GAP_S:
            continue
        if not _usable(s.power_w) and (t < start or t > end):
            degenerate[gpu_id(s)] = degenerate.get(gpu_id(s), 0) + 1
            continue
        if not math.isfinite(s.power_w) or s.power_w < 0:
            reasons.append("invalid_power_sample")
            continue
        readings.setdefault(gpu_id(s), {}).setdefault(t, []).append(s.power_w)
    series = {gpu: sorted((t, sum(v) / len(v)) for t, v in by_time.items()) for gpu, by_time in readings.items()}
    return series, degenerate


def _metrics(total_j: float, gpus: int, p75: float, p90: float, window: BenchmarkWindow,
             precision: int | None) -> dict[str, float]:
    total_power = total_j / window.duration_s
    values = {
        "avg_power_w": total_power / gpus, "p75_power_w": p75 / gpus, "p75_total_gpu_power_w": p75,
        "p90_power_w": p90 / gpus, "p90_total_gpu_power_w": p90, "avg_total_gpu_power_w": total_power,
        "total_gpu_energy_j": total_j, "joules_per_successful_query": total_j / window.completed,
        "joules_per_input_token": total_j / window.input_tokens,
        "joules_per_output_token": total_j / window.output_tokens,
        "joules_per_total_token": total_j / (window.input_tokens + window.output_tokens),
    }
    return {key: value if precision is None else round(value, precision)
            for key, value in values.items() if math.isfinite(value)}


def _window_reasons(window: BenchmarkWindow) -> list[str]:
    out = []
    if window.end_ns <= window.start_ns:
        out.append("invalid_benchmark_window")
    if window.completed <= 0:
        out.append("invalid_successful_query_count")
    if window.input_tokens <= 0:
        out.append("invalid_input_token_count")
    if window.output_tokens <= 0:
        out.append("invalid_output_token_count")
    return out


def power_validation(samples: Sequence[PowerSample], window: BenchmarkWindow | None, expected_gpus: int | None,
                     prior_reasons: Sequence[str] = (), precision: int | None = AUDIT_PRECISION) -> dict[str, Any]:
    """The audit document. `prior_reasons`: InferenceX codes met before integrating (reading the telemetry,
    finding the window); `window` None when AIPerf's window could not be read. Metrics at audit precision
    (`precision` None: unrounded, as the row's power keys are computed before their own rounding)."""
    reasons = list(prior_reasons)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "power_valid": False, "reasons": reasons,
        "benchmark_window": None if window is None else window.to_json(),
        "integration_method": INTEGRATION_METHOD, "power_percentile_method": PERCENTILE_METHOD,
        "expected_gpu_count": expected_gpus, "observed_gpu_count": 0, "observed_gpu_ids": [],
        "per_gpu_sample_counts": {}, "per_gpu_max_sample_gap_s": {}, "per_gpu_energy_j": {},
        "device_issues": {}, "boundary_degenerate_rows": {}, "metrics": {},
    }
    if window is None:
        return _finish(doc, reasons or ["profile_window_missing"])
    reasons += _window_reasons(window)
    if "invalid_benchmark_window" in reasons:
        return _finish(doc, reasons)
    start, end = 0.0, window.duration_s
    series, degenerate = _series_by_gpu(samples, window.start_ns, end, reasons)
    doc["boundary_degenerate_rows"] = degenerate
    if not series:
        return _finish(doc, [*reasons, "no_usable_power_samples"])
    ids = sorted(series, key=_id_order)
    doc.update(observed_gpu_count=len(ids), observed_gpu_ids=ids)
    if expected_gpus is not None and expected_gpus > 0 and len(ids) != expected_gpus:
        reasons.append("expected_gpu_count_mismatch")
    energies: dict[str, float] = {}
    for gpu in ids:
        points = series[gpu]
        doc["per_gpu_sample_counts"][gpu] = len(points)
        issue = None
        if len(points) < 2:
            issue = "insufficient_power_samples"
        elif points[0][0] > start or points[-1][0] < end:
            issue = "benchmark_window_not_bracketed"
        else:
            first = max(i for i, (t, _) in enumerate(points) if t <= start)
            last = min(i for i, (t, _) in enumerate(points) if t >= end)
            gap = max((b[0] - a[0] for a, b in itertools.pairwise(points[first:last + 1])), default=0.0)
            doc["per_gpu_max_sample_gap_s"][gpu] = gap
            if gap > MAX_SAMPLE_GAP_S:
                issue = "sampling_gap_exceeded"
            energies[gpu] = _energy_j(points, start, end)
        if issue is not None:
            doc["device_issues"][gpu] = [issue]
            reasons.append(issue)
    doc["per_gpu_energy_j"] = energies
    reasons[:] = list(dict.fromkeys(reasons))
    if not reasons and len(energies) == len(ids):
        total = sum(energies.values())
        p75 = time_weighted_percentile([series[g] for g in ids], start, end, 0.75)
        p90 = time_weighted_percentile([series[g] for g in ids], start, end, 0.90)
        doc["metrics"] = _metrics(total, len(ids), p75, p90, window, precision)
    return _finish(doc, reasons)


def at_audit_precision(doc: Mapping[str, Any]) -> dict[str, Any]:
    """An audit computed unrounded (`precision=None`), its metrics at audit precision: the document's form."""
    return {**doc, "metrics": {k: round(v, AUDIT_PRECISION) for k, v in doc["metrics"].items()}}


def _finish(doc: dict[str, Any], reasons: list[str]) -> dict[str, Any]:
    doc["reasons"] = list(dict.fromkeys(reasons))
    doc["power_valid"] = not doc["reasons"] and bool(doc["metrics"])
    return doc


def energy_snapshots(samples: Iterable[PowerSample]) -> tuple[dict[str, float], dict[str, float]] | None:
    """Each GPU's energy counter (J) at its first and last sample: InferenceX's `gpu_metrics_energy_start.csv`
    and `_end.csv`, which it compares with the whole stream's integral. None when a GPU has no counter."""
    first: dict[str, PowerSample] = {}
    last: dict[str, PowerSample] = {}
    for s in sorted(samples, key=lambda s: s.timestamp_ns):
        if s.energy_mj is None:
            return None
        first.setdefault(gpu_id(s), s)
        last[gpu_id(s)] = s
    if not first:
        return None
    def joules(by_gpu: Mapping[str, PowerSample]) -> dict[str, float]:
        return {g: (s.energy_mj or 0) / 1000.0 for g, s in sorted(by_gpu.items(), key=lambda kv: _id_order(kv[0]))}
    return joules(first), joules(last)
