"""A tested point's outcome against the SLO, read from the point's own record (`point_result.json`), or from
its `status.json` when it left none (a server that never became ready: the point fails the SLO).

Each expression's value is the record's row metric. Where the point's per-request records hold the metric's
samples (TTFT and E2EL), distribution-free 95 % bounds of its percentile are computed (`spread`: order statistics,
each bound one-sided at 95 %, unbounded when the point has too few requests for it).

The outcome (`judge`, a pure function) is one of three, each with the reasons it gives (`why`):

- `fail`: the point failed (a server that never became ready, a crash), is invalid for a reason that is not
  its sample (errors, context overflows, an environment not applied, ...), or is a valid point on which an
  expression is breached (its bounds clear of the threshold); also a point whose load fell short of its target
  (achieved concurrency low, and no other sample reason) that breaches an expression clear of its interval: more
  sessions do not bring latency down (the search's own premise), so the target's load breaches it too;
- `inconclusive`: the point's sample cannot tell: invalid only for sample reasons (`SAMPLE_REASONS`: too few
  completed requests, too short a window, achieved concurrency below the record's bound), an achieved concurrency
  below `min_achieved_ratio` of its target (default `MIN_ACHIEVED_RATIO`), or a threshold inside the bounds of
  its percentile (an unbounded end included: too few requests to bound it). It is never counted as a pass or a fail (`harness.search.order`);
- `pass`: a valid point with every expression holding and none of the above: for a `<=` condition on a percentile,
  its upper bound below the threshold (for `>=`, its lower bound above it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.inputs.json_input import MAX_BYTES, finite_number, read_json_value
from harness.point.state.status import read_status
from harness.recipe.request_slo import RequestSlo
from harness.report.analysis.goodput import judge as judge_goodput
from harness.report.results.load import RECORD_FILE, PointResult, parse_result
from harness.report.results.unfinished import status_point
from harness.search.order import Outcome
from harness.search.slo import ATTAINMENT, Slo
from harness.search.spread import WILSON, Interval, percentile_interval

SAMPLE_REASONS = frozenset({"too_few_completed", "window_too_short", "concurrency_below_target"})
LOAD_REASONS = frozenset({"concurrency_below_target"})   # the sample reasons that say the load fell short
MIN_ACHIEVED_RATIO = 0.7              # achieved / target concurrency below which a point's load is not its target's


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
        """The threshold lies inside the value's bounds (an unbounded end included): within the measured spread."""
        return self.interval.bounds is not None and self.interval.bounds[0] <= self.slo.value <= self.interval.bounds[1]

    def as_json(self) -> dict[str, Any]:
        return {"expression": self.slo.text, "value": self.value, "holds": self.holds,
                "interval_95": self.interval.as_json(),
                "interval_reason": self.interval.reason, "within_spread": self.near}


@dataclass(frozen=True)
class Judgement:
    """A point's outcome and the reasons it counted so, in words."""

    outcome: Outcome
    why: tuple[str, ...]


def judge(state: str, valid: bool, invalid_reasons: Sequence[str], checks: Sequence[Check], conc: int,
          achieved: float | None, min_achieved_ratio: float = MIN_ACHIEVED_RATIO) -> Judgement:
    """The outcome of one tested point (see the module docstring), first match wins: not completed → fail;
    invalid for a reason other than its sample → fail; a sample that cannot tell → inconclusive; an expression
    breached or not measured → fail; else pass."""
    if state != "completed":
        return Judgement("fail", (f"the point {state}" + (f": {', '.join(invalid_reasons)}" if invalid_reasons
                                                          else ""),))
    other = [r for r in invalid_reasons if r not in SAMPLE_REASONS]
    if other:
        return Judgement("fail", (f"invalid: {', '.join(other)}",))
    unsure: list[str] = []
    if invalid_reasons:
        unsure.append(f"invalid for its sample: {', '.join(invalid_reasons)}")
    low_load = achieved is not None and achieved < min_achieved_ratio * conc
    if low_load and "concurrency_below_target" not in invalid_reasons:
        unsure.append(f"achieved concurrency {achieved:.3g} of {conc} (below {min_achieved_ratio:.0%})")
    clear = [c for c in checks if c.value is not None and not c.holds and c.interval.bounds is not None and not c.near]
    if clear and set(invalid_reasons) <= LOAD_REASONS and (low_load or invalid_reasons):
        # less load than the target's already breaches it: the target's load (more sessions) breaches it too
        return Judgement("fail", (*(f"{c.slo.name}={c.value:.4g} breaches {c.slo.text} (the threshold outside its "
                                    f"{c.interval.name} {c.interval.text()})" for c in clear),
                                  f"at a load below its target ({_load_text(achieved, conc)}): the full load "
                                  "breaches it too"))
    for c in checks:
        if c.near:
            unsure.append(f"{c.slo.text}: {c.slo.name}={c.value:.4g}, the threshold lies within its "
                          f"{c.interval.name} {c.interval.text()}" + (f" ({c.interval.reason})" if c.interval.reason else ""))
    if unsure:
        return Judgement("inconclusive", tuple(unsure))
    missing = [c.slo.name for c in checks if c.value is None]
    if missing:
        return Judgement("fail", (f"not measured: {', '.join(missing)}",))
    breached = [f"{c.slo.name}={c.value:.4g} breaches {c.slo.text}" for c in checks if not c.holds]
    if breached:
        return Judgement("fail", tuple(breached))
    return Judgement("pass", tuple(f"{c.slo.name}={c.value:.4g} meets {c.slo.text}" for c in checks))


