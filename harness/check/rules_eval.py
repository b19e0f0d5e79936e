"""`accuracy-eval`: a curve's results count only with a passing accuracy eval (`harness check --results DIR`).

The newest `eval_result.json` of the recipe's config key under the results directories decides: PASS when
it completed at or above its threshold on the whole test split; FAIL when there is none, when it failed or
was cancelled (no score), when it scored below its threshold, or when it ran on part of the split only
(`--limit N`, a smoke run). An explicit waiver (`--waive-eval REASON`) turns that FAIL into a
WARN naming the reason; the waiver is recorded in the check's output and in `eval_waiver.json` beside the
curve's results, so it can be reviewed.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from harness.check.model import CheckedRecipe, Finding, PlannedPoint
from harness.check.rule import Rule
from harness.check.waiver import record_waiver
from harness.report.results.evals import eval_line, newest_evals

WAIVER_FILE = "eval_waiver.json"


class AccuracyEval(Rule):
    id: ClassVar[str] = "accuracy-eval"
    inferencex_check: ClassVar[str] = "2"
    rationale: ClassVar[str] = ("a curve is accepted only with a passing accuracy eval of its serving config "
                                "(the newest eval under --results; --waive-eval REASON records an exception)")

    def __init__(self, results: list[Path], waiver: str | None = None):
        self.results = [Path(r) for r in results]
        self.waiver = waiver

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        key = recipe.recipe.config_key
        newest = newest_evals(self.results).get(key)
        line = eval_line(newest).removeprefix("accuracy eval: ")
        where = ", ".join(map(str, self.results))
        if newest is not None and newest.accepted:   # the report's gate, PASS
            return [Finding("PASS", f"{line} ({newest.path})")]
        if newest is not None and newest.gate == "PARTIAL":
            line = f"not accepted: a partial eval ({line}); run it on the whole test split"
        if not self.waiver:
            return [Finding("FAIL", f"{line}" + (f" ({newest.path})" if newest else f" under {where}"))]
        self._record(key, line, newest.path if newest else None)
        return [Finding("WARN", f"waived (--waive-eval: {self.waiver}): {line}")]

    def _record(self, key: str, line: str, eval_path: Path | None) -> None:
        """Write the waiver beside the curve's results (the first results directory that holds the curve)."""
        base = next((r / key for r in self.results if (r / key).is_dir()), None)
        if base is None and eval_path is not None:
            base = eval_path.parent.parent
        if base is None:
            return
        record_waiver(base / WAIVER_FILE, config_key=key, rule=self.id, reason=self.waiver, waived=line,
                      eval_result=None if eval_path is None else str(eval_path))
