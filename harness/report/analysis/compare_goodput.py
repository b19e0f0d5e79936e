"""`compare`'s SLO attainment, goodput and cost per point pair, A -> B: attainment with each side's 95 % Wilson
interval (and whether the two intervals are apart: a change the samples resolve), request and token goodput, and
the cost per million tokens and per agent-hour. Judged at `--slo`/`--gpu-hour-price` when given, else at what each
record holds (`harness.report.analysis.goodput`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.report.analysis.compare import CurveComparison
from harness.report.analysis.goodput import attainment_text
from harness.report.results.load import PointResult
from harness.vocabulary import TOTAL_PER_GPU


def _value(block: Mapping[str, Any] | None, *keys: str) -> float | None:
    d: Any = block or {}
    for k in keys:
        d = d.get(k) if isinstance(d, Mapping) else None
    return float(d) if isinstance(d, (int, float)) else None


def apart(a: PointResult, b: PointResult) -> bool | None:
    """Whether A's and B's attainment intervals do not overlap (None: either has none)."""
    ia = (a.slo_attainment or {}).get("attainment_interval_95")
    ib = (b.slo_attainment or {}).get("attainment_interval_95")
    if not ia or not ib:
        return None
    return bool(ia[1] < ib[0] or ib[1] < ia[0])


def _pair(a: float | None, b: float | None, digits: str = ".4g") -> str:
    fa = "-" if a is None else format(a, digits)
    fb = "-" if b is None else format(b, digits)
    return f"{fa} -> {fb}"


def goodput_lines(comparisons: Sequence[CurveComparison]) -> str:
    """One line per compared point that has an attainment or a cost on either side; empty when none has."""
    lines: list[str] = []
    for c in comparisons:
        for d in c.changed:
            a, b = d.old, d.new
            if not (a.slo_attainment or b.slo_attainment or a.cost or b.cost):
                continue
            sa, sb = a.slo_attainment or {}, b.slo_attainment or {}
            slo = sb.get("slo") or sa.get("slo")
            parts = []
            if sa or sb:
                sep = apart(a, b)
                told = "" if sep is None else ("; intervals apart" if sep else "; intervals overlap (within noise)")
                parts.append(f"attainment {attainment_text(sa)} -> {attainment_text(sb)} at {slo}{told}")
                parts.append("good req/s " + _pair(_value(sa, "request_goodput_rps"), _value(sb, "request_goodput_rps")))
                parts.append(f"good {TOTAL_PER_GPU} " + _pair(_value(sa, "token_goodput", "total_tps_per_gpu"),
                                                       _value(sb, "token_goodput", "total_tps_per_gpu"), ".1f"))
            if a.cost or b.cost:
                cur = (b.cost or a.cost or {}).get("currency", "")
                parts.append(f"{cur}/Mtok " + _pair(_value(a.cost, "per_million_total_tokens"),
                                                    _value(b.cost, "per_million_total_tokens")))
                parts.append(f"{cur}/agent-h " + _pair(_value(a.cost, "per_agent_hour"), _value(b.cost, "per_agent_hour")))
            lines.append(f"  {c.config_key} c{d.conc}: " + "; ".join(parts))
    return "" if not lines else "\nSLO attainment, goodput and cost (A -> B; attainment with its 95% Wilson interval):\n" \
        + "\n".join(lines) + "\n"


def goodput_pair_json(a: PointResult, b: PointResult) -> dict[str, Any]:
    """A point pair's blocks for `compare --json`."""
    return {"a": {"slo_attainment": a.slo_attainment and dict(a.slo_attainment), "cost": a.cost and dict(a.cost)},
            "b": {"slo_attainment": b.slo_attainment and dict(b.slo_attainment), "cost": b.cost and dict(b.cost)},
            "attainment_intervals_apart": apart(a, b)}
