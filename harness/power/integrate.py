"""GPU energy over the client's profiling window, with a validity verdict a reviewer can audit.

Per GPU, over the window [start_ns, end_ns] (wall-clock UTC nanoseconds):

- **energy counter** (preferred): the NVML total-energy counter, linearly interpolated at both window
  edges between the samples that bracket each edge; energy = E(end) − E(start).
- **power trapezoid** (always computed when possible): power is taken as piecewise linear between
  samples, interpolated at both edges, and integrated with the trapezoid rule.

Where both exist they must agree within max(5%, 1 J). Average power = energy / window duration.
Every check that fails adds a reason (see `harness.power.reasons`); any reason makes power invalid,
and an invalid report exposes no energy metric in a result (the audit file still shows what was
computed).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.power import reasons as rc
from harness.power.reasons import Reason
from harness.power.samples import PowerSample, read_telemetry

NS_PER_S = 1_000_000_000
MAX_GAP_NS = 3 * NS_PER_S
CLOCK_TOLERANCE_ABS_NS = NS_PER_S // 2
CLOCK_TOLERANCE_REL = 0.01
COUNTER_TOLERANCE_REL = 0.05
COUNTER_TOLERANCE_ABS_J = 1.0
METHOD = "per_gpu_energy_counter_else_trapezoid_with_linear_edge_interpolation"
SOURCE_COUNTER = "energy_counter"
SOURCE_TRAPEZOID = "power_trapezoid"
# Problems that already explain why there is no sample (so `no_samples` would add nothing).
_NOTHING_TO_READ = {
    rc.NVML_UNAVAILABLE,
    rc.TELEMETRY_FILE_MISSING,
    rc.TELEMETRY_FILE_UNREADABLE,
    rc.TELEMETRY_FILE_EMPTY,
    rc.TELEMETRY_COLUMN_MISSING,
}


@dataclass(frozen=True)
class GpuEnergy:
    """What the samples say about one GPU over the window."""

    key: str
    gpu_index: int
    gpu_uuid: str
    samples_total: int
    samples_in_window: int
    max_gap_s: float | None
    energy_source: str | None
    energy_j: float | None
    counter_energy_j: float | None
    trapezoid_energy_j: float | None
    avg_power_w: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "gpu": self.key,
            "gpu_index": self.gpu_index,
            "gpu_uuid": self.gpu_uuid,
            "samples_total": self.samples_total,
            "samples_in_window": self.samples_in_window,
            "max_gap_s": self.max_gap_s,
            "energy_source": self.energy_source,
            "energy_j": self.energy_j,
            "counter_energy_j": self.counter_energy_j,
            "trapezoid_energy_j": self.trapezoid_energy_j,
            "counter_vs_trapezoid_rel_diff": _rel_diff(self.counter_energy_j, self.trapezoid_energy_j),
            "avg_power_w": self.avg_power_w,
        }


def _rel_diff(counter: float | None, trapezoid: float | None) -> float | None:
    if counter is None or trapezoid is None or counter == 0:
        return None
    return round(abs(counter - trapezoid) / counter, 6)


@dataclass(frozen=True)
class PowerReport:
    """Energy per GPU over one window, the verdict, and the reasons behind it."""

    start_ns: int
    end_ns: int
    expected_gpus: int | None
    gpus: tuple[GpuEnergy, ...]
    reasons: tuple[Reason, ...]
    reference_duration_ns: int | None = None
    sampler_status: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def valid(self) -> bool:
        return not self.reasons

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / NS_PER_S

    @property
    def total_energy_j(self) -> float | None:
        """Sum over GPUs, or None when any GPU's energy is unknown (or there are none)."""
        if not self.gpus or any(g.energy_j is None for g in self.gpus):
            return None
        return round(sum(g.energy_j for g in self.gpus if g.energy_j is not None), 3)

    def reason_codes(self) -> list[str]:
        """Distinct reason codes, in the order first met."""
        return list(dict.fromkeys(r.code for r in self.reasons))

    def result_fields(
        self, output_tokens: float | None, total_tokens: float | None, successful_requests: float | None
    ) -> dict[str, Any]:
        """Power fields of a benchmark result: metrics only when valid, reasons otherwise."""
        extra: list[Reason] = []
        if not _positive(output_tokens) or not _positive(total_tokens):
            extra.append(
                Reason(
                    rc.INVALID_TOKEN_COUNT, f"output_tokens={output_tokens!r}, total_tokens={total_tokens!r}"
                )
            )
        if not _positive(successful_requests):
            extra.append(Reason(rc.INVALID_REQUEST_COUNT, f"successful_requests={successful_requests!r}"))
        codes = list(dict.fromkeys([*self.reason_codes(), *(r.code for r in extra)]))
        total = self.total_energy_j
        if codes or total is None:
            return {"power_valid": False, "power_invalid_reasons": codes or [rc.NO_SAMPLES]}
        assert output_tokens and total_tokens and successful_requests  # checked above
        sources = sorted({g.energy_source for g in self.gpus if g.energy_source})
        return {
            "power_valid": True,
            "power_invalid_reasons": [],
            "power_energy_source": sources[0] if len(sources) == 1 else "mixed",
            "power_window_s": round(self.duration_s, 6),
            "avg_power_w": {g.key: g.avg_power_w for g in self.gpus},
            "avg_total_gpu_power_w": round(total / self.duration_s, 3),
            "total_gpu_energy_j": total,
            "joules_per_output_token": _ratio(total, output_tokens),
            "joules_per_total_token": _ratio(total, total_tokens),
            "joules_per_successful_request": _ratio(total, successful_requests),
        }

    def validation_json(self) -> dict[str, Any]:
        """Body of `power_validation.json` (write it with `harness.artifacts.write_json`)."""
        return {
            "power_valid": self.valid,
            "reasons": [r.to_json() for r in self.reasons],
            "reason_codes": self.reason_codes(),
            "method": METHOD,
            "window": {
                "start_ns": self.start_ns,
                "end_ns": self.end_ns,
                "duration_s": round(self.duration_s, 9),
                "reference_duration_s": (
                    None if self.reference_duration_ns is None else self.reference_duration_ns / NS_PER_S
                ),
                "clock": "wall_clock_utc_ns",
            },
            "expected_gpus": self.expected_gpus,
            "observed_gpus": len(self.gpus),
            "thresholds": {
                "max_gap_s": MAX_GAP_NS / NS_PER_S,
                "clock_tolerance_abs_s": CLOCK_TOLERANCE_ABS_NS / NS_PER_S,
                "clock_tolerance_rel": CLOCK_TOLERANCE_REL,
                "counter_tolerance_rel": COUNTER_TOLERANCE_REL,
                "counter_tolerance_abs_j": COUNTER_TOLERANCE_ABS_J,
            },
            "total_gpu_energy_j": self.total_energy_j,
            "gpus": [g.to_json() for g in self.gpus],
            "sampler": self.sampler_status,
        }


