"""A `--set` that changes no setting of the selected points is named in a warning (run, sweep, plan)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from harness.cli import main
from harness.recipe.override_effect import idle_overrides, idle_warning
from harness.recipe.points import load_plans

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "recipes" / "quickstart-sim.yaml")


def _idle(names: list[str] | None, overrides: list[str]) -> list[str]:
    _, plans = load_plans(QUICKSTART, names, overrides)
    return idle_overrides(QUICKSTART, names, overrides, False, plans)


def test_an_override_the_recipe_already_has_is_idle() -> None:
    assert _idle(["c4"], ["args.max-running-requests=32"]) == ["args.max-running-requests=32"]
    assert _idle(["c4"], ["args.max-running-requests=16"]) == []
    assert _idle(["c4"], ["engine=sim", "client.duration_s=20"]) == ["engine=sim"]
    # c8 sets its own 48: 32 is idle for c2 and c4 but not for c8, so over the three points it changes something
    assert _idle(None, ["args.max-running-requests=32"]) == []
    assert _idle(["c8"], ["args.max-running-requests=48"]) == ["args.max-running-requests=48"]


def test_the_warning_names_the_override_and_the_points() -> None:
    _, plans = load_plans(QUICKSTART, ["c2", "c4"], [])
    assert idle_warning("args.max-running-requests=32", plans) == (
        "--set args.max-running-requests=32 changes no setting of any of c2, c4: the recipe already has that value")


def test_plan_warns_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", QUICKSTART, "--point", "c4", "--set", "args.max-running-requests=32", "--set",
                 "args.chunked-prefill-size=4096"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "warning: --set args.max-running-requests=32 changes no setting of c4: the recipe already has that value"]


def test_the_readme_tuning_examples_change_something() -> None:
    runs = [shlex.split(line) for line in (ROOT / "README.md").read_text().splitlines()
            if re.match(r"harness (run|sweep) \S+ .*--set args\.", line)]
    assert runs
    for words in runs:
        point = [words[words.index("--point") + 1]] if "--point" in words else None
        sets = [words[i + 1] for i, w in enumerate(words) if w == "--set"]
        recipe = str(ROOT / words[2])
        _, plans = load_plans(recipe, point, sets)
        assert idle_overrides(recipe, point, sets, False, plans) == [], words
