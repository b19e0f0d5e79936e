"""The shape of a review rule: an id, a one-line rationale and `check(recipe, plans) -> list[Finding]`."""

from __future__ import annotations

from typing import ClassVar

from harness.check.model import CheckedRecipe, Finding, PlannedPoint


class Rule:
    """A review rule. Subclasses set `id` and `rationale` and implement `check`.

    `inferencex_check` names the check of InferenceX's code-owner review (Checks 0-15) the rule mechanizes, if
    any. `load_markers` are substrings of a recipe-loading error that show the recipe breaks this rule (a recipe
    that breaks a rule may be rejected before it can be checked point by point).
    """

    id: ClassVar[str]
    rationale: ClassVar[str]
    inferencex_check: ClassVar[str] = ""   # the InferenceX code-owner check it mechanizes ("8", "13"); "": ours
    load_markers: ClassVar[tuple[str, ...]] = ()
    fails_when_unloadable: ClassVar[bool] = False  # also FAIL when another rule's breach stops the loading

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        raise NotImplementedError

    def claims_load_error(self, message: str) -> bool:
        return any(marker in message for marker in self.load_markers)

    @property
    def described(self) -> str:
        """The rationale, led by the InferenceX check it mechanizes: `[InferenceX Check 13] ...`."""
        return f"[InferenceX Check {self.inferencex_check}] {self.rationale}" if self.inferencex_check else \
            self.rationale
