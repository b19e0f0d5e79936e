"""Submission rules: AIPerf's own check of a recipe's client commands, and of the results meant for publishing.

- `aiperf-scenario`: every point's exact `aiperf profile` command goes through AIPerf's configuration and
  scenario resolution (`harness.preflight.aiperf_scenario`). FAIL when AIPerf would refuse it; WARN for a recipe
  marked unofficial (AIPerf runs it with `--unsafe-override`, so nothing it measures is publishable).
- `publishable` (`harness check --results DIR`): every point of the curve under the results directories must be
  publishable (`harness.point.record.publishable`). A recipe marked unofficial is not meant for publishing (N/A). An
  explicit waiver (`--waive-unofficial REASON`) turns the FAIL into a WARN and is recorded beside the results.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from harness.check.model import CheckedRecipe, Finding, PlannedPoint, Status
from harness.check.rule import Rule
from harness.check.waiver import record_waiver
from harness.errors import UserError
from harness.inputs.json_input import read_json_object
from harness.point.record.publishable import of
from harness.preflight import aiperf_scenario

WAIVER_FILE = "publish_waiver.json"


class AiperfScenario(Rule):
    id: ClassVar[str] = "aiperf-scenario"
    rationale: ClassVar[str] = ("AIPerf's own resolver must accept every point's client command as an AgentX "
                                "submission (pinned corpus, window >= 900 s, no --unsafe-override)")

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        planned = [pp.plan for pp in plans if pp.plan is not None]
        if not planned:
            return [Finding("N/A", "no point plans (see plannable)")]
        levels: dict[str, Status] = {"fail": "FAIL", "warn": "WARN", "pass": "PASS"}
        return [Finding(levels[f.level], f.message) for f in aiperf_scenario.findings(planned, recipe.source)]


class Publishable(Rule):
    id: ClassVar[str] = "publishable"
    rationale: ClassVar[str] = ("every point of a curve meant for publishing must be publishable: valid, on real "
                                "hardware, and accepted by AIPerf as a submission (--waive-unofficial REASON "
                                "records an exception)")

    def __init__(self, results: list[Path], waiver: str | None = None):
        self.results = [Path(r) for r in results]
        self.waiver = waiver

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        key = recipe.recipe.config_key
        if recipe.recipe.client.unofficial:
            return [Finding("N/A", "a smoke recipe (client.unofficial): not meant for publishing")]
        records = sorted(p for r in self.results if (r / key).is_dir() for p in (r / key).rglob("point_result.json"))
        if not records:
            return [Finding("FAIL" if not self.waiver else "WARN",
                            f"no results of {key} under {', '.join(map(str, self.results))}")]
        blocked = []
        for path in records:
            try:
                record = read_json_object(path, "point record")
            except UserError as exc:
                blocked.append(f"unreadable record ({exc})")
                continue
            status = of(record)
            if not status["publishable"]:
                blocked.append(f"c{record.get('conc', '?')} {status['label']} ({path.parent})")
        if not blocked:
            return [Finding("PASS", f"all {len(records)} points publishable")]
        text = f"{len(blocked)} of {len(records)} points not publishable: " + "; ".join(blocked)
        if not self.waiver:
            return [Finding("FAIL", text)]
        base = next(r / key for r in self.results if (r / key).is_dir())
        record_waiver(base / WAIVER_FILE, config_key=key, rule=self.id, reason=self.waiver, waived=text)
        return [Finding("WARN", f"waived (--waive-unofficial: {self.waiver}): {text}")]
