"""A report's (or a comparison's) points judged at a request SLO and priced: `--slo` and `--gpu-hour-price` on `report`
and `compare`.

With `--slo`, each point's attainment and goodput are recomputed from its own per-request records
(`harness.point.record.slo`), so a past run can be judged at a new SLO; a point without per-request records keeps
none and a note says so (never a guess from its percentiles). With a price, each point's cost is recomputed
(`harness.point.record.cost`); without one, a point keeps the cost its record holds, recomputed where `--slo`
changed its good requests. The lines and table the CLI prints of them are here too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.point.record.cost import HOW_TO_PRICE, CostBasis, cost_block
from harness.point.record.result_fields import RequestRecord, parse_record
from harness.point.record.slo import attainment
from harness.recipe.pricing import Price
from harness.recipe.request_slo import RequestSlo
from harness.report.results.load import PointResult
from harness.report.results.samples import record_file
from harness.vocabulary import TOTAL_PER_GPU

COLUMNS = ("conc", "SLO", "attainment (95% CI)", "good/req", "good req/s", f"good {TOTAL_PER_GPU}", "cost/Mtok",
           "cost/Mtok out", "cost/agent-h", "cost/good req")

GOODPUT_COLUMNS = ("slo", "attainment", "attainment_low", "attainment_high", "slo_good", "slo_requests",
                   "request_goodput_rps", "token_goodput_total_tps_per_gpu", "currency", "cost_per_million_total_tokens",
                   "cost_per_million_output_tokens", "cost_per_agent_hour", "cost_per_good_request")


def read_request_records(path: Path) -> list[RequestRecord]:
    """Every request of a `profile_export.jsonl` (a truncated or unreadable line is skipped)."""
    out: list[RequestRecord] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                raw = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(raw, dict):
                out.append(parse_record(raw))
    return out


def point_basis(p: PointResult) -> CostBasis:
    """A point's cost basis, from its flattened record (whole-point throughput = per GPU x GPUs)."""
    gpus = p.num_gpus or 1
    good = (p.slo_attainment or {}).get("request_goodput_rps")
    return CostBasis(
        num_gpus=gpus,
        total_tokens_per_s=None if p.total_tput_per_gpu is None else p.total_tput_per_gpu * gpus,
        output_tokens_per_s=None if p.output_tput_per_gpu is None else p.output_tput_per_gpu * gpus,
        achieved_sessions=p.achieved_sessions,
        good_requests_per_s=good if isinstance(good, (int, float)) else None,
        avg_total_gpu_power_w=p.power_w,
        power_reason=None if p.power_w is not None else
        "power not valid (" + (", ".join(p.power_invalid_reasons) or "not measured") + ")")


def price_of_block(block: Mapping[str, Any] | None) -> Price | None:
    """The price a record's cost block was computed at."""
    if not block or not isinstance(block.get("gpu_hour_price"), (int, float)):
        return None
    energy = block.get("energy_price_kwh")
    return Price(float(block["gpu_hour_price"]), str(block.get("currency") or "USD"),
                 float(energy) if isinstance(energy, (int, float)) else None)


def judge(points: Sequence[PointResult], slo: RequestSlo | None, price: Price | None,
          label: str = "") -> tuple[list[PointResult], list[str]]:
    """`points` with attainment recomputed at `slo` and cost at `price` (each where given), and the notes."""
    notes: list[str] = []
    out: list[PointResult] = []
    for p in points:
        if slo is not None and p.recorded:
            path = record_file(p.point_dir)
            if path is None:
                notes.append(f"{label}{p.curve_key} c{p.conc}: no per-request records (profile_export.jsonl) "
                             f"beside {p.source.name}: attainment at {slo.text} not computed")
                p = replace(p, slo_attainment=None)
            else:
                block = attainment(read_request_records(path), p.cancelled_at_cutoff, p.num_gpus or 1, slo)
                p = replace(p, slo_attainment=block)
        at = price or price_of_block(p.cost)
        if at is not None and (price is not None or slo is not None):
            p = replace(p, cost=cost_block(point_basis(p), at))
        out.append(p)
    return out, notes


