"""Review rules a recipe must pass before it is benchmarked (`harness check`).

Each rule is a small object with an `id`, a one-line `rationale` and `check(recipe, plans) -> list[Finding]`
(see `harness.check.rule`). The rules look at the effective settings of every point, so a setting inherited
from the base or through `extends` is named together with where it comes from
("c28 (inherits from c24 ← base): SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1").
"""

from harness.check.model import CheckedRecipe, Finding, PlannedPoint, Status
from harness.check.rule import Rule
from harness.check.runner import (
    RULES,
    RecipeReport,
    RuleResult,
    check_recipe,
    prepare,
    render_text,
    run_rules,
)

__all__ = [
    "RULES", "CheckedRecipe", "Finding", "PlannedPoint", "RecipeReport", "Rule", "RuleResult", "Status",
    "check_recipe", "prepare", "render_text", "run_rules",
]
