"""`report --json`: every curve with its points, frontiers and Check 14 results, as one JSON document."""

from __future__ import annotations

from typing import Any

from harness.report.analysis.coverage import check14
from harness.report.analysis.curves import CURVE_DEFINITION, Curve, power_text
from harness.report.analysis.goodput import goodput_json
from harness.report.results.attributes import attributes, settings
from harness.report.results.load import PointResult
from harness.report.results.repeats import repeat_block


def point_json(p: PointResult) -> dict[str, Any]:
    """The flat per-point record of `report --json`; `power` says it in words as the tables do ("not measured
    (simulator)" on a simulated point, whatever a sampler on its host recorded)."""
    return {
        "conc": p.conc,
        "state": p.state,
        "valid": p.valid,
        "invalid_reasons": [{"code": r.code, "message": r.message} for r in p.invalid_reasons],
        "publishable": p.publishable,
        "publish_label": p.publish_label,
        "total_tput_per_gpu": p.total_tput_per_gpu,
        "output_tput_per_gpu": p.output_tput_per_gpu,
        "e2el_p50": p.stat("e2el", "p50"),
        "e2el_p75": p.stat("e2el", "p75"),
        "e2el_p90": p.stat("e2el", "p90"),
        "ttft_p50": p.stat("ttft", "p50"),
        "ttft_p90": p.stat("ttft", "p90"),
        "intvty_p90": p.stat("intvty", "p90"),
        "e2e_norm_intvty_p90": p.stat("e2e_norm_intvty", "p90"),
        "num_requests_total": p.num_requests_total,
        "num_requests_successful": p.num_requests_successful,
        "errors": p.errors,
        "cancelled_at_cutoff": p.cancelled_at_cutoff,
        "power": power_text(p),
        "power_valid": p.power_valid,
        "power_invalid_reasons": list(p.power_invalid_reasons),
        "config_key": p.config_key,
        "attributes": {**{k: v or None for k, v in attributes(p).items()},
                       "recipe_fingerprint": p.recipe_fingerprint or None} if p.recorded else None,
        "kv_offloading": p.kv_offloading,
        "recipe_fingerprint": p.recipe_fingerprint,
        "arm": p.arm.as_json(),
        "fingerprint": dict(p.fingerprint),
        "tag": p.tag,
        "note": p.note,
        "harness_commit": p.harness_commit,
        "source": str(p.source),
        **goodput_json(p),   # slo_attainment and cost (harness.report.analysis.goodput)
        "repeats": repeat_block(p.point_dir) if p.recorded else None,   # --repeat N: Student-t 95 % intervals
    }


def curve_json(c: Curve) -> dict[str, Any]:
    """One entry of `report --json`'s `curves` list: each point with its identity (`id`) and attributes, the
    frontiers as lists of identities, and the curve's Check 14 results (`harness.report.analysis.coverage`)."""
    first = next((p for p in c.points if p.recorded), c.points[0])
    return {
        "key": c.key,
        "series": c.series.as_json() if c.series else None,
        "config_keys": list(c.config_keys),
        "configs": list(c.config_names),
        "variant": c.variant,
        "overrides": list(c.overrides),
        "images": list(dict.fromkeys(p.image for p in c.points if p.image)),
        "engine": c.engine,
        "simulated": c.simulated,
        "model": first.model,
        "framework": first.framework,
        "precision": first.precision,
        "hw": first.hw,
        "varying": list(c.varying),
        "points": [{"id": pid, **point_json(p), "settings": settings(p, c.varying) or None}
                   for pid, p in c.labelled()],
        "frontier": {
            name: {
                "frontier": f.frontier,
                "dominated": f.dominated,
                "excluded": f.excluded,
                "coverage": f.coverage,
            }
            for name, f in c.frontiers.items()
        },
        "warnings": list(c.warnings),
        "check14": [v.to_json() for v in check14(c)],
    }


def report_json(curves: list[Curve]) -> dict[str, Any]:
    return {"curve_definition": CURVE_DEFINITION, "curves": [curve_json(c) for c in curves]}
