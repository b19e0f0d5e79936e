"""`harness check --results PATH...`: InferenceX's Check 14 on measured points, per curve.

The paths are read as `harness report` reads them (run directories, directories of InferenceX rows
`bmk_agentic_*.json`, or result files) and the points are grouped into curves as the report groups them (one
InferenceX series per curve). Each curve gets one result per reviewed percentile
(`harness.report.analysis.coverage`): PASS at 5 or more measured frontier points, else WARN with the count.
With a recipe, `harness check RECIPE --results PATH` runs the same count as the rule `pareto-coverage` on the
recipe's curves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from harness.check.model import CheckedRecipe, Finding, PlannedPoint
from harness.check.rule import Rule
from harness.errors import UserError
from harness.report.analysis.coverage import CHECK14_RULE, CurveCoverage, check14
from harness.report.analysis.curves import group_curves
from harness.report.results.points import load_results


def measured_coverage(paths: list[Path]) -> list[CurveCoverage]:
    """Check 14 results of every curve under `paths`, curve by curve, p90 before p75."""

    points = load_results(paths)
    if not points:
        raise UserError(f"--results {', '.join(map(str, paths))}: no result files found (expected run "
                        "directories, bmk_agentic_*.json rows or InferenceX agentic aggregates)")
    return [coverage for curve in group_curves(points) for coverage in check14(curve)]


def passed(coverages: list[CurveCoverage]) -> bool:
    return all(v.status == "PASS" for v in coverages)


def render_text(coverages: list[CurveCoverage]) -> list[str]:
    """A header naming the rule and the overall status, then one line per curve and percentile."""
    return [f"Check 14, Pareto coverage on measured points: {'PASS' if passed(coverages) else 'WARN'}",
            f"  ({CHECK14_RULE})", *(f"  {v.line}" for v in coverages)]


def render_json(coverages: list[CurveCoverage]) -> dict[str, Any]:
    return {"check": "pareto-coverage", "inferencex_check": 14, "rule": CHECK14_RULE,
            "status": "PASS" if passed(coverages) else "WARN", "curves": [v.to_json() for v in coverages]}


class ParetoCoverage(Rule):
    """Check 14 on the measured points of the recipe's curves under `--results` (with a recipe: a WARN at most,
    as the review treats it; `harness check --results PATH` alone exits 1 on it)."""

    id: ClassVar[str] = "pareto-coverage"
    inferencex_check: ClassVar[str] = "14"
    rationale: ClassVar[str] = ("at least 5 measured points on each curve's frontier of throughput per GPU vs E2EL "
                                "p90 (p75 separately), counted with InferenceX's upper_right rule (only with "
                                "--results)")

    def __init__(self, results: list[Path]):
        self.results = [Path(r) for r in results]

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        key = recipe.recipe.config_key
        try:
            curves = [c for c in group_curves(load_results(self.results)) if key in c.config_keys]
        except UserError as exc:
            return [Finding("WARN", f"coverage unverifiable: {exc}")]
        if not curves:
            return [Finding("WARN", f"coverage unverifiable: no measured points of {key} under "
                                    f"{', '.join(map(str, self.results))}")]
        return [Finding(v.status, f"{v.name}: {v.evidence}") for c in curves for v in check14(c)]
