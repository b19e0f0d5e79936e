"""Which `--set`s change nothing: an override whose removal leaves every selected point's plan (server argv and
environment, client, resources, fingerprint) exactly as it is, because the recipe already says what it sets.
`run`, `sweep` and `plan` warn about each one, naming it, so that a tuning run that would measure the recipe's
own point again under a new name is seen before it starts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.errors import UserError
from harness.recipe.plan import PointPlan
from harness.recipe.points import load_plans


def idle_overrides(recipe_path: str | Path, point_names: list[str] | None, overrides: Sequence[str],
                   unofficial: bool, plans: Sequence[PointPlan], checked: Sequence[str] | None = None) -> list[str]:
    """The overrides among `checked` (default: all of `overrides`) without which `plans` (planned with every one
    of `overrides`) come out the same. One whose removal makes the recipe fail to plan counts as changing it."""

    wanted = list(overrides) if checked is None else list(checked)
    planned = [p.public() for p in plans]
    idle = []
    for i, text in enumerate(overrides):
        if text not in wanted:
            continue
        try:
            _, without = load_plans(recipe_path, point_names, [*overrides[:i], *overrides[i + 1:]], unofficial)
        except UserError:
            continue
        if [p.public() for p in without] == planned:
            idle.append(text)
    return idle


def idle_warning(text: str, plans: Sequence[PointPlan]) -> str:
    """`--set args.max-running-requests=8 changes no setting of c4: the recipe already has that value`."""
    names = ", ".join(f"c{p.conc}" for p in plans)
    which = f"of {names}" if len(plans) == 1 else f"of any of {names}"
    return f"--set {text} changes no setting {which}: the recipe already has that value"
