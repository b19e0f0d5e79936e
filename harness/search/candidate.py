"""A point at any concurrency: the settings of the recipe's nearest point (or a named template point).

The recipe's own point at that concurrency is used as it is. Any other concurrency takes the settings of the
recipe point nearest to it (the lower one on a tie), or of `--point-template`; its `extends_chain` ends with
that point, so its record says where its settings came from. Its directory is the one a sweep would give a
point of that concurrency (`<out>/<config_key>[/variants/<v>]/conc<N>`), so a completed point with the same
settings (fingerprint) is reused, and a search resumes as a sweep does.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.recipe.plan import PointPlan, build_plan
from harness.recipe.schema import Point, Recipe, normalize_point_name


def template_point(points: list[Point], conc: int, template: str | None, source: str) -> Point:
    """The point whose settings a point at `conc` takes: the named template, else the recipe's point at `conc`,
    else the nearest by concurrency (the lower on a tie)."""
    if not points:
        raise UserError(f"{source}: the recipe has no points to take settings from")
    if template is not None:
        name = normalize_point_name(template)
        for p in points:
            if p.name == name:
                return p
        raise UserError(f"--point-template {template}: no such point in {source} (points: "
                        f"{', '.join(p.name for p in points)})")
    return min(points, key=lambda p: (abs(p.conc - conc), p.conc))


def point_at(template: Point, conc: int) -> Point:
    """The template's settings at concurrency `conc`, named `c<conc>`."""
    if template.conc == conc:
        return template
    return template.model_copy(update={"name": f"c{conc}", "conc": conc,
                                       "extends_chain": [*template.extends_chain, template.name]})


def plan_at(recipe: Recipe, points: list[Point], conc: int, template: str | None, source: str) -> PointPlan:
    """The complete plan of the search's point at `conc`."""
    point = point_at(template_point(points, conc, template, source), conc)
    return build_plan(recipe, point, source, Path(source).resolve().parent)
