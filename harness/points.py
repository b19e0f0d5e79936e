"""From a recipe file to validated point plans, with `--set` overrides applied: the shared front half
of `harness run`, `harness sweep` and `harness plan`.

`--set KEY=VALUE` changes one setting of the selected points before planning (the hand-tuning path):
`args.<flag>=V` (e.g. `args.hicache-size=160`; `args.<flag>=null` removes it), `env.<NAME>=V`,
`client.<field>=V`, `sim_profile=V`. Values are parsed as YAML scalars (`160` is an int, `true` a bool).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.errors import UserError
from harness.plan import PointPlan, build_plans
from harness.recipe import Point, Recipe, expand_points, load_recipe, parse_recipe, select_points


def parse_override(text: str) -> tuple[list[str], Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise UserError(f"--set {text!r}: expected KEY=VALUE, e.g. args.hicache-size=160")
    path = key.split(".", 1) if key.startswith(("args.", "env.")) else key.split(".")
    try:
        parsed = yaml.safe_load(value) if value != "" else ""
    except yaml.YAMLError:
        parsed = value
    if path[0] == "env" and parsed is not None:
        parsed = str(value)
    return path, parsed


def apply_overrides(recipe: Recipe, points: list[Point], overrides: list[str], source: str,
                    ) -> tuple[Recipe, list[Point]]:
    """Apply `--set` overrides: args/env on the selected points, other keys on the recipe."""
    if not overrides:
        return recipe, points
    raw = recipe.model_dump(mode="json")
    new_points = []
    for p in points:
        args: dict[str, Any] = dict(p.args)
        env: dict[str, Any] = dict(p.env)
        for text in overrides:
            path, value = parse_override(text)
            if path[0] in ("args", "env") and len(path) == 2:
                target = args if path[0] == "args" else env
                if value is None:
                    target.pop(path[1], None)
                else:
                    target[path[1]] = value
        new_points.append(p.model_copy(update={"args": args, "env": env}))
    for text in overrides:
        path, value = parse_override(text)
        if path[0] in ("args", "env"):
            continue
        node = raw
        for part in path[:-1]:
            if not isinstance(node.get(part), dict):
                raise UserError(f"--set {text}: {'.'.join(path)} is not a recipe setting")
            node = node[part]
        if path[-1] not in node:
            raise UserError(f"--set {text}: {'.'.join(path)} is not a recipe setting")
        node[path[-1]] = value
    return parse_recipe(raw, source=f"{source} (with --set)"), new_points


def load_plans(recipe_path: str | Path, point_names: list[str] | None = None,
               overrides: list[str] | None = None) -> tuple[Recipe, list[PointPlan]]:
    source = str(recipe_path)
    recipe = load_recipe(recipe_path)
    points = select_points(expand_points(recipe, source), point_names, source)
    recipe, points = apply_overrides(recipe, points, list(overrides or []), source)
    return recipe, build_plans(recipe, points, source, Path(recipe_path).resolve().parent)