def _load_text(achieved: float | None, conc: int) -> str:
    return f"achieved concurrency {achieved:.3g} of {conc}" if achieved is not None else f"below c{conc}'s load"


@dataclass(frozen=True)
class TestedPoint:
    """One tested point: its state and validity from its record, each expression's check, power, and the
    sample it rests on (achieved concurrency, completed requests, the requested window)."""

    __test__ = False   # not a pytest test class, whatever its name says (the tests import it)

    conc: int
    point_dir: Path
    state: str
    valid: bool
    invalid_reasons: tuple[str, ...]
    checks: tuple[Check, ...]
    power_w: float | None        # average total GPU power over the point's window (None: not measured)
    power_reason: str | None     # why power_w is None
    achieved: float | None = None            # live session trees over the window (None: not recorded)
    requests: int | None = None              # successful profiled requests
    window_s: float | None = None            # the requested window
    min_achieved_ratio: float = MIN_ACHIEVED_RATIO

    @property
    def judgement(self) -> Judgement:
        return judge(self.state, self.valid, self.invalid_reasons, self.checks, self.conc, self.achieved,
                     self.min_achieved_ratio)

    @property
    def outcome(self) -> Outcome:
        return self.judgement.outcome

    @property
    def why(self) -> tuple[str, ...]:
        return self.judgement.why

    @property
    def meets_slo(self) -> bool:
        return self.outcome == "pass"

    @property
    def uncertain(self) -> bool:
        """A completed, valid point with a threshold inside the spread of its metric."""
        return self.state == "completed" and self.valid and any(c.near for c in self.checks)

    def metric(self, name: str) -> float | None:
        return next((c.value for c in self.checks if c.slo.name == name), None)


def read_tested(point_dir: Path, conc: int, slos: list[Slo],
                 min_achieved_ratio: float = MIN_ACHIEVED_RATIO, request_slo: RequestSlo | None = None) -> TestedPoint:
    """The tested point in `point_dir` (run at `conc`) against `slos`; `attainment` at `request_slo`, recomputed from
    the point's per-request records (`harness.report.analysis.goodput`), else as its record holds it."""
    record_path = point_dir / RECORD_FILE
    raw: Mapping[str, Any] = {}
    if record_path.is_file():
        data = read_json_value(record_path, "result", MAX_BYTES)
        raw = data if isinstance(data, Mapping) else {}
        point: PointResult | None = parse_result(raw, record_path)
    else:
        point = _unrecorded(point_dir)
    if point is None:
        return TestedPoint(conc, point_dir, "missing", False, ("no_record",),
                            tuple(Check(s, None, Interval(None, "no record")) for s in slos), None, "no record",
                            min_achieved_ratio=min_achieved_ratio)
    if request_slo is not None and any(s.metric == ATTAINMENT for s in slos):
        point = judge_goodput([point], request_slo, None)[0][0]
    checks = tuple(_attainment_check(s, point) if s.metric == ATTAINMENT else
                   Check(s, point.stat(s.metric, s.stat), percentile_interval(point_dir, s)) for s in slos)
    reasons = tuple(r.code for r in point.invalid_reasons)
    if point.state != "completed" and not reasons:
        reasons = (f"state_{point.state}",)
    power_w, power_reason = _power(raw)
    clock = raw.get("window_clock")
    window = finite_number(clock.get("requested_s")) if isinstance(clock, Mapping) else None
    return TestedPoint(conc, point_dir, point.state, point.valid, reasons, checks, power_w, power_reason,
                        point.achieved_sessions, point.num_requests_successful if point.recorded else None, window,
                        min_achieved_ratio)


def _attainment_check(slo: Slo, point: PointResult) -> Check:
    """`attainment` of the point with its Wilson interval, or None with the reason."""
    block = point.slo_attainment or {}
    value = finite_number(block.get("attainment"))
    bounds = block.get("attainment_interval_95")
    if value is None:
        return Check(slo, None, Interval(None, "no attainment: no per-request records or no request SLO"))
    return Check(slo, value, Interval((float(bounds[0]), float(bounds[1])) if bounds else None,
                                      None if bounds else "no requests", WILSON))


def achieved_ratio(given: float | None) -> float:
    """The least achieved / target concurrency a point needs to count (`--min-achieved-ratio`, else the default)."""
    return MIN_ACHIEVED_RATIO if given is None else float(given)


def tested_line(point: TestedPoint) -> str:
    """`[search] c8: meets the SLO (ttft_p90=0.31 meets ttft_p90<=0.5; achieved 7.9, 120 requests)`: one tested
    point, as the console shows it, with why it counted so."""
    mark = {"pass": "meets the SLO", "fail": "does not meet the SLO", "inconclusive": "inconclusive"}[point.outcome]
    achieved = "-" if point.achieved is None else f"{point.achieved:.3g}"
    requests = "-" if point.requests is None else str(point.requests)
    return (f"[search] c{point.conc}: {mark} ({'; '.join(point.why)}; achieved {achieved}, "
            f"{requests} requests)")


def _unrecorded(point_dir: Path) -> PointResult | None:
    """A point without a record, read from its status (failed, cancelled)."""
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
