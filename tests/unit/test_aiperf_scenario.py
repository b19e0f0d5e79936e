"""AIPerf's own scenario resolution judges every shipped point, and our fast copy of its rules agrees with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.preflight.aiperf_scenario import client_argv, resolutions
from harness.recipe.points import load_plans
from harness.recipe.scenario import AGENTX, AGENTX_PRESET, MVP, fast_violations, resolve
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


@pytest.mark.parametrize("scenario", [AGENTX, MVP])
@pytest.mark.parametrize("recipe", GPU_RECIPES, ids=[r.stem for r in GPU_RECIPES])
@pytest.mark.parametrize(("traces", "duration"), [(PINNED, 3600), (PINNED, 600), (str(TRACES), 3600),
                                                  (str(TRACES), 600)])
def test_fast_rules_and_aiperf_agree_on_corpus_and_window(recipe: Path, traces: str, duration: int, scenario: str,
                                                          tmp_path: Path) -> None:
    overrides = [f"client.traces={traces}", f"client.duration_s={duration}", f"client.scenario={scenario}"]
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
    assert argv[:2] == ["--scenario", "agentx"]
    res = resolve([*argv, "--extra-inputs", "ignore_eos:false"])
    assert not res.accepted and [v.flag for v in res.violations] == ["extra_inputs.ignore_eos"]
    res = resolve([*argv, "--request-rate", "4"])
    assert not res.accepted and "Scenario invariants violated" in (res.error or "")
    res = resolve([*argv, "--no-such-flag"])
    assert not res.accepted and res.error


def test_what_the_harness_leaves_to_the_agentx_preset_is_what_the_client_sets() -> None:
    """The flags the harness leaves out under `agentx` are set by the installed client's own preset."""
    from aiperf.common.scenario.registry import get_scenario

    spec = get_scenario(AGENTX)
    assert spec.cli_defaults["random_seed"] == AGENTX_PRESET.seed
    assert (spec.default_trajectory_start_min_ratio, spec.default_trajectory_start_max_ratio) == \
        AGENTX_PRESET.trajectory_start_ratios
    assert spec.cli_defaults["failed_request_threshold"] == AGENTX_PRESET.failed_request_threshold
    for key, value in AGENTX_PRESET.cli_defaults:
        assert spec.cli_defaults[key] == value, key
    for group, key, value in AGENTX_PRESET.environment:
        assert spec.environment_defaults[group][key] == value, (group, key)
    assert spec.require_ignore_eos and spec.require_streaming
    assert spec.min_benchmark_duration_seconds == 900 and get_scenario(MVP).min_benchmark_duration_seconds == 900


def test_the_client_is_the_agentx_harness_fork() -> None:
    """The `aiperf` the harness runs is InferenceX's client: agentx-harness at its pinned version."""
    from harness.point.replay.aiperf import aiperf_executable
    from harness.point.replay.aiperf_check import check_aiperf

    tool = check_aiperf(aiperf_executable())
    pinned = next(d for d in (ROOT / "pyproject.toml").read_text().splitlines() if "agentx-harness==" in d)
    assert tool.name == "agentx-harness" and f"agentx-harness=={tool.version}" in pinned


def test_aiperf_takes_the_added_client_settings_as_no_breach_of_its_scenario(tmp_path: Path) -> None:
    """A per-lane warm-up budget and burst starts are AIPerf options the scenario allows: an official point that
    sets them stays submission-valid for AIPerf (the harness itself marks it not publishable)."""
    settings = ["client.burst_phase_starts=true", "client.warmup_requests_per_lane=3"]
    _, (plan,) = load_plans(GPU_RECIPES[0], ["c1"], settings)
    argv = client_argv(plan, tmp_path)
    assert "--burst-phase-starts" in argv and "--warmup-requests-per-lane" in argv
    res = resolve(argv)
    assert res.accepted and res.submission_valid is True, (res.error, res.violations)
