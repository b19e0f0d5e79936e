"""Configs: the points of one serving configuration, one per concurrency.

A config is what one recipe runs: the points sharing a config key (our records: the recipe, plus its
variant/tag), one image and one engine kind. A recipe's points are one config even where single points change
a setting (the GB300 recipe turns DRAM HiCache on from c24). For rows without a config key (InferenceX's) the
config is the key derived from model, precision, hardware, framework and parallelism with the recipe
fingerprint InferenceX gives every point of one recipe (and the disaggregation shape); a row without a
fingerprint falls back to its whole arm (`harness.report.results.arms`). Within a config each concurrency appears
once; when a directory holds several results for one concurrency the newest file wins and the others are
named in the config's warnings.

A report's curve gathers every config of one InferenceX series (`harness.report.analysis.curves`); `harness compare`
pairs configs, and refuses to pair two different ones (`harness.report.analysis.compare`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.report.results.arms import ARM_FIELDS, Arm
from harness.report.results.load import PointResult


@dataclass(frozen=True)
class Config:
    """The points of one config, sorted by concurrency."""

    config_key: str
    image: str
    engine: str
    simulated: bool
    points: list[PointResult]
    warnings: list[str] = field(default_factory=list)
    variant: str | None = None
    overrides: tuple[str, ...] = ()
    arm: Arm = field(default_factory=Arm)
    named_by_arm: bool = False   # InferenceX rows: the key is derived, so the arm is part of the name

    @property
    def base_key(self) -> str:
        """The config key, with `[variant]` for a tuned variant."""
        return f"{self.config_key} [{self.variant}]" if self.variant else self.config_key

    @property
    def key(self) -> str:
        """The config's name: the config key (for InferenceX rows followed by `{arm}` where the arm is not
        the default), with `[variant]` for a tuned variant."""
        label = self.arm.label() if self.named_by_arm else ""
        name = f"{self.config_key} {{{label}}}" if label else self.config_key
        return f"{name} [{self.variant}]" if self.variant else name


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


def config_name(p: PointResult) -> str:
    """The short name a point's config goes by inside a curve: our config key, `recipe 3b8f70b0` for an
    InferenceX row (its recipe fingerprint), or empty for a row without one (its other attributes tell it)."""
    if p.config_key is not None:
        return p.config_key
    return f"recipe {p.arm.recipe_fingerprint[:8]}" if p.arm.recipe_fingerprint else ""


def joined_arm(points: Iterable[PointResult]) -> Arm:
    """The arm of a config's measured points: each field's value, or its values in concurrency order joined
    by `/` where points differ (`kv_offloading: none/dram`)."""
    arms = [p.config_arm for p in sorted(points, key=lambda p: p.conc) if p.recorded] or [Arm()]
    values: dict[str, list[Any]] = {name: list(dict.fromkeys(getattr(a, name) for a in arms)) for name in ARM_FIELDS}
    fp = values["recipe_fingerprint"]
    return Arm(spec_decoding="/".join(values["spec_decoding"]), kv_offloading="/".join(values["kv_offloading"]),
               dp_attention="/".join(values["dp_attention"]), disagg="/".join(values["disagg"]),
               recipe_fingerprint=fp[0] if len(fp) == 1 else None)


def group_configs(points: Iterable[PointResult]) -> list[Config]:
    """Configs in order of (key, variant, engine, image, identity); the recipe as written before its variants;
    points within a config by concurrency."""
    groups: dict[tuple[str, str, bool, str, tuple[str, ...]], list[PointResult]] = {}
    for p in points:
        groups.setdefault((p.curve_key, p.variant or "", p.simulated, p.image, config_identity(p)), []).append(p)
    configs: list[Config] = []
    for (key, variant, simulated, image, _identity), members in sorted(groups.items()):
        chosen, warnings = latest_per_conc(members)
        configs.append(Config(config_key=key, image=image, engine="/".join(sorted({p.engine for p in chosen})),
                              simulated=simulated, points=chosen, warnings=warnings, variant=variant or None,
                              overrides=chosen[-1].overrides if variant else (), arm=joined_arm(chosen),
                              named_by_arm=chosen[-1].config_key is None))
    return configs
