"""The plan an eval runs: a point of the recipe with speculative decoding in eval mode.

`speculative.mode: eval` keeps speculative decoding on and injects no synthetic acceptance
(`SGLANG_SIMULATE_ACC_*`), so the outputs are the model's own. On the simulator the eval answers
come from the shipped GSM8K test split (`--sim-eval-answers`, accuracy from `sim_args.sim-eval-accuracy`,
default 1.0). The default point is the recipe's highest concurrency, the one InferenceX evaluates.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from harness.errors import UserError
from harness.evals.thresholds import THRESHOLDS_FILE, Threshold, load_thresholds, resolve_threshold
from harness.recipe.load import load_recipe
from harness.recipe.plan import PointPlan
from harness.recipe.points import load_plans
from harness.recipe.schema import Recipe

SIM_ANSWERS = {"gsm8k": Path(__file__).with_name("gsm8k") / "test.jsonl"}


def eval_overrides(recipe: Recipe, task: str, overrides: list[str]) -> list[str]:
    """The `--set`s that turn a recipe's points into eval points (the caller's come last and win)."""
    extra = []
    if recipe.speculative is not None:
        extra.append("speculative.mode=eval")
    engine_sim = recipe.engine == "sim" or any(o.replace(" ", "") == "engine=sim" for o in overrides)
    if engine_sim and "sim-eval-answers" not in recipe.sim_args:
        extra.append(f"sim_args.sim-eval-answers={SIM_ANSWERS[task]}")
    return [*extra, *overrides]


class EvalTask(BaseModel):
    """An eval as one more task of a sweep (`sweep --with-eval`, `submit --with-eval`)."""

    model_config = ConfigDict(extra="forbid")

    plan: PointPlan
    task: str = "gsm8k"
    limit: int | None = None
    threshold: Threshold
    overrides: list[str] = []
    eval_timeout_s: float = 6 * 3600.0


def eval_task(recipe_path: str | Path, point_names: list[str] | None, task: str, limit: int | None,
              min_score: float | None, overrides: list[str]) -> EvalTask:
    """The eval of a sweep: the highest concurrency among the selected points, its threshold resolved now
    (a missing threshold is bad input before anything starts)."""

    recipe = load_recipe(recipe_path)
    all_overrides = eval_overrides(recipe, task, overrides)
    _, plans = load_plans(recipe_path, point_names, all_overrides)
    if not plans:
        raise UserError(f"{recipe_path}: no points to evaluate")
    plan = max(plans, key=lambda p: p.conc)
    if plan.deployment is not None:
        raise UserError(f"{recipe_path}: deployment: the accuracy eval runs against one server it starts, not a "
                        "deployment of workers behind a router; evaluate the same model and server args in a "
                        "recipe without the deployment section")
    threshold = resolve_threshold(load_thresholds(), plan.model_prefix, task, min_score)
    if min_score is not None and threshold.source != "--min-score":
        print(f"note: --min-score {min_score:g} is not used: {threshold.source}.{task} in {THRESHOLDS_FILE.name} "
              f"sets {threshold.min_score:g} (resolution: the model's entry, then default, then --min-score)",
              file=sys.stderr, flush=True)
    return EvalTask(plan=plan, task=task, limit=limit, threshold=threshold, overrides=all_overrides)
