"""Per-request SLO bounds: `ttft<=0.5,e2el<=10,intvty>=20`, the bounds every request's own figures must meet.

A bound names one request metric, a comparison and a value: `ttft` (time to first token, s) and `e2el` (end to
end latency, s) take an upper bound (`<=` or `<`); `intvty` (the request's interactivity, tokens/s: 1 / its mean
inter-token latency, as the record computes it, `harness.point.record.result_fields`) takes a lower bound (`>=`
or `>`). Each metric at most once. Given on `run`, `sweep`, `report`, `compare` and `search` as `--slo`, or in a
recipe as `slo:`. The search's percentile conditions (`ttft_p90<=2`, `harness.search.slo`) are another thing: a
statistic of the point, not a bound on each request.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from harness.errors import UserError, did_you_mean

REQUEST_METRICS = {"ttft": ("<=", "<"), "e2el": ("<=", "<"), "intvty": (">=", ">")}   # metric -> allowed ops
UNITS = {"ttft": "s", "e2el": "s", "intvty": "tok/s"}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt,
}
_BOUND = re.compile(r"^\s*([A-Za-z0-9_]+)\s*(<=|>=|<|>)\s*([^<>=\s]\S*)\s*$")


@dataclass(frozen=True)
class Bound:
    """One per-request bound: `metric op value`."""

    metric: str
    op: str
    value: float

    @property
    def text(self) -> str:
        return f"{self.metric}{self.op}{self.value:g}"

    def holds(self, measured: float) -> bool:
        return _OPS[self.op](measured, self.value)


@dataclass(frozen=True)
class RequestSlo:
    """The bounds a request must all meet to count as good."""

    bounds: tuple[Bound, ...]

    @property
    def text(self) -> str:
        return ",".join(b.text for b in self.bounds)

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(b.metric for b in self.bounds)


def is_request_bound(text: str) -> bool:
    """Whether `text` reads as per-request bounds (`ttft<=0.5`, `ttft<=0.5,e2el<=10`) rather than a percentile
    condition (`ttft_p90<=2`) or `attainment>=0.95`."""
    first = _BOUND.match(text.split(",")[0])
    return first is not None and first.group(1) in REQUEST_METRICS


def parse_request_slo(text: str, key: str = "--slo") -> RequestSlo:
    """`ttft<=0.5,e2el<=10` -> RequestSlo; a malformed one is a one-line UserError naming `key`."""
    if not isinstance(text, str) or not text.strip():
        raise UserError(f"{key}: expected bounds such as 'ttft<=0.5,e2el<=10,intvty>=20', got {text!r}")
    bounds: list[Bound] = []
    for part in text.split(","):
        match = _BOUND.match(part)
        if match is None:
            raise UserError(f"{key} {text!r}: {part.strip()!r} is not METRIC OP VALUE (e.g. ttft<=0.5, e2el<=10, "
                            "intvty>=20)")
        name, op, raw = match.groups()
        if name not in REQUEST_METRICS:
            raise UserError(f"{key} {text!r}: unknown request metric {name!r}{did_you_mean(name, REQUEST_METRICS)}; "
                            f"bounds are on {', '.join(REQUEST_METRICS)}")
        if op not in REQUEST_METRICS[name]:
            raise UserError(f"{key} {text!r}: {name} takes {' or '.join(REQUEST_METRICS[name])} "
                            f"({'an upper' if name != 'intvty' else 'a lower'} bound), not {op}")
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0:
            raise UserError(f"{key} {text!r}: {name}: {raw!r} is not a positive finite number")
        if name in (b.metric for b in bounds):
            raise UserError(f"{key} {text!r}: {name} given more than once (one bound per metric)")
        bounds.append(Bound(name, op, value))
    return RequestSlo(tuple(bounds))
