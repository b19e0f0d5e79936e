"""A point at any concurrency takes the settings of the recipe's nearest point (or the named template)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.point.record.result import point_dir
from harness.recipe.load import expand_points, load_recipe
from harness.recipe.points import load_plans
from harness.search.candidate import plan_at, template_point

QUICKSTART = str(Path(__file__).resolve().parents[2] / "recipes" / "quickstart-sim.yaml")


def test_the_nearest_point_gives_the_settings_the_lower_on_a_tie() -> None:
    points = expand_points(load_recipe(QUICKSTART))   # c2, c4, c8
    assert [template_point(points, c, None, QUICKSTART).name for c in (1, 2, 3, 5, 6, 7, 100)] == \
        ["c2", "c2", "c2", "c4", "c4", "c8", "c8"]
    assert template_point(points, 100, "c2", QUICKSTART).name == "c2"
    assert template_point(points, 100, "4", QUICKSTART).name == "c4"
    with pytest.raises(UserError, match=r"--point-template c5: no such point .* \(points: c2, c4, c8\)"):
        template_point(points, 3, "c5", QUICKSTART)


def test_a_point_between_the_recipe_s_points_has_its_template_s_settings_at_its_concurrency() -> None:
    recipe = load_recipe(QUICKSTART)
    points = expand_points(recipe)
    c16 = plan_at(recipe, points, 16, None, QUICKSTART)
    _, (c8,) = load_plans(QUICKSTART, ["c8"])
    assert (c16.conc, c16.name, c16.client.conc, c16.extends_chain) == (16, "c16", 16, ["c8"])
    assert c16.fingerprint == c8.fingerprint          # the settings, not the concurrency
    assert "48" in c16.server.argv[c16.server.argv.index("--max-running-requests") + 1]
    assert point_dir(Path("runs"), c16) == Path("runs/quickstart-sim/conc16")


def test_the_recipe_s_own_point_is_used_as_it_is() -> None:
    recipe = load_recipe(QUICKSTART)
    _, (c4,) = load_plans(QUICKSTART, ["c4"])
    assert plan_at(recipe, expand_points(recipe), 4, None, QUICKSTART) == c4
