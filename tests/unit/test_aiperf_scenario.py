"""AIPerf's own scenario resolution judges every shipped point, and our fast copy of its rules agrees with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.preflight.aiperf_scenario import client_argv, resolutions
from harness.recipe.points import load_plans
from harness.recipe.scenario import fast_violations, resolve
from tests.pinned_corpus import PINNED

ROOT = Path(__file__).resolve().parents[2]
RECIPES = sorted((ROOT / "recipes").glob("*.yaml"))
GPU_RECIPES = [r for r in RECIPES if r.stem.startswith("musespark-")]
TRACES = ROOT / "recipes" / "traces" / "quickstart"


@pytest.mark.parametrize("recipe", RECIPES, ids=[r.stem for r in RECIPES])
def test_aiperf_accepts_every_point_of_every_shipped_recipe_at_its_own_window(recipe: Path, tmp_path: Path) -> None:
    _, plans = load_plans(recipe)
    found = resolutions(plans)
    assert set(found) == {p.name for p in plans}
    for plan in plans:
        res = found[plan.name]
        argv = client_argv(plan, tmp_path)
        assert res.accepted, (plan.name, res.error)
        assert ("--unsafe-override" in argv) is plan.client.unofficial       # only where the recipe says so
        assert res.submission_valid is (not plan.client.unofficial), (plan.name, res.violations)
        # our fast copy of the scenario's rules sees exactly the breaches AIPerf records
        assert {v.flag.split()[0] for v in fast_violations(plan.client)} == \
            {v.flag.split()[0].replace("--custom-dataset-type", "--input-file") for v in res.violations}


@pytest.mark.parametrize("recipe", GPU_RECIPES, ids=[r.stem for r in GPU_RECIPES])
@pytest.mark.parametrize(("traces", "duration"), [(PINNED, 3600), (PINNED, 600), (str(TRACES), 3600),
                                                  (str(TRACES), 600)])
def test_fast_rules_and_aiperf_agree_on_corpus_and_window(recipe: Path, traces: str, duration: int,
                                                          tmp_path: Path) -> None:
    overrides = [f"client.traces={traces}", f"client.duration_s={duration}"]
    _, (plan,) = load_plans(recipe, ["c1"], overrides, unofficial=True)
    breaks = fast_violations(plan.client)
    assert bool(breaks) == (traces != PINNED or duration < 900)
    marked = resolve(client_argv(plan, tmp_path))
    assert marked.accepted and marked.submission_valid is (not breaks)
    official = plan.client.model_copy(update={"unofficial": False})
    bare = resolve(client_argv(plan.model_copy(update={"client": official}), tmp_path))
    assert bare.accepted is (not breaks), bare.error   # what AIPerf does without the override the user asked for
    if breaks:
        with pytest.raises(UserError, match="scenario refuses this run: .*--unofficial"):
            load_plans(recipe, ["c1"], overrides)


def test_aiperf_refuses_what_breaks_its_invariants_with_its_own_words(tmp_path: Path) -> None:
    _, (plan,) = load_plans(GPU_RECIPES[0], ["c1"])
    argv = client_argv(plan, tmp_path)
    flipped = [("ignore_eos:false" if tok == "ignore_eos:true" else tok) for tok in argv]
    res = resolve(flipped)
    assert not res.accepted and [v.flag for v in res.violations] == ["extra_inputs.ignore_eos"]
    res = resolve([*argv, "--request-rate", "4"])
    assert not res.accepted and "Scenario invariants violated" in (res.error or "")
    res = resolve([*argv, "--no-such-flag"])
    assert not res.accepted and res.error
