"""Run every review rule over a recipe: load, expand, plan each point (keeping the planner's message when a
point does not plan), then ask each rule for its findings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.check.model import CheckedRecipe, Finding, PlannedPoint, Status, worst
from harness.check.rule import Rule
from harness.check.rules_review import DsparkVerifyMode, KvOffloadDram, PublishEvents
from harness.check.rules_settings import (
    ForbiddenArgs,
    ForbiddenEnv,
    KnownFlags,
    MinPoints,
    Plannable,
    UpstreamImage,
)
from harness.check.rules_sglang import SglangHooks
from harness.check.rules_spec import (
    ChatTemplate,
    CudaGraphBatch,
    DraftAsShipped,
    GoldenAcceptance,
    MaxRunningRequests,
)
from harness.check.rules_submission import AiperfScenario
from harness.errors import UserError
from harness.recipe.load import expand_points, load_recipe
from harness.recipe.plan import build_plan
from harness.recipe.schema import Recipe
from harness.recipe.server_flags import flags
from harness.recipe.server_flags.server_args import effective_args

RULES: tuple[Rule, ...] = (
    UpstreamImage(), ForbiddenEnv(), ForbiddenArgs(), PublishEvents(), DraftAsShipped(), GoldenAcceptance(),
    ChatTemplate(), DsparkVerifyMode(), MaxRunningRequests(), CudaGraphBatch(), KvOffloadDram(), KnownFlags(),
    Plannable(), SglangHooks(), AiperfScenario(), MinPoints(),
)


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    findings: list[Finding]

    @property
    def status(self) -> Status:
        return worst([f.status for f in self.findings])

    def to_json(self) -> dict[str, Any]:
        return {"id": self.rule.id, "rationale": self.rule.rationale,
                "inferencex_check": self.rule.inferencex_check or None, "status": self.status,
                "findings": [f.to_json() for f in self.findings]}


@dataclass(frozen=True)
class RecipeReport:
    source: str
    config_key: str | None
    results: list[RuleResult]

    @property
    def status(self) -> Status:
        return worst([r.status for r in self.results])

    def to_json(self) -> dict[str, Any]:
        return {"recipe": self.source, "config_key": self.config_key, "status": self.status,
                "rules": [r.to_json() for r in self.results]}


def prepare(recipe: Recipe, source: str, recipe_dir: Path | None = None) -> tuple[CheckedRecipe, list[PlannedPoint]]:
    """The rules' view of a loaded recipe: flag table, and every point with its plan or planner message."""
    table, table_error = None, None
    try:
        table = flags.load_table(recipe.server.sglang_version)
    except UserError as exc:
        table_error = str(exc)
    checked = CheckedRecipe(recipe=recipe, source=source, table=table, table_error=table_error)
    planned = []
    for point in expand_points(recipe, source):
        args = checked.canonical_args(effective_args(recipe, point))
        try:
            plan = build_plan(recipe, point, source, recipe_dir)
        except UserError as exc:
            planned.append(PlannedPoint(point=point, args=args, error=str(exc)))
        else:
            planned.append(PlannedPoint(point=point, args=args, plan=plan))
    return checked, planned


def run_rules(recipe: CheckedRecipe, plans: list[PlannedPoint], rules: tuple[Rule, ...] = RULES) -> list[RuleResult]:
    return [RuleResult(rule, rule.check(recipe, plans)) for rule in rules]


def check_recipe(path: str | Path, rules: tuple[Rule, ...] = RULES) -> RecipeReport:
    """Check one recipe file. A recipe that cannot be loaded because it breaks a rule is reported as that
    rule failing with the loader's message; any other loading error is a UserError (bad input)."""
    source = str(path)
    try:
        recipe = load_recipe(path)
    except UserError as exc:
        message = str(exc)
        claimed = [rule for rule in rules if rule.claims_load_error(message)]
        if not claimed:
            raise
        return RecipeReport(source, None, [
            RuleResult(rule, [Finding("FAIL", message)] if rule in claimed or rule.fails_when_unloadable else
                       [Finding("N/A", "not checked: the recipe does not load")]) for rule in rules])
    checked, plans = prepare(recipe, source, Path(path).resolve().parent)
    return RecipeReport(source, recipe.config_key, run_rules(checked, plans, rules))


def render_text(report: RecipeReport) -> list[str]:
    """One header line per recipe, then one line per rule: status, id, evidence."""
    key = f" ({report.config_key})" if report.config_key else ""
    lines = [f"{report.source}{key}: {report.status}"]
    width = max(len(r.rule.id) for r in report.results)
    for result in report.results:
        shown = [f for f in result.findings if f.status == result.status] or result.findings
        evidence = "; ".join(f.evidence for f in shown)
        lines.append(f"  {result.status:<4} {result.rule.id:<{width}}  {evidence}")
    return lines
