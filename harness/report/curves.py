"""Grouping points into curves and computing each curve's Pareto frontiers.

A curve is one config: the points sharing a config key (our records: the recipe, plus its variant/tag), one
image and one engine kind. A recipe's points are one curve even where single points change a setting (the
GB300 recipe turns DRAM HiCache on from c24): the setting is annotated on those points (`varying_fields`,
`point_settings`), not split off into a curve of its own. For rows without a config key (InferenceX's) the
config is the key derived from model, precision, hardware, framework and parallelism with the recipe
fingerprint InferenceX gives every point of one recipe (and the disaggregation shape); a row without a
fingerprint falls back to its whole arm (`harness.report.arms`). Simulated and real results, two images, two
configs, or a tuned variant (`--set`/`--tag`) and the recipe as written never share a curve. Within a curve
each concurrency appears once; when a directory holds several results for one concurrency the newest file
wins and the others are named in the curve's warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.report.arms import ARM_FIELDS, Arm
from harness.report.load import PointResult
from harness.report.pareto import Direction, Frontier, pareto_frontier


@dataclass(frozen=True)
class Axis:
    """One frontier view: an x metric with its direction against total throughput per GPU (higher is better)."""

    name: str
    label: str
    direction: Direction
    value: Callable[[PointResult], float | None]


# In reading order (and the plots' order): the headline E2EL p90 view first, then interactivity, the
# secondary E2EL p75 last.
FRONTIER_AXES: tuple[Axis, ...] = (
    Axis("e2el_p90", "E2EL p90 (s)", "min", lambda p: p.stat("e2el", "p90")),
    Axis("intvty_p90", "interactivity p90 (tok/s/user)", "max", lambda p: p.stat("intvty", "p90")),
    Axis(
        "e2e_norm_intvty_p90",
        "E2E-normalized interactivity p90 (tok/s/user)",
        "max",
        lambda p: p.stat("e2e_norm_intvty", "p90"),
    ),
    Axis("e2el_p75", "E2EL p75 (s)", "min", lambda p: p.stat("e2el", "p75")),
)
Y_LABEL = "total throughput per GPU (tok/s/GPU; higher is better)"


def y_value(p: PointResult) -> float | None:
    return p.total_tput_per_gpu


@dataclass(frozen=True)
class Curve:
    """The points of one curve (sorted by concurrency) and its frontier per axis."""

    config_key: str
    image: str
    engine: str
    simulated: bool
    points: list[PointResult]
    frontiers: dict[str, Frontier[int]]
    warnings: list[str] = field(default_factory=list)
    variant: str | None = None
    overrides: tuple[str, ...] = ()
    arm: Arm = field(default_factory=Arm)
    named_by_arm: bool = False   # InferenceX rows: the key is derived, so the arm is part of the name

    @property
    def engine_label(self) -> str | None:
        """"real SGLang, plain-torch CPU path" when any point says so (`harness.point.engine_label`)."""
        return next((p.engine_label for p in self.points if p.engine_label), None)

    @property
    def base_key(self) -> str:
        """The config key, with `[variant]` for a tuned variant."""
        return f"{self.config_key} [{self.variant}]" if self.variant else self.config_key

    @property
    def key(self) -> str:
        """The curve's name: the config key (for InferenceX rows followed by `{arm}` where the arm is not
        the default), with `[variant]` for a tuned variant."""
        label = self.arm.label() if self.named_by_arm else ""
        name = f"{self.config_key} {{{label}}}" if label else self.config_key
        return f"{name} [{self.variant}]" if self.variant else name

    @property
    def titled(self) -> str:
        """The name a report shows over the curve: the key, and the deployment's shape where the curve ran on one
        (`... · disagg 1p1d tp4/tp4`) and the key does not already carry its arm."""
        from harness.report.arms import AGG

        shape = self.arm.disagg if self.arm.disagg != AGG and not self.named_by_arm else ""
        return f"{self.key} · {shape}" if shape else self.key

    @property
    def label(self) -> str:
        """The series label in plots: the name, the overrides of a variant (unless its name already spells
        them), and the engine."""
        from harness.point.variant import derived_name

        changes = f" ({', '.join(self.overrides)})" if self.variant and self.overrides and \
            derived_name(self.overrides) != self.variant else ""
        return f"{self.titled}{changes} [{self.engine}]" if self.engine else f"{self.titled}{changes}"

    @property
    def invalid(self) -> list[PointResult]:
        return [p for p in self.points if not p.valid]

    def point(self, conc: int) -> PointResult | None:
        return next((p for p in self.points if p.conc == conc), None)


def frontiers_for(points: list[PointResult]) -> dict[str, Frontier[int]]:
    """Frontier per axis. Invalid points are excluded (shown elsewhere, never on a frontier)."""
    out: dict[str, Frontier[int]] = {}
    for axis in FRONTIER_AXES:
        rows = [
            (p.conc, axis.value(p), y_value(p)) if p.valid else (p.conc, None, None) for p in points
        ]
        out[axis.name] = pareto_frontier(rows, axis.direction, "max")
    return out


def _mtime(p: PointResult) -> int:
    try:
        return p.source.stat().st_mtime_ns
    except OSError:
        return 0


def latest_per_conc(members: Iterable[PointResult]) -> tuple[list[PointResult], list[str]]:
    """One point per concurrency (the newest file), sorted by concurrency, and a warning per repeat."""
    by_conc: dict[int, list[PointResult]] = {}
    for p in members:
        by_conc.setdefault(p.conc, []).append(p)
    chosen: list[PointResult] = []
    warnings: list[str] = []
    for conc in sorted(by_conc):
        candidates = sorted(by_conc[conc], key=lambda p: (_mtime(p), str(p.source)))
        chosen.append(candidates[-1])
        if len(candidates) > 1:
            others = ", ".join(str(c.source) for c in candidates[:-1])
            warnings.append(f"conc {conc}: {len(candidates)} results; using {candidates[-1].source}, not {others}")
    return chosen, warnings


def config_identity(p: PointResult) -> tuple[str, ...]:
    """What, beside the key, keeps configs apart: nothing for our records (the config key is the config),
    the disaggregation shape and recipe fingerprint for a fingerprinted row, else the row's whole arm."""
    if p.config_key is not None:
        return ()
    if p.arm.recipe_fingerprint:
        return ("fingerprint", p.arm.disagg, p.arm.recipe_fingerprint)
    return tuple(str(v) for v in p.arm.as_json().values())


