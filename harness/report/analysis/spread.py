"""The spread of one point over repeated identical runs (`harness run --repeat N`).

Per metric: the runs' values, their minimum, median and maximum, and the spread (max − min) relative to the
median. It is how much the point moves between runs that change nothing, which a hand-tuner weighs before
reading a change into a comparison. With two runs or more, the mean, the sample standard deviation, the coefficient
of variation, the standard error and the Student-t 95 % interval of the mean (mean ± t₀.₉₇₅,ₙ₋₁ · s/√n;
`harness.report.analysis.confidence`): what the runs say about the point's true value, written beside the newest
record as `repeats.json`. Pure functions over `point_result.json` records.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness import SCHEMA_VERSION
from harness.inputs.json_input import finite_number
from harness.report.analysis.confidence import MeanInterval, mean_interval
from harness.report.analysis.table import OUTPUT_PER_GPU, TOTAL_PER_GPU

METRICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (TOTAL_PER_GPU, ("request_metrics", "throughput", "per_gpu", "total_tput_tps")),
    (OUTPUT_PER_GPU, ("request_metrics", "throughput", "per_gpu", "output_tput_tps")),
    ("E2EL p50 (s)", ("request_metrics", "latency", "e2el", "p50")),
    ("E2EL p90 (s)", ("request_metrics", "latency", "e2el", "p90")),
    ("TTFT p50 (s)", ("request_metrics", "latency", "ttft", "p50")),
    ("TTFT p90 (s)", ("request_metrics", "latency", "ttft", "p90")),
    ("requests", ("num_requests_successful",)),
)


@dataclass(frozen=True)
class Spread:
    metric: str
    values: tuple[float, ...]

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    @property
    def spread_pct(self) -> float | None:
        """(max − min) / median in percent; None when the median is 0."""
        return None if self.median == 0 else (self.high - self.low) / abs(self.median) * 100

    @property
    def interval(self) -> MeanInterval | None:
        """The Student-t 95 % interval of the mean over the runs; None for one run."""
        return mean_interval(self.values)


def _value(record: Mapping[str, Any], path: tuple[str, ...]) -> float | None:
    node: Any = record
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return finite_number(node)


def spreads(records: Sequence[Mapping[str, Any]]) -> list[Spread]:
    """One Spread per metric that every record has."""
    out = []
    for name, path in METRICS:
        values = [_value(r, path) for r in records]
        if records and all(v is not None for v in values):
            out.append(Spread(name, tuple(float(v) for v in values if v is not None)))
    return out


def render(rows: Sequence[Spread], runs: int) -> str:
    """The spread table, or a line saying why there is none."""
    if runs < 2 or not rows:
        return f"spread: needs at least 2 completed runs with results ({runs} here)\n"
    lines = [f"spread over {runs} runs (max - min, relative to the median):",
             f"  {'metric':<14} {'min':>10} {'median':>10} {'max':>10} {'spread':>8}"]
    for s in rows:
        pct = "-" if s.spread_pct is None else f"{s.spread_pct:.1f} %"
        lines.append(f"  {s.metric:<14} {s.low:>10.4g} {s.median:>10.4g} {s.high:>10.4g} {pct:>8}")
    lines += ["", f"mean over {runs} runs with its Student-t 95% interval (mean ± t·s/√n, {runs - 1} degrees of freedom):",
              f"  {'metric':<14} {'mean':>10} {'std':>10} {'CV':>7} {'SE':>10} {'95% interval':>23}"]
    for s in rows:
        iv = s.interval
        if iv is None:
            continue
        cv = "-" if iv.cv_pct is None else f"{iv.cv_pct:.1f}%"
        lines.append(f"  {s.metric:<14} {iv.mean:>10.4g} {iv.std:>10.4g} {cv:>7} {iv.se:>10.4g} "
                     f"{f'[{iv.low:.4g}, {iv.high:.4g}]':>23}")
    return "\n".join(lines) + "\n"


def repeats_json(rows: Sequence[Spread], runs: int, attempts: Sequence[str]) -> dict[str, Any]:
    """`repeats.json`: per metric the runs' values, their spread and the Student-t 95 % interval of their mean."""
    metrics: dict[str, Any] = {}
    for s in rows:
        iv = s.interval
        metrics[s.metric] = {
            "values": list(s.values), "min": s.low, "median": s.median, "max": s.high, "spread_pct": s.spread_pct,
            **({"n": iv.n, "mean": iv.mean, "std": iv.std, "cv_pct": iv.cv_pct, "se": iv.se,
                "ci95": [iv.low, iv.high]} if iv is not None else {"n": len(s.values)}),
        }
    return {"schema_version": SCHEMA_VERSION, "runs": runs, "attempts": list(attempts), "level": 0.95,
            "method": "Student-t interval of the mean over the runs: mean ± t(0.975, n-1) * std / sqrt(n)",
            "metrics": metrics}


def interval_lines(label: str, rows: Sequence[Spread]) -> list[str]:
    """`label  metric  mean [low, high]  std  CV  SE  (n runs)` per metric with an interval."""
    out = []
    for s in rows:
        iv = s.interval
        if iv is not None:
            cv = "-" if iv.cv_pct is None else f"{iv.cv_pct:.1f}%"
            out.append(f"  {label}  {s.metric:<16} mean {iv.mean:.4g} [{iv.low:.4g}, {iv.high:.4g}]  std {iv.std:.3g}  "
                       f"CV {cv}  SE {iv.se:.3g}  ({iv.n} runs)")
    return out


INTERVALS_TITLE = "repeats: the mean over the runs with its Student-t 95% interval (mean ± t·s/√n):"
