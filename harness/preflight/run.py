"""Preflight from files: load the recipe and the cluster profile, plan, and run every cluster check."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.inputs.yaml_input import load_yaml_file
from harness.preflight import Report, cluster
from harness.recipe.points import load_plans
from slurm.profile import check_time_limit, load_profile


def cluster_preflight(recipe_path: str | Path, cluster_path: str | Path, *, points: list[str] | None = None,
                      overrides: list[str] | None = None, time_limit: str | None = None,
                      ready_timeout_s: float | None = None, unofficial: bool = False,
                      python: str | None = None, probe: bool = False) -> Report:
    """Load, plan and check; unreadable inputs are UserErrors (one line, exit 2) before any check runs."""

    profile = load_profile(cluster_path)
    raw, _ = load_yaml_file(cluster_path, "cluster profile")
    recipe, plans = load_plans(recipe_path, points, list(overrides or []), unofficial)
    if time_limit is not None:
        try:
            check_time_limit(time_limit)
        except ValueError as exc:
            raise UserError(f"--time {exc}") from None
    return cluster(recipe, plans, profile, raw, recipe_src=str(recipe_path), cluster_src=str(cluster_path),
                   time_limit=time_limit, ready_timeout_s=ready_timeout_s, python=python, probe=probe)
