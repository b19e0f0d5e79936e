"""`search.json` and the console summary of a search, built from the tested points' outcomes (pure).

`boundary_conc` is the highest tested concurrency that meets the SLO below every failing one (null when none
does). `boundary_interval` is where the boundary lies: `[boundary, first failure - 1]` (`max_conc` without a failure);
when it is wider than one concurrency (inconclusive points inside it that the search could not settle within its
budget) the answer is uncertain, and `uncertain.reason` says why. Each point says how it counted (`outcome`, `why`)
and whether it is the test its concurrency counts by (`counted`: the latest). The capacity at the boundary is `agents_per_gpu` (boundary / GPUs of the point), `agents_per_node`
(boundary / nodes) and `agents_per_kw` (boundary / the boundary point's measured average total GPU power in
kW), each null with a reason when it could not be measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.recipe.pricing import Price
from harness.search.order import Bracket, above_boundary_passes
from harness.search.slo import Slo
from harness.search.tested import TestedPoint

SEARCH_FILE = "search.json"


@dataclass(frozen=True)
class SearchSpec:
    """What was searched: the recipe, the SLO, the bounds and the point resources."""

    recipe: str
    config_key: str
    variant: str | None
    slos: tuple[Slo, ...]
    min_conc: int
    max_conc: int
    num_gpus: int   # of the boundary point (of the first point while there is none)
    nodes: int
    request_slo: str | None = None   # the per-request bounds an `attainment` condition is judged at
    price: Price | None = None       # the price capacity per currency unit per hour is counted at


def search_json(spec: SearchSpec, tested: Sequence[TestedPoint], state: Bracket, complete: bool,
                budget_reason: str | None = None) -> dict[str, Any]:
    """The body of `search.json`: the SLO, every tested point in the order tested, the boundary and capacity;
    `budget_reason`: why the search ended before its bracket was closed."""
    by_conc = {v.conc: v for v in tested}   # the latest test of each concurrency
    boundary = by_conc.get(state.boundary) if state.boundary is not None else None
    return {
        "recipe": spec.recipe,
        "config_key": spec.config_key,
        "variant": spec.variant,
        "slo": [s.text for s in spec.slos],
        "request_slo": spec.request_slo,
        "min_conc": spec.min_conc,
        "max_conc": spec.max_conc,
        "complete": complete,
        "points": _points_json(tested),
        "boundary_conc": state.boundary,
        "boundary_interval": [state.low, state.high],
        "first_failing_conc": state.first_fail,
        "upper_bound_reached": state.upper_bound_reached,
        "passes_above_boundary": above_boundary_passes({v.conc: v.outcome for v in tested}, state.first_fail),
        "budget_reason": budget_reason,
        "uncertain": _uncertain(tested, state, budget_reason),
        **_capacity(spec, boundary),
    }


def _points_json(tested: Sequence[TestedPoint]) -> list[dict[str, Any]]:
    """Each test in order, with its attempt at its concurrency and whether its concurrency counts by it."""
    last = {v.conc: i for i, v in enumerate(tested)}
    seen: dict[int, int] = {}
    out = []
    for i, v in enumerate(tested):
        seen[v.conc] = seen.get(v.conc, 0) + 1
        out.append(_point_json(v, i + 1, seen[v.conc], last[v.conc] == i))
    return out


def _point_json(v: TestedPoint, order: int, attempt: int, counted: bool) -> dict[str, Any]:
    return {
        "order": order,
        "conc": v.conc,
        "attempt": attempt,
        "counted": counted,
        "window_s": v.window_s,
        "achieved_concurrency": v.achieved,
        "requests": v.requests,
        "point_dir": str(v.point_dir),
        "state": v.state,
        "valid": v.valid,
        "invalid_reasons": list(v.invalid_reasons),
        "meets_slo": v.meets_slo,
        "outcome": v.outcome,
        "why": list(v.why),
        "uncertain": v.uncertain,
        "metrics": {c.slo.name: c.value for c in v.checks},
        "checks": [c.as_json() for c in v.checks],
    }


def _uncertain(tested: Sequence[TestedPoint], state: Bracket, budget_reason: str | None) -> dict[str, Any]:
    """Whether the answer is uncertain: the interval in which the boundary lies is wider than one concurrency
    (`reason`: the inconclusive points inside it and why each is, and the budget that ended the search)."""
    latest = {v.conc: v for v in tested}
    inside = state.unknown({c: v.outcome for c, v in latest.items()})
    reason = None
    if not state.settled:
        low = "no concurrency" if state.low is None else f"c{state.low}"
        parts = [f"c{c} inconclusive ({'; '.join(latest[c].why)})" for c in inside]
        if not inside:
            parts.append("untested concurrencies inside it")
        reason = f"the boundary lies between {low} and c{state.high}: " + ", ".join(parts)
        if budget_reason:
            reason += f"; {budget_reason}"
    return {"boundary": not state.settled, "reason": reason, "interval": [state.low, state.high],
            "inconclusive": inside, "points": sorted({v.conc for v in tested if v.uncertain}),
            "deciding_points": [c for c in (state.boundary, state.first_fail) if c is not None and latest[c].uncertain]}


def _capacity(spec: SearchSpec, boundary: TestedPoint | None) -> dict[str, Any]:
    if boundary is None:
        reason = "no tested concurrency meets the SLO"
        return {"agents_per_gpu": None, "agents_per_node": None, "agents_per_kw": None,
                "capacity_reason": reason, "agents_per_kw_reason": reason, "boundary_power_w": None}
    kw = None if boundary.power_w is None else boundary.conc / (boundary.power_w / 1000.0)
    return {
        "agents_per_gpu": round(boundary.conc / spec.num_gpus, 6),
        "agents_per_node": round(boundary.conc / spec.nodes, 6),
        "agents_per_kw": None if kw is None else round(kw, 6),
        "capacity_reason": None,
        "agents_per_kw_reason": boundary.power_reason,
        "boundary_power_w": boundary.power_w,
        **_per_currency(spec, boundary),
    }


def _per_currency(spec: SearchSpec, boundary: TestedPoint) -> dict[str, Any]:
    """Agents per currency unit per hour at the boundary: its concurrency over the hourly cost of its GPUs (and of
    their measured energy, where an energy price is given and power is valid); absent without a price."""
    if spec.price is None:
        return {}
    price = spec.price
    energy = None
    if price.energy_kwh is not None and boundary.power_w is not None:
        energy = boundary.power_w / 1000.0 * price.energy_kwh
    hourly = spec.num_gpus * price.gpu_hour + (energy or 0.0)
    return {"price": {"gpu_hour": price.gpu_hour, "currency": price.currency, "energy_kwh": price.energy_kwh},
            "hourly_cost": round(hourly, 6), "hourly_energy_cost": None if energy is None else round(energy, 6),
            "agents_per_currency_hour": round(boundary.conc / hourly, 6)}


def render_summary(doc: dict[str, Any]) -> str:
    """A short table of the tested points (in concurrency order) and the answer."""
    names = [s.split("<")[0].split(">")[0] for s in doc["slo"]]
    header = ["conc", "try", "window", "valid", "achieved", "requests", *names, "outcome", "why"]
    rows = []
    for p in sorted(doc["points"], key=lambda p: (p["conc"], p.get("attempt", 1))):
        cells = [_fmt(p["metrics"].get(n)) for n in names]
        why = "; ".join(p.get("why", [])) if p.get("counted", True) else "replaced by a later try"
        why = "" if p["outcome"] == "pass" and p.get("counted", True) else why
        window = "-" if p.get("window_s") is None else f"{p['window_s']:g}s"
        rows.append([str(p["conc"]), str(p.get("attempt", 1)), window, "yes" if p["valid"] else "no",
                     _fmt(p.get("achieved_concurrency")), "-" if p.get("requests") is None else str(p["requests"]),
                     *cells, p["outcome"] if p.get("counted", True) else f"({p['outcome']})", why])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]
    at = f" (per request: {doc['request_slo']})" if doc.get("request_slo") else ""
    return "\n".join([f"SLO: {' and '.join(doc['slo'])}{at}", *lines, answer_line(doc)]) + "\n"


def answer_line(doc: dict[str, Any]) -> str:
    b = doc["boundary_conc"]
    unsure = doc["uncertain"].get("reason")
    if unsure:
        at_least = "" if b is None else (f"; c{b} meets the SLO: {doc['agents_per_gpu']:g} agents/GPU, "
                                         f"{doc['agents_per_node']:g} agents/node at least")
        stopped = "" if doc["complete"] else "; the search stopped before its end"
        return f"answer: UNCERTAIN: {unsure}{at_least}{stopped}"
    if b is None:
        return f"answer: no tested concurrency meets the SLO ({doc['capacity_reason']})"
    above = " (the upper bound: a higher concurrency may meet it too)" if doc["upper_bound_reached"] else (
        f" (c{doc['first_failing_conc']} fails)" if doc["first_failing_conc"] is not None else "")
    kw = f"{doc['agents_per_kw']:g} agents/kW" if doc["agents_per_kw"] is not None else \
        f"agents/kW absent: {doc['agents_per_kw_reason']}"
    stopped = "; the search stopped before its end" if not doc["complete"] else ""
    money = f", {doc['agents_per_currency_hour']:g} agents per {doc['price']['currency']}/hour" \
        if doc.get("agents_per_currency_hour") is not None else ""
    return (f"answer: c{b} meets the SLO{above}: {doc['agents_per_gpu']:g} agents/GPU, "
            f"{doc['agents_per_node']:g} agents/node, {kw}{money}{stopped}")


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"