def _positive(value: float | None) -> bool:
    """A usable count: a finite number above zero (token counts may be derived, hence floats)."""
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    )


def _ratio(energy: float, count: float) -> float:
    return round(energy / count, 9)


def _interp(t: int, t0: int, v0: float, t1: int, v1: float) -> float:
    if t1 == t0:
        return v0
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def _bracket(series: Sequence[PowerSample], start_ns: int, end_ns: int) -> tuple[int, int] | None:
    """Indices (i0, i1): the last sample at or before start and the first at or after end."""
    i0 = max((i for i, s in enumerate(series) if s.timestamp_ns <= start_ns), default=None)
    i1 = min((i for i, s in enumerate(series) if s.timestamp_ns >= end_ns), default=None)
    if i0 is None or i1 is None:
        return None
    return i0, i1


def trapezoid_energy_j(span: Sequence[PowerSample], start_ns: int, end_ns: int) -> float:
    """Integral of piecewise-linear power over [start, end]; `span` brackets the window (≥ 2 samples)."""
    a, b = span[0], span[1]
    y, z = span[-2], span[-1]
    points = [(start_ns, _interp(start_ns, a.timestamp_ns, a.power_w, b.timestamp_ns, b.power_w))]
    points += [(s.timestamp_ns, s.power_w) for s in span if start_ns < s.timestamp_ns < end_ns]
    points.append((end_ns, _interp(end_ns, y.timestamp_ns, y.power_w, z.timestamp_ns, z.power_w)))
    total = 0.0
    for (t0, p0), (t1, p1) in itertools.pairwise(points):
        total += (t1 - t0) / NS_PER_S * (p0 + p1) / 2.0
    return total


