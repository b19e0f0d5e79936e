"""The plan an eval runs: a point of the recipe with speculative decoding in eval mode.

`speculative.mode: eval` keeps speculative decoding on and injects no synthetic acceptance
(`SGLANG_SIMULATE_ACC_*`), so the outputs are the model's own. On the simulator the eval answers
come from the shipped GSM8K test split (`--sim-eval-answers`, accuracy from `sim_args.sim-eval-accuracy`,
default 1.0). The default point is the recipe's highest concurrency, the one InferenceX evaluates.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
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


def eval_plan(recipe_path: str | Path, point: str | None, task: str,
              overrides: list[str]) -> tuple[Recipe, PointPlan, list[str]]:
    """The eval plan of `point` (default: the highest concurrency) and the overrides it was built with."""
    recipe = load_recipe(recipe_path)
    all_overrides = eval_overrides(recipe, task, overrides)
    recipe, plans = load_plans(recipe_path, [point] if point else None, all_overrides)
    if not plans:
        raise UserError(f"{recipe_path}: no points to evaluate")
    return recipe, max(plans, key=lambda p: p.conc), all_overrides
