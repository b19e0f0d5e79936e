"""Check 14 of InferenceX's code-owner review on a report's curves: measured frontier points per curve.

For each curve (one InferenceX series, `harness.report.analysis.curves`) and each reviewed percentile (E2EL p90,
and p75 separately), the curve's measured points go through InferenceX's upper_right count
(`harness.report.analysis.upper_right`): y = total throughput per GPU, x = the E2EL percentile. A point that did
not measure (failed, cancelled, invalid by its validity verdict) is not a measurement and is not counted; it is
named beside the count. `harness check --results` and `harness report` both print these results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.report.analysis.curves import FRONTIER_AXES, Curve, y_value
from harness.report.analysis.upper_right import RECOMMENDED_POINTS, CoverageStatus, UpperRight, upper_right

# The reviewed percentiles: (axis name, words), the headline p90 first.
CHECK14_AXES: tuple[tuple[str, str], ...] = (("e2el_p90", "E2EL p90"), ("e2el_p75", "E2EL p75"))
CHECK14_RULE = (f"InferenceX code-owner Check 14: at least {RECOMMENDED_POINTS} measured points on each curve's "
                "frontier of total throughput per GPU vs E2EL p90 (p75 separately), counted with InferenceX's "
                "upper_right rule; below that the review needs an admin bypass (WARN)")


@dataclass(frozen=True)
class CurveCoverage:
    """Check 14 on one curve and one percentile."""

    curve: str
    simulated: bool
    axis: str
    words: str
    count: UpperRight[str]
    not_counted: tuple[str, ...]   # identities of points that did not measure

    @property
    def status(self) -> CoverageStatus:
        return self.count.status

    @property
    def name(self) -> str:
        return f"{self.curve} (simulated)" if self.simulated else self.curve

    @property
    def evidence(self) -> str:
        """`9/11 on the E2EL p90 frontier`, and why it warns or what it left out."""
        text = f"{self.count.count} on the {self.words} frontier"
        if self.count.invalid:
            text += (f"; invalid evidence (no {self.words} or throughput per GPU above 0): "
                     + ", ".join(self.count.invalid))
        if len(self.count.frontier) < RECOMMENDED_POINTS:
            text += f"; fewer than {RECOMMENDED_POINTS} frontier points: the review needs an admin bypass"
        if self.not_counted:
            text += "; not counted (no valid measurement): " + ", ".join(self.not_counted)
        return text

    @property
    def line(self) -> str:
        return f"{self.status} {self.name}: {self.evidence}"

    def to_json(self) -> dict[str, Any]:
        return {"curve": self.curve, "simulated": self.simulated, "axis": self.axis, "status": self.status,
                "frontier_points": len(self.count.frontier), "measured_points": self.count.measured,
                "frontier": list(self.count.frontier), "invalid": list(self.count.invalid),
                "not_counted": list(self.not_counted), "evidence": self.evidence}


def check14(curve: Curve) -> list[CurveCoverage]:
    """The curve's Check 14 result per reviewed percentile."""
    axes = {a.name: a for a in FRONTIER_AXES}
    measured = [(pid, p) for pid, p in curve.labelled() if p.recorded and p.valid]
    skipped = tuple(pid for pid, p in curve.labelled() if not (p.recorded and p.valid))
    out = []
    for name, words in CHECK14_AXES:
        axis = axes[name]
        count = upper_right([(pid, axis.value(p), y_value(p)) for pid, p in measured])
        out.append(CurveCoverage(curve=curve.key, simulated=curve.simulated, axis=name, words=words, count=count,
                                 not_counted=skipped))
    return out