def counter_energy_j(span: Sequence[PowerSample], start_ns: int, end_ns: int) -> float:
    """E(end) − E(start) of the cumulative counter, interpolated at both edges (mJ → J)."""
    a, b = span[0], span[1]
    y, z = span[-2], span[-1]
    assert all(s.energy_mj is not None for s in (a, b, y, z))
    e0 = _interp(start_ns, a.timestamp_ns, float(a.energy_mj or 0), b.timestamp_ns, float(b.energy_mj or 0))
    e1 = _interp(end_ns, y.timestamp_ns, float(y.energy_mj or 0), z.timestamp_ns, float(z.energy_mj or 0))
    return (e1 - e0) / 1000.0


def _one_gpu(
    key: str, series: list[PowerSample], start_ns: int, end_ns: int
) -> tuple[GpuEnergy, list[Reason]]:
    reasons: list[Reason] = []
    stamps = [s.timestamp_ns for s in series]
    if any(t1 <= t0 for t0, t1 in itertools.pairwise(stamps)):
        reasons.append(
            Reason(rc.TIMESTAMPS_NOT_MONOTONIC, f"GPU {key}: timestamps repeat or go backwards", key)
        )
        series = sorted(series, key=lambda s: s.timestamp_ns)
    first = series[0]
    inside = sum(1 for s in series if start_ns <= s.timestamp_ns <= end_ns)
    base: dict[str, Any] = {
        "key": key,
        "gpu_index": first.gpu_index,
        "gpu_uuid": first.gpu_uuid,
        "samples_total": len(series),
        "samples_in_window": inside,
    }
    bracket = _bracket(series, start_ns, end_ns)
    if bracket is None or bracket[1] - bracket[0] < 1:
        reasons.append(
            Reason(
                rc.WINDOW_NOT_BRACKETED,
                f"GPU {key}: samples span [{series[0].timestamp_ns}, {series[-1].timestamp_ns}] ns, "
                f"window [{start_ns}, {end_ns}] ns",
                key,
            )
        )
        empty = GpuEnergy(
            **base,
            max_gap_s=None,
            energy_source=None,
            energy_j=None,
            counter_energy_j=None,
            trapezoid_energy_j=None,
            avg_power_w=None,
        )
        return empty, reasons
    span = series[bracket[0] : bracket[1] + 1]
    max_gap = max(t1.timestamp_ns - t0.timestamp_ns for t0, t1 in itertools.pairwise(span))
    if max_gap > MAX_GAP_NS:
        reasons.append(
            Reason(
                rc.SAMPLING_GAP_EXCEEDED,
                f"GPU {key}: {max_gap / NS_PER_S:.3f} s between samples (> 3 s)",
                key,
            )
        )
    trapezoid = trapezoid_energy_j(span, start_ns, end_ns)
    counter: float | None = None
    if all(s.energy_mj is not None for s in span):
        energies = [s.energy_mj or 0 for s in span]
        if any(e1 < e0 for e0, e1 in itertools.pairwise(energies)):
            reasons.append(
                Reason(rc.ENERGY_COUNTER_NOT_MONOTONIC, f"GPU {key}: energy counter decreased", key)
            )
        else:
            counter = counter_energy_j(span, start_ns, end_ns)
            tolerance = max(COUNTER_TOLERANCE_REL * abs(counter), COUNTER_TOLERANCE_ABS_J)
            if abs(counter - trapezoid) > tolerance:
                reasons.append(
                    Reason(
                        rc.ENERGY_COUNTER_MISMATCH,
                        f"GPU {key}: counter {counter:.3f} J vs integrated power {trapezoid:.3f} J "
                        f"(tolerance {tolerance:.3f} J)",
                        key,
                    )
                )
    energy = counter if counter is not None else trapezoid
    duration_s = (end_ns - start_ns) / NS_PER_S
    gpu = GpuEnergy(
        **base,
        max_gap_s=round(max_gap / NS_PER_S, 9),
        energy_source=SOURCE_COUNTER if counter is not None else SOURCE_TRAPEZOID,
        energy_j=round(energy, 3),
        counter_energy_j=None if counter is None else round(counter, 3),
        trapezoid_energy_j=round(trapezoid, 3),
        avg_power_w=round(energy / duration_s, 3),
    )
    return gpu, reasons


