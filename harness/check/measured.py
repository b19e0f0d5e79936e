"""`harness check --results PATH...`: InferenceX's Check 14 on measured points, per curve.

The paths are read as `harness report` reads them (run directories, directories of InferenceX rows
`bmk_agentic_*.json`, or result files) and the points are grouped into curves as the report groups them (one
InferenceX series per curve). Each curve gets one verdict per reviewed percentile
(`harness.report.analysis.coverage`): PASS at 5 or more measured frontier points, else WARN with the count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.report.analysis.coverage import CHECK14_RULE, CurveCoverage, check14


def measured_coverage(paths: list[Path]) -> list[CurveCoverage]:
    """Check 14 verdicts of every curve under `paths`, curve by curve, p90 before p75."""
    from harness.report.analysis.curves import group_curves
    from harness.report.results.points import load_results

    points = load_results(paths)
    if not points:
        raise UserError(f"--results {', '.join(map(str, paths))}: no result files found (expected run "
                        "directories, bmk_agentic_*.json rows or InferenceX agentic aggregates)")
    return [verdict for curve in group_curves(points) for verdict in check14(curve)]


def passed(verdicts: list[CurveCoverage]) -> bool:
    return all(v.status == "PASS" for v in verdicts)


def render_text(verdicts: list[CurveCoverage]) -> list[str]:
    """A header naming the rule and the overall status, then one line per curve and percentile."""
    return [f"Check 14, Pareto coverage on measured points: {'PASS' if passed(verdicts) else 'WARN'}",
            f"  ({CHECK14_RULE})", *(f"  {v.line}" for v in verdicts)]


def render_json(verdicts: list[CurveCoverage]) -> dict[str, Any]:
    return {"check": "pareto-coverage", "inferencex_check": 14, "rule": CHECK14_RULE,
            "status": "PASS" if passed(verdicts) else "WARN", "curves": [v.to_json() for v in verdicts]}
