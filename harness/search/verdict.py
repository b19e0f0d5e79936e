"""A tested point's verdict against the SLO, read from the point's own record (`point_result.json`), or from
its `status.json` when it left none (a server that never became ready: the point fails the SLO).

Each expression's value is the record's row metric. Where the point's per-request records hold the metric's
samples (TTFT and E2EL), the 95 % bootstrap interval of its percentile is computed (`spread`); a threshold
inside that interval makes the point `uncertain`: these requests cannot tell whether it meets the SLO.

A completed point whose expressions all hold but that is invalid only for too little evidence
(`EVIDENCE_REASONS`: too few completed requests, too short a window, as a low concurrency gives in a short
window) is `inconclusive`: not a pass, and no sign of the limit either (`harness.search.order`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.inputs.json_input import MAX_BYTES, read_json_value
from harness.report.results.load import RECORD_FILE, PointResult, finite_number, parse_result
from harness.search.order import Outcome
from harness.search.slo import Slo
from harness.search.spread import Interval, percentile_interval

EVIDENCE_REASONS = frozenset({"too_few_completed", "window_too_short"})


@dataclass(frozen=True)
class Check:
    """One expression on one point: the measured value (None: not measured), whether it holds, the interval."""

    slo: Slo
    value: float | None
    interval: Interval

    @property
    def holds(self) -> bool:
        return self.value is not None and self.slo.holds(self.value)

    @property
    def near(self) -> bool:
        """The threshold lies inside the value's interval: within the measured spread."""
        return self.interval.bounds is not None and self.interval.bounds[0] <= self.slo.value <= self.interval.bounds[1]

    def as_json(self) -> dict[str, Any]:
        return {"expression": self.slo.text, "value": self.value, "holds": self.holds,
                "interval_95": None if self.interval.bounds is None else [round(v, 6) for v in self.interval.bounds],
                "interval_reason": self.interval.reason, "within_spread": self.near}


@dataclass(frozen=True)
class PointVerdict:
    """One tested point: its state and validity from its record, each expression's check, and power."""

    conc: int
    point_dir: Path
    state: str
    valid: bool
    invalid_reasons: tuple[str, ...]
    checks: tuple[Check, ...]
    power_w: float | None        # average total GPU power over the point's window (None: not measured)
    power_reason: str | None     # why power_w is None

    @property
    def meets_slo(self) -> bool:
        return self.state == "completed" and self.valid and all(c.holds for c in self.checks)

    @property
    def outcome(self) -> Outcome:
        if self.meets_slo:
            return "pass"
        evidence_only = bool(self.invalid_reasons) and set(self.invalid_reasons) <= EVIDENCE_REASONS
        if self.state == "completed" and evidence_only and all(c.holds for c in self.checks):
            return "inconclusive"
        return "fail"

    @property
    def uncertain(self) -> bool:
        """A completed, valid point with a threshold inside the spread of its metric."""
        return self.state == "completed" and self.valid and any(c.near for c in self.checks)

    def metric(self, name: str) -> float | None:
        return next((c.value for c in self.checks if c.slo.name == name), None)


def read_verdict(point_dir: Path, conc: int, slos: list[Slo]) -> PointVerdict:
    """The verdict of the point in `point_dir` (run at `conc`) against `slos`."""
    record_path = point_dir / RECORD_FILE
    raw: Mapping[str, Any] = {}
    if record_path.is_file():
        data = read_json_value(record_path, "result", MAX_BYTES)
        raw = data if isinstance(data, Mapping) else {}
        point: PointResult | None = parse_result(raw, record_path)
    else:
        point = _unrecorded(point_dir)
    if point is None:
        return PointVerdict(conc, point_dir, "missing", False, ("no_record",),
                            tuple(Check(s, None, Interval(None, "no record")) for s in slos), None, "no record")
    checks = tuple(Check(s, point.stat(s.metric, s.stat), percentile_interval(point_dir, s)) for s in slos)
    reasons = tuple(r.code for r in point.invalid_reasons)
    if point.state != "completed" and not reasons:
        reasons = (f"state_{point.state}",)
    power_w, power_reason = _power(raw)
    return PointVerdict(conc, point_dir, point.state, point.valid, reasons, checks, power_w, power_reason)


def _unrecorded(point_dir: Path) -> PointResult | None:
    """A point without a record, read from its status (failed, cancelled)."""
    from harness.point.state.status import read_status
    from harness.report.results.unfinished import status_point

    status = read_status(point_dir)
    return status_point(status, point_dir) if isinstance(status, Mapping) else None


def _power(record: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """The record's average total GPU power (W) over its window, or why there is none."""
    if not record:
        return None, "no record"
    watts = finite_number(record.get("avg_total_gpu_power_w"))
    if record.get("power_valid") is True and watts is not None and watts > 0:
        return watts, None
    reasons = record.get("power_invalid_reasons")
    named = ", ".join(str(r) for r in reasons) if isinstance(reasons, list) and reasons else "power_valid false"
    return None, f"power not measured ({named})"