def integrate_samples(
    samples: Iterable[PowerSample],
    start_ns: int,
    end_ns: int,
    expected_gpus: int | None,
    *,
    reference_duration_ns: int | None = None,
    prior_reasons: Sequence[Reason] = (),
    sampler_status: dict[str, Any] | None = None,
) -> PowerReport:
    """Integrate parsed samples over [start_ns, end_ns] (pure).

    `reference_duration_ns`: the same window's length measured by another clock (e.g. the client's
    monotonic benchmark duration); a disagreement beyond max(0.5 s, 1%) means the wall clocks that
    stamped the window and the samples cannot be trusted. `prior_reasons`: problems already found
    (reading the file, NVML unavailable); they are kept first.
    """
    reasons: list[Reason] = list(prior_reasons)
    start_ns, end_ns = int(start_ns), int(end_ns)

    def report(gpus: Sequence[GpuEnergy]) -> PowerReport:
        return PowerReport(
            start_ns,
            end_ns,
            expected_gpus,
            tuple(gpus),
            tuple(reasons),
            reference_duration_ns,
            sampler_status,
        )

    if end_ns <= start_ns:
        reasons.append(Reason(rc.WINDOW_INVALID, f"window end {end_ns} ns is not after start {start_ns} ns"))
        return report([])
    if reference_duration_ns is not None:
        span = end_ns - start_ns
        tolerance = max(CLOCK_TOLERANCE_ABS_NS, CLOCK_TOLERANCE_REL * span)
        if abs(span - reference_duration_ns) > tolerance:
            reasons.append(
                Reason(
                    rc.WINDOW_CLOCK_MISMATCH,
                    f"window spans {span / NS_PER_S:.3f} s by the wall clock but "
                    f"{reference_duration_ns / NS_PER_S:.3f} s by the reference clock",
                )
            )
    by_gpu: dict[str, list[PowerSample]] = {}
    for sample in samples:
        by_gpu.setdefault(sample.gpu_key, []).append(sample)
    if not by_gpu:
        if not any(r.code in _NOTHING_TO_READ for r in reasons):
            reasons.append(Reason(rc.NO_SAMPLES, "no power sample was recorded"))
        return report([])
    if expected_gpus is not None and len(by_gpu) != expected_gpus:
        reasons.append(
            Reason(
                rc.GPU_COUNT_MISMATCH, f"samples cover {len(by_gpu)} GPU(s), the point uses {expected_gpus}"
            )
        )
    gpus: list[GpuEnergy] = []
    for key in sorted(by_gpu, key=lambda k: (by_gpu[k][0].gpu_index, k)):
        gpu, gpu_reasons = _one_gpu(key, by_gpu[key], start_ns, end_ns)
        gpus.append(gpu)
        reasons.extend(gpu_reasons)
    return report(gpus)


def integrate_power(
    csv_path: Path,
    start_ns: int,
    end_ns: int,
    expected_gpus: int | None,
    *,
    reference_duration_ns: int | None = None,
) -> PowerReport:
    """Read `power.csv` (and the sampler's status sidecar beside it) and integrate over the window."""
    samples, problems, status = read_telemetry(csv_path)
    return integrate_samples(
        samples,
        start_ns,
        end_ns,
        expected_gpus,
        reference_duration_ns=reference_duration_ns,
        prior_reasons=problems,
        sampler_status=status,
    )