def curve_arm(points: Iterable[PointResult]) -> Arm:
    """The arm of a curve's measured points: each field's value, or its values in concurrency order joined
    by `/` where points differ (`kv_offloading: none/dram`)."""
    arms = [p.curve_arm for p in sorted(points, key=lambda p: p.conc) if p.recorded] or [Arm()]
    values: dict[str, list[Any]] = {name: list(dict.fromkeys(getattr(a, name) for a in arms)) for name in ARM_FIELDS}
    fp = values["recipe_fingerprint"]
    return Arm(spec_decoding="/".join(values["spec_decoding"]), kv_offloading="/".join(values["kv_offloading"]),
               dp_attention="/".join(values["dp_attention"]), disagg="/".join(values["disagg"]),
               recipe_fingerprint=fp[0] if len(fp) == 1 else None)


def varying_fields(points: Iterable[PointResult]) -> tuple[str, ...]:
    """The arm fields whose value differs between a curve's measured points."""
    arms = [p.curve_arm for p in points if p.recorded]
    return tuple(n for n in ARM_FIELDS[:-1] if len({getattr(a, n) for a in arms}) > 1)


_SETTING_WORDS = {"spec_decoding": "spec", "kv_offloading": "kv", "dp_attention": "dp-attention", "disagg": ""}


def point_settings(p: PointResult, fields: Iterable[str]) -> str:
    """A point's value of each of `fields`, e.g. `kv dram` (empty for a point without a record)."""
    if not p.recorded:
        return ""
    return ", ".join(f"{_SETTING_WORDS[n]} {getattr(p.curve_arm, n)}".strip() for n in fields)


def group_curves(points: Iterable[PointResult]) -> list[Curve]:
    """Curves in order of (key, variant, engine, image, config); the recipe as written before its variants;
    points within a curve by concurrency."""
    groups: dict[tuple[str, str, bool, str, tuple[str, ...]], list[PointResult]] = {}
    for p in points:
        groups.setdefault((p.curve_key, p.variant or "", p.simulated, p.image, config_identity(p)), []).append(p)
    curves: list[Curve] = []
    for (key, variant, simulated, image, _config), members in sorted(groups.items()):
        chosen, warnings = latest_per_conc(members)
        engines = sorted({p.engine for p in chosen})
        curves.append(
            Curve(
                config_key=key,
                image=image,
                engine="/".join(engines),
                simulated=simulated,
                points=chosen,
                frontiers=frontiers_for(chosen),
                warnings=warnings,
                variant=variant or None,
                overrides=chosen[-1].overrides if variant else (),
                arm=curve_arm(chosen),
                named_by_arm=chosen[-1].config_key is None,
            )
        )
    return curves


def point_json(p: PointResult) -> dict[str, Any]:
    """The flat per-point record of `report --json`; `power` says it in words as the tables do ("not measured
    (simulator)" on a simulated point, whatever a sampler on its host recorded)."""
    from harness.report.table import power_text

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
        "kv_offloading": p.kv_offloading,
        "recipe_fingerprint": p.recipe_fingerprint,
        "arm": p.arm.as_json(),
        "fingerprint": dict(p.fingerprint),
        "tag": p.tag,
        "note": p.note,
        "harness_commit": p.harness_commit,
        "source": str(p.source),
    }


def curve_json(c: Curve) -> dict[str, Any]:
    """One entry of `report --json`'s `curves` list."""
    first = next((p for p in c.points if p.recorded), c.points[0])
    return {
        "config_key": c.config_key,
        "key": c.key,
        "variant": c.variant,
        "overrides": list(c.overrides),
        "image": c.image,
        "engine": c.engine,
        "simulated": c.simulated,
        "model": first.model,
        "framework": first.framework,
        "precision": first.precision,
        "spec_decoding": first.spec_decoding,
        "hw": first.hw,
        "tp": first.tp,
        "ep": first.ep,
        "arm": c.arm.as_json(),
        "varying": list(varying_fields(c.points)),
        "points": [{**point_json(p), "settings": point_settings(p, varying_fields(c.points)) or None}
                   for p in c.points],
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
    }


def report_json(curves: list[Curve]) -> dict[str, Any]:
    return {"curves": [curve_json(c) for c in curves]}
