"""SLO expressions: a row metric, a comparison and a value (`intvty_p90>=20`, `ttft_p90<=10`, `e2el_p90<=60`).

A metric is a latency statistic of the published row: `<name>_<stat>` where name is one of the row's latency
metrics (ttft, e2el, itl, tpot in seconds; intvty and e2e_norm_intvty in tokens/s per user) and stat one of
mean, p50, p75, p90, p95, p99. A point meets an SLO when it is valid and every expression holds.

`attainment` (a share from 0 to 1, `attainment>=0.95`) is the share of the point's requests that met every
per-request bound (`harness.recipe.request_slo`, given beside it as `--slo 'ttft<=0.5,e2el<=10'` or in the recipe;
`harness.point.record.slo`).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from harness.errors import UserError, did_you_mean

METRICS = ("ttft", "e2el", "itl", "tpot", "intvty", "e2e_norm_intvty")   # the row's request_metrics.latency
STATS = ("mean", "p50", "p75", "p90", "p95", "p99")
UNITS = {"ttft": "s", "e2el": "s", "itl": "s", "tpot": "s", "intvty": "tok/s/user", "e2e_norm_intvty": "tok/s/user"}
KNOWN = tuple(f"{m}_{s}" for m in METRICS for s in STATS)
ATTAINMENT = "attainment"   # the share of requests meeting the per-request bounds; no statistic

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt,
}
_EXPR = re.compile(r"^\s*([A-Za-z0-9_]+)\s*(<=|>=|<|>)\s*([^<>=\s]\S*)\s*$")


@dataclass(frozen=True)
class Slo:
    """One expression: `metric` (e.g. ttft), `stat` (e.g. p90), `op` and the threshold `value`."""

    metric: str
    stat: str
    op: str
    value: float

    @property
    def name(self) -> str:
        """The row metric's name, `ttft_p90` (`attainment` alone)."""
        return f"{self.metric}_{self.stat}" if self.stat else self.metric

    @property
    def text(self) -> str:
        return f"{self.name}{self.op}{self.value:g}"

    @property
    def higher_is_better(self) -> bool:
        return self.op in (">=", ">")

    def holds(self, measured: float) -> bool:
        return _OPS[self.op](measured, self.value)


def parse_slo(text: str) -> Slo:
    """`ttft_p90<=0.5` -> Slo; an unknown metric, comparison or value is a one-line UserError."""
    match = _EXPR.match(text)
    if match is None:
        raise UserError(f"--slo {text!r}: expected METRIC OP VALUE with OP one of <=, >=, <, >, e.g. ttft_p90<=10")
    name, op, raw = match.groups()
    if name == ATTAINMENT:
        try:
            share = float(raw)
        except ValueError:
            share = math.nan
        if not 0 <= share <= 1:
            raise UserError(f"--slo {text!r}: attainment is a share from 0 to 1, got {raw!r}")
        return Slo(metric=ATTAINMENT, stat="", op=op, value=share)
    if name not in KNOWN:
        raise UserError(f"--slo {text!r}: unknown metric {name!r}{did_you_mean(name, KNOWN)}; metrics are "
                        f"<{'|'.join(METRICS)}>_<{'|'.join(STATS)}>, or {ATTAINMENT} beside per-request bounds")
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise UserError(f"--slo {text!r}: {raw!r} is not a finite number")
    metric, stat = name.rsplit("_", 1)
    return Slo(metric=metric, stat=stat, op=op, value=value)


def parse_slos(texts: list[str]) -> list[Slo]:
    """Every `--slo`, in order; the same metric twice is refused (one bound per metric)."""
    slos = [parse_slo(t) for t in texts]
    names = [s.name for s in slos]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UserError(f"--slo: {', '.join(repeated)} given more than once (one bound per metric)")
    return slos
