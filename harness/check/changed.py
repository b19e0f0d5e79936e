"""Which config keys' points differ between a base git revision and the work tree (`harness changed`).

A point is identified by (fingerprint, concurrency, image). The recipes are `recipes/*.yaml` at both
revisions; both are expanded and planned by the current harness, so a difference comes from the recipes
(or from a golden curve file a recipe uses), never from a change of the planner itself. A recipe added
or removed counts as changed.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.check import gitrev
from harness.errors import UserError, and_more
from harness.inputs.yaml_input import load_yaml_file
from harness.recipe.load import expand_points, load_recipe
from harness.recipe.plan import build_plans
from harness.recipe.schema import Recipe

RECIPES_DIR = "recipes"
GOLDEN_DIR = "golden_al_distribution"
PointId = tuple[str, int, str]  # (fingerprint, concurrency, image)


@dataclass(frozen=True)
class Curve:
    config_key: str
    source: str
    points: frozenset[PointId]
    golden_curve: str | None = None


@dataclass
class KeyChange:
    config_key: str
    status: str  # added | removed | modified
    base_points: list[PointId]
    head_points: list[PointId]
    reasons: list[str] = field(default_factory=list)

    @property
    def added(self) -> list[PointId]:
        return sorted(set(self.head_points) - set(self.base_points), key=_order)

    @property
    def removed(self) -> list[PointId]:
        return sorted(set(self.base_points) - set(self.head_points), key=_order)

    def summary(self) -> str:
        """`modified: c28 c30 added, c16 removed, c24 changed`."""
        base = {conc for _, conc, _ in self.base_points}
        head = {conc for _, conc, _ in self.head_points}
        touched = {conc for _, conc, _ in self.added} | {conc for _, conc, _ in self.removed}
        parts = []
        for what, concs in (("added", head - base), ("removed", base - head), ("changed", touched & base & head)):
            if concs:
                parts.append(f"{' '.join(f'c{c}' for c in sorted(concs))} {what}")
        return f"{self.status}: {', '.join([*parts, *self.reasons]) or 'points differ'}"

    def to_json(self) -> dict[str, Any]:
        return {"config-key": self.config_key, "status": self.status, "summary": self.summary(),
                "base-points": [_point_json(p) for p in self.base_points],
                "head-points": [_point_json(p) for p in self.head_points],
                "added": [_point_json(p) for p in self.added], "removed": [_point_json(p) for p in self.removed],
                "reasons": list(self.reasons)}


def _order(point: PointId) -> tuple[int, str, str]:
    return point[1], point[0], point[2]


def _point_json(point: PointId) -> dict[str, Any]:
    return {"conc": point[1], "fingerprint": point[0], "image": point[2]}


def curve_of(recipe: Recipe, source: str, recipe_dir: Path) -> Curve:
    plans = build_plans(recipe, expand_points(recipe, source), source, recipe_dir)
    golden = recipe.speculative.golden.curve if recipe.speculative and recipe.speculative.golden else None
    return Curve(recipe.config_key, source, frozenset((p.fingerprint, p.conc, p.image) for p in plans), golden)


def load_curves(paths: list[Path], label: str = "") -> tuple[dict[str, Curve], list[str]]:
    """Curves by config key, and the recipes that do not load (as problem lines)."""
    curves: dict[str, Curve] = {}
    problems: list[str] = []
    for path in paths:
        source = f"{label}{path.parent.name}/{path.name}"
        try:
            recipe = load_recipe(path)
            curve = curve_of(recipe, source, path.parent)
        except UserError as exc:
            key = _raw_key(path)
            problems.append(f"{key or source}: {exc}")
            if key:
                curves[key] = Curve(key, source, frozenset())
            continue
        if curve.config_key in curves:
            problems.append(f"{source}: config_key {curve.config_key} is also used by {curves[curve.config_key].source}")
        curves[curve.config_key] = curve
    return curves, problems


def _raw_key(path: Path) -> str | None:
    try:
        raw, _ = load_yaml_file(path, "recipe")
    except UserError:
        return None
    key = raw.get("config_key") if isinstance(raw, dict) else None
    return key if isinstance(key, str) else None


def diff_curves(base: dict[str, Curve], head: dict[str, Curve]) -> list[KeyChange]:
    """The keys whose point sets differ (added and removed keys included), sorted by key."""
    changes = []
    for key in sorted(set(base) | set(head)):
        old, new = base.get(key), head.get(key)
        old_points = sorted(old.points, key=_order) if old else []
        new_points = sorted(new.points, key=_order) if new else []
        if old is None:
            changes.append(KeyChange(key, "added", old_points, new_points))
        elif new is None:
            changes.append(KeyChange(key, "removed", old_points, new_points))
        elif old.points != new.points:
            changes.append(KeyChange(key, "modified", old_points, new_points))
    return changes


def changed_keys(root: Path, base_rev: str) -> tuple[list[KeyChange], list[str]]:
    """Changed config keys between `base_rev` and the work tree of the repository at `root`, plus warnings
    (recipes of the base revision that no longer load count as changed and are named there)."""
    commit = gitrev.resolve(root, base_rev)
    head, head_problems = load_curves(sorted((root / RECIPES_DIR).glob("*.yaml")))
    if head_problems:
        raise UserError(head_problems[0] + and_more(head_problems[1:]))
    with tempfile.TemporaryDirectory(prefix="harness-base-") as tmp:
        base_dir = Path(tmp) / RECIPES_DIR
        base_dir.mkdir()
        for rel in gitrev.list_files(root, commit, RECIPES_DIR):
            if rel.endswith(".yaml"):
                data = gitrev.show(root, commit, rel)
                if data is not None:
                    (base_dir / Path(rel).name).write_bytes(data)
        base, base_problems = load_curves(sorted(base_dir.glob("*.yaml")), label=f"{base_rev}:")
    changes = diff_curves(base, head)
    changed = {c.config_key for c in changes}
    curve_changed: dict[str, bool] = {}
    for key, curve in head.items():
        if key in changed or key not in base or curve.golden_curve is None:
            continue
        name = curve.golden_curve
        if name not in curve_changed:
            curve_changed[name] = gitrev.differs(root, commit, f"{GOLDEN_DIR}/{name}.yaml")
        if curve_changed[name]:
            points = sorted(curve.points, key=_order)
            changes.append(KeyChange(key, "modified", points, points, [f"golden curve {name} changed"]))
    warnings = [f"base recipe does not load with this harness (counted as changed): {p}" for p in base_problems]
    return sorted(changes, key=lambda c: c.config_key), warnings