def _num(value: Any, digits: int) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:.{digits}f}"


def _money(value: Any) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:.4g}"


def attainment_text(block: Mapping[str, Any] | None) -> str:
    """`0.925 [0.80, 0.97]`."""
    if not block or not isinstance(block.get("attainment"), (int, float)):
        return "-"
    lo_hi = block.get("attainment_interval_95") or [None, None]
    return f"{block['attainment']:.3f} [{_num(lo_hi[0], 2)}, {_num(lo_hi[1], 2)}]"


def row(cell: str, p: PointResult) -> tuple[str, ...]:
    s, c = p.slo_attainment or {}, p.cost or {}
    tokens = s.get("token_goodput") or {}
    good = f"{s['good']}/{s['requests']}" if "good" in s else "-"
    return (cell, str(s.get("slo") or "-"), attainment_text(s), good, _num(s.get("request_goodput_rps"), 3),
            _num(tokens.get("total_tps_per_gpu"), 1), _money(c.get("per_million_total_tokens")),
            _money(c.get("per_million_output_tokens")), _money(c.get("per_agent_hour")),
            _money(c.get("per_good_request")))


def render_goodput(points: Sequence[tuple[str, PointResult]]) -> str:
    """The attainment, goodput and cost table of a curve's points (empty when none has either), with what the
    costs are in and how they were counted."""
    shown = [(cell, p) for cell, p in points if p.slo_attainment or p.cost]
    if not shown:
        return ""
    rows = [row(cell, p) for cell, p in shown]
    widths = [max(len(COLUMNS[i]), *(len(r[i]) for r in rows)) for i in range(len(COLUMNS))]
    lines = ["  ".join(v.rjust(w) if i else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))).rstrip()
             for r in [COLUMNS, *rows]]
    prices = sorted({f"{c['gpu_hour_price']:g} {c['currency']}/GPU-hour" + (
        f" + {c['energy_price_kwh']:g} {c['currency']}/kWh" if c.get("energy_price_kwh") is not None else "")
        for _, p in shown if (c := p.cost)})
    foot = [f"cost at {', '.join(prices)} (cost/agent-h at the achieved concurrency)" if prices else HOW_TO_PRICE]
    foot.append("attainment: good requests / (profiled requests + cancelled at the cutoff); errors and cancelled "
                "requests count as not met; 95% Wilson interval")
    return "\n".join([*lines, *foot]) + "\n"


def goodput_json(p: PointResult) -> dict[str, Any]:
    """A point's `slo_attainment` and `cost` blocks, for report.json and compare --json."""
    return {"slo_attainment": dict(p.slo_attainment) if p.slo_attainment else None,
            "cost": dict(p.cost) if p.cost else None}


def goodput_markdown(points: Sequence[tuple[str, PointResult]]) -> list[str]:
    """The attainment, goodput and cost table as markdown lines (none when no point has either)."""
    shown = [(cell, p) for cell, p in points if p.slo_attainment or p.cost]
    if not shown:
        return []
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" if i == 1 else "---:" for i in range(len(COLUMNS))) + "|"]
    out += ["| " + " | ".join(v.replace("|", "\\|") for v in row(cell, p)) + " |" for cell, p in shown]
    return out


def goodput_cells(p: PointResult) -> list[str]:
    """The point's `GOODPUT_COLUMNS` for report.csv (empty cells where it has no SLO or price)."""
    s, c = p.slo_attainment or {}, p.cost or {}
    interval = s.get("attainment_interval_95") or [None, None]
    values = [s.get("slo"), s.get("attainment"), interval[0], interval[1], s.get("good"), s.get("requests"),
              s.get("request_goodput_rps"), (s.get("token_goodput") or {}).get("total_tps_per_gpu"), c.get("currency"),
              c.get("per_million_total_tokens"), c.get("per_million_output_tokens"), c.get("per_agent_hour"),
              c.get("per_good_request")]
    return ["" if v is None else repr(v) if isinstance(v, float) else str(v) for v in values]
