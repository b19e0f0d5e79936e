"""A point whose failure every later point would meet too stops the sweep there, naming why and what was not
started: a full disk, unwritable results, a container runtime that went away."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.point import sequence
from harness.point.run import EXIT_FAILED, PointOptions, PointOutcome
from harness.recipe.points import load_plans

QUICKSTART = Path(__file__).parents[2] / "recipes" / "quickstart-sim.yaml"


@pytest.mark.parametrize(("reason", "said"), [
    ("container_runtime_gone: the docker daemon went away while the server ran (docker: Cannot connect)",
     "sweep stopped: the container runtime went away (run the sweep again once it answers"),
    ("disk_full: No space left on device at /x/plan.json", "sweep stopped: the disk is full"),
    ("results_unwritable: /x is read-only", "sweep stopped: the results directory cannot be written"),
])
def test_a_failure_every_later_point_would_meet_stops_the_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str], reason: str,
                                                                 said: str) -> None:
    _, plans = load_plans(QUICKSTART, ["c2", "c4", "c8"], [])
    started: list[int] = []

    def failing(plan, options, shared=None):  # type: ignore[no-untyped-def]
        started.append(plan.conc)
        return PointOutcome("failed", reason, EXIT_FAILED, tmp_path / f"conc{plan.conc}", None, None)

    monkeypatch.setattr(sequence, "run_point", failing)
    done = sequence.run_sequence(plans, PointOptions(out_dir=tmp_path / "runs", cache_dir=tmp_path / "c"))
    out = capsys.readouterr().out
    assert (done.exit_status, done.stopped) == (EXIT_FAILED, True) and started == [plans[0].conc]
    assert said in out and "the 2 later point(s) were not started" in out


def test_a_point_failing_on_its_own_does_not_stop_the_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, plans = load_plans(QUICKSTART, ["c2", "c4", "c8"], [])
    started: list[int] = []

    def failing(plan, options, shared=None):  # type: ignore[no-untyped-def]
        started.append(plan.conc)
        return PointOutcome("failed", "server_crashed: exit 1", EXIT_FAILED, tmp_path / f"conc{plan.conc}", None, None)

    monkeypatch.setattr(sequence, "run_point", failing)
    done = sequence.run_sequence(plans, PointOptions(out_dir=tmp_path / "runs", cache_dir=tmp_path / "c"))
    assert (done.exit_status, done.stopped) == (EXIT_FAILED, False) and started == [p.conc for p in plans]
