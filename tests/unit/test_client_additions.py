"""Client settings added after fingerprints were first recorded (`client.warmup_requests_per_lane`, AIPerf's
per-lane warmup budget; `client.burst_phase_starts`, every lane starting the window at once): in a point's settings
only when set."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.recipe.points import load_plans

QUICKSTART = Path(__file__).resolve().parents[2] / "recipes" / "quickstart-sim.yaml"


def _c2(*settings: str):
    _, (plan,) = load_plans(QUICKSTART, ["c2"], list(settings))
    return plan


def test_the_budget_changes_the_fingerprint_and_reaches_the_client_plan() -> None:
    three, ten = _c2("client.warmup_requests_per_lane=3"), _c2("client.warmup_requests_per_lane=10")
    assert (three.client.warmup_requests_per_lane, ten.client.warmup_requests_per_lane) == (3, 10)
    assert three.fingerprint != ten.fingerprint
    assert three.public()["client"]["warmup_requests_per_lane"] == 3


def test_unset_it_is_absent_from_the_settings_and_the_plan() -> None:
    """A recipe that leaves it unset keeps the fingerprint it had before the setting existed."""
    plan = _c2("client.warmup_requests_per_lane=null")
    assert plan.client.warmup_requests_per_lane is None
    assert "warmup_requests_per_lane" not in plan.settings["client"]
    assert "warmup_requests_per_lane" not in plan.public()["client"]


def test_a_timed_warmup_and_a_per_lane_budget_are_refused_together() -> None:
    with pytest.raises(UserError, match="exclusive"):
        _c2("client.warmup_requests_per_lane=3", "client.warmup_s=20")


def test_burst_starts_change_the_fingerprint_and_reach_the_client_plan() -> None:
    burst, spaced = _c2("client.burst_phase_starts=true"), _c2()
    assert burst.client.burst_phase_starts is True and spaced.client.burst_phase_starts is False
    assert burst.fingerprint != spaced.fingerprint
    assert burst.public()["client"]["burst_phase_starts"] is True


def test_recorded_spacing_is_absent_from_the_settings_and_the_plan() -> None:
    """Left at the recorded spacing (the default), the fingerprint is the one it had before the setting existed."""
    plan = _c2("client.burst_phase_starts=false")
    assert plan.fingerprint == _c2().fingerprint
    assert "burst_phase_starts" not in plan.settings["client"]
    assert "burst_phase_starts" not in plan.public()["client"]
