"""`search.json` and the console summary of a search, built from the tested points' verdicts (pure).

`boundary_conc` is the highest tested concurrency that meets the SLO below every failing one (null when none
does); the capacity at the boundary is `agents_per_gpu` (boundary / GPUs of the point), `agents_per_node`
(boundary / nodes) and `agents_per_kw` (boundary / the boundary point's measured average total GPU power in
kW), each null with a reason when it could not be measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.search.order import Bracket, above_boundary_passes
from harness.search.slo import Slo
from harness.search.verdict import PointVerdict

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


def search_json(spec: SearchSpec, tested: Sequence[PointVerdict], state: Bracket, complete: bool) -> dict[str, Any]:
    """The body of `search.json`: the SLO, every tested point in the order tested, the boundary and capacity."""
    by_conc = {v.conc: v for v in tested}
    boundary = by_conc.get(state.boundary) if state.boundary is not None else None
    return {
        "recipe": spec.recipe,
        "config_key": spec.config_key,
        "variant": spec.variant,
        "slo": [s.text for s in spec.slos],
        "min_conc": spec.min_conc,
        "max_conc": spec.max_conc,
        "complete": complete,
        "points": [_point_json(v, order) for order, v in enumerate(tested, 1)],
        "boundary_conc": state.boundary,
        "first_failing_conc": state.first_fail,
        "upper_bound_reached": state.upper_bound_reached,
        "passes_above_boundary": above_boundary_passes({v.conc: v.outcome for v in tested}, state.first_fail),
        "uncertain": _uncertain(tested, state),
        **_capacity(spec, boundary),
    }


def _point_json(v: PointVerdict, order: int) -> dict[str, Any]:
    return {
        "order": order,
        "conc": v.conc,
        "point_dir": str(v.point_dir),
        "state": v.state,
        "valid": v.valid,
        "invalid_reasons": list(v.invalid_reasons),
        "meets_slo": v.meets_slo,
        "outcome": v.outcome,
        "uncertain": v.uncertain,
        "metrics": {c.slo.name: c.value for c in v.checks},
        "checks": [c.as_json() for c in v.checks],
    }


def _uncertain(tested: Sequence[PointVerdict], state: Bracket) -> dict[str, Any]:
    """Whether the answer rests on a point within the spread of its metric: the boundary or the first failure."""
    near = [v.conc for v in tested if v.uncertain and v.conc in (state.boundary, state.first_fail)]
    return {"boundary": bool(near), "points": sorted(v.conc for v in tested if v.uncertain),
            "deciding_points": near}


def _capacity(spec: SearchSpec, boundary: PointVerdict | None) -> dict[str, Any]:
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
    }


def render_summary(doc: dict[str, Any]) -> str:
    """A short table of the tested points (in concurrency order) and the answer."""
    names = [s.split("<")[0].split(">")[0] for s in doc["slo"]]
    header = ["conc", "valid", *names, "meets SLO", ""]
    rows = []
    for p in sorted(doc["points"], key=lambda p: p["conc"]):
        cells = [_fmt(p["metrics"].get(n)) for n in names]
        note = "uncertain" if p["uncertain"] else (", ".join(p["invalid_reasons"]) if not p["valid"] else "")
        if p["outcome"] == "inconclusive":
            note = f"inconclusive ({note})"
        rows.append([str(p["conc"]), "yes" if p["valid"] else "no", *cells, "yes" if p["meets_slo"] else "NO", note])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]
    return "\n".join([f"SLO: {' and '.join(doc['slo'])}", *lines, answer_line(doc)]) + "\n"


def answer_line(doc: dict[str, Any]) -> str:
    b = doc["boundary_conc"]
    if b is None:
        return f"answer: no tested concurrency meets the SLO ({doc['capacity_reason']})"
    above = " (the upper bound: a higher concurrency may meet it too)" if doc["upper_bound_reached"] else (
        f" (c{doc['first_failing_conc']} fails)" if doc["first_failing_conc"] is not None else "")
    kw = f"{doc['agents_per_kw']:g} agents/kW" if doc["agents_per_kw"] is not None else \
        f"agents/kW absent: {doc['agents_per_kw_reason']}"
    unsure = "; uncertain: a deciding point is within the spread of its metric" if doc["uncertain"]["boundary"] else ""
    if not doc["complete"]:
        unsure += "; the search stopped before its end"
    return (f"answer: c{b} meets the SLO{above}: {doc['agents_per_gpu']:g} agents/GPU, "
            f"{doc['agents_per_node']:g} agents/node, {kw}{unsure}")


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"
