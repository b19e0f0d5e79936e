"""One round of `harness search --cluster`, with Slurm faked: points completed before are read back and not
submitted, the rest go as one job array, each outcome comes from the point's own record, and a point that left
none stops the search."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from harness.commands.running.search_cluster import round_tester
from harness.point.record.result import point_dir
from harness.recipe.load import load_recipe
from harness.recipe.points import apply_overrides
from harness.search.candidate import plan_at
from harness.search.slo import parse_slo

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "recipes" / "quickstart-sim.yaml")
VARIANT = "duration_s=20"


def _args(out: Path) -> argparse.Namespace:
    return argparse.Namespace(out=out, recipe=QUICKSTART, cluster=str(ROOT / "clusters" / "local-ci.yaml"),
                              point_template=None, overrides=[], duration=20.0, ready_timeout=None,
                              stall_timeout=None, require_power=False, tag=None, note=None, unofficial=False,
                              interval=0.0)


def _write(pdir: Path, fingerprint: str, conc: int, ttft: float | None, state: str = "completed") -> None:
    pdir.mkdir(parents=True, exist_ok=True)
    (pdir / "status.json").write_text(json.dumps({"kind": "point", "state": state, "conc": conc,
                                                  "config_key": "quickstart-sim", "fingerprint": fingerprint}))
    if ttft is not None:
        (pdir / "point_result.json").write_text(json.dumps({
            "conc": conc, "config_key": "quickstart-sim", "state": state, "validity": {"valid": True, "reasons": []},
            "request_metrics": {"latency": {"ttft": {"p90": ttft}}}}))


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    recipe, points = apply_overrides(load_recipe(QUICKSTART), None, ["client.duration_s=20"], QUICKSTART)
    plans = {c: plan_at(recipe, points, c, None, QUICKSTART) for c in (4, 8)}
    out = tmp_path.resolve()
    _write(point_dir(out, plans[4], VARIANT), plans[4].fingerprint, 4, 0.1)   # completed before
    submitted: list[list[int]] = []
    after_job: dict[int, tuple[float | None, str]] = {}

    def fake_submit(req: Any, warn: Any, loaded: Any) -> dict[str, Any]:
        assert req.variant == VARIANT and loaded[0] is recipe
        submitted.append([p.conc for p in loaded[1]])
        return {"job_id": "7", "points": [{"conc": p.conc, "task_id": i} for i, p in enumerate(loaded[1])]}

    def fake_follow(record: dict[str, Any], **kwargs: Any) -> list[dict[str, Any]]:
        for conc, (ttft, state) in after_job.items():
            _write(point_dir(out, plans[conc], VARIANT), plans[conc].fingerprint, conc, ttft, state)
        return []

    monkeypatch.setattr("harness.submission.submit", fake_submit)
    monkeypatch.setattr("slurm.follow.follow", fake_follow)
    rounds: list[dict[str, Any]] = []
    stop: list[int] = []
    test = round_tester(_args(out), recipe, points, [parse_slo("ttft_p90<=0.5")], VARIANT, rounds, stop)
    return {"test": test, "submitted": submitted, "after_job": after_job, "rounds": rounds, "stop": stop}


def test_completed_points_are_read_back_and_the_rest_submitted_as_one_array(setup: dict[str, Any]) -> None:
    setup["after_job"][8] = (2.0, "completed")
    result = setup["test"](1, [4, 8])
    assert setup["submitted"] == [[8]]
    assert [(v.conc, v.outcome) for v in result.tested] == [(4, "pass"), (8, "fail")] and not result.stopped
    assert setup["rounds"] == [{"round": 1, "concs": [4, 8], "reused": [4], "job_id": "7",
                                "tasks": [{"conc": 8, "task_id": 0}]}]
    assert setup["stop"] == []


def test_a_point_without_an_answer_stops_the_search(setup: dict[str, Any]) -> None:
    setup["after_job"][8] = (None, "cancelled")
    result = setup["test"](1, [4, 8])
    assert [v.conc for v in result.tested] == [4] and result.stopped and setup["stop"] == [1]


def test_a_point_whose_task_died_gives_no_answer(setup: dict[str, Any]) -> None:
    setup["after_job"][8] = (None, "failed")
    test = setup["test"]
    result = test(1, [4, 8])
    assert [(v.conc, v.outcome) for v in result.tested] == [(4, "pass"), (8, "fail")]   # failed: an answer
    status = Path(result.tested[1].point_dir) / "status.json"
    status.write_text(json.dumps({**json.loads(status.read_text()), "reason": "harness_killed: the harness ..."}))
    setup["after_job"].clear()   # the next job leaves the point as the lost task left it
    again = test(2, [8])
    assert again.tested == () and again.stopped and setup["stop"] == [1]


def test_a_round_of_completed_points_submits_nothing(setup: dict[str, Any]) -> None:
    result = setup["test"](1, [4])
    assert setup["submitted"] == [] and [v.outcome for v in result.tested] == ["pass"]
    assert setup["rounds"][0]["job_id"] is None and setup["rounds"][0]["reused"] == [4]
