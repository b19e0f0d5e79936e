"""One round of `harness search --cluster`, with Slurm faked: points completed before are read back and not
submitted, the rest go as one job array, each outcome comes from the point's own record, and a point that left
none stops the search."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from harness.commands.running.search_cluster import retest_setting, round_tester
from harness.point.record.result import point_dir
from harness.recipe.load import load_recipe
from harness.recipe.points import apply_overrides
from harness.search.candidate import plan_at
from harness.search.slo import parse_slo

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "recipes" / "quickstart-sim.yaml")
VARIANT = "duration_s=20"
RETEST_VARIANT = "duration_s=40"   # attempt 2: twice the window


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

    args = _args(out)
    longer, longer_points, _, longer_variant = retest_setting(args, load_recipe(QUICKSTART), 20.0, 2)
    retest_plans = {c: plan_at(longer, longer_points, c, None, QUICKSTART) for c in (4, 8)}
    after_retest: dict[int, float] = {}
    variants: list[str | None] = []

    def fake_submit(req: Any, warn: Any, loaded: Any) -> dict[str, Any]:
        assert loaded[0] is recipe if req.variant == VARIANT else (req.variant, loaded[0]) == (RETEST_VARIANT, longer)
        submitted.append([p.conc for p in loaded[1]])
        variants.append(req.variant)
        return {"job_id": str(6 + len(submitted)),
                "points": [{"conc": p.conc, "task_id": i} for i, p in enumerate(loaded[1])]}

    def fake_follow(record: dict[str, Any], **kwargs: Any) -> list[dict[str, Any]]:
        for conc, (ttft, state) in after_job.items():
            _write(point_dir(out, plans[conc], VARIANT), plans[conc].fingerprint, conc, ttft, state)
        for conc, ttft in after_retest.items():
            plan = retest_plans[conc]
            _write(point_dir(out, plan, RETEST_VARIANT), plan.fingerprint, conc, ttft)
        return []

    monkeypatch.setattr("harness.submission.submit", fake_submit)
    monkeypatch.setattr("slurm.follow.follow", fake_follow)
    rounds: list[dict[str, Any]] = []
    stop: list[int] = []
    test = round_tester(args, load_recipe(QUICKSTART), recipe, points, [parse_slo("ttft_p90<=0.5")], VARIANT, rounds,
                        stop)
    assert longer_variant == RETEST_VARIANT and longer.client.duration_s == 40
    return {"test": test, "submitted": submitted, "after_job": after_job, "rounds": rounds, "stop": stop,
            "after_retest": after_retest, "variants": variants}


def test_completed_points_are_read_back_and_the_rest_submitted_as_one_array(setup: dict[str, Any]) -> None:
    setup["after_job"][8] = (2.0, "completed")
    result = setup["test"](1, [(4, 1), (8, 1)])
    assert setup["submitted"] == [[8]]
    assert [(v.conc, v.outcome) for v in result.tested] == [(4, "pass"), (8, "fail")] and not result.stopped
    assert setup["rounds"] == [{"round": 1, "concs": [4, 8], "attempts": [1, 1], "reused": [4], "job_id": "7",
                                "jobs": [{"job_id": "7", "attempt": 1, "variant": VARIANT}],
                                "tasks": [{"conc": 8, "task_id": 0, "attempt": 1, "job_id": "7"}]}]
    assert setup["stop"] == []


def test_a_point_without_an_answer_stops_the_search(setup: dict[str, Any]) -> None:
    setup["after_job"][8] = (None, "cancelled")
    result = setup["test"](1, [(4, 1), (8, 1)])
    assert [v.conc for v in result.tested] == [4] and result.stopped and setup["stop"] == [1]


def test_a_point_whose_task_died_gives_no_answer(setup: dict[str, Any]) -> None:
    setup["after_job"][8] = (None, "failed")
    test = setup["test"]
    result = test(1, [(4, 1), (8, 1)])
    assert [(v.conc, v.outcome) for v in result.tested] == [(4, "pass"), (8, "fail")]   # failed: an answer
    status = Path(result.tested[1].point_dir) / "status.json"
    status.write_text(json.dumps({**json.loads(status.read_text()), "reason": "harness_killed: the harness ..."}))
    setup["after_job"].clear()   # the next job leaves the point as the lost task left it
    again = test(2, [(8, 1)])
    assert again.tested == () and again.stopped and setup["stop"] == [1]


def test_a_round_of_completed_points_submits_nothing(setup: dict[str, Any]) -> None:
    result = setup["test"](1, [(4, 1)])
    assert setup["submitted"] == [] and [v.outcome for v in result.tested] == ["pass"]
    assert setup["rounds"][0]["job_id"] is None and setup["rounds"][0]["reused"] == [4]


def test_a_re_test_goes_as_an_array_of_its_own_with_twice_the_window(setup: dict[str, Any]) -> None:
    setup["after_job"][8] = (2.0, "completed")
    setup["after_retest"][4] = 0.1
    result = setup["test"](1, [(4, 2), (8, 1)])
    assert setup["submitted"] == [[8], [4]] and setup["variants"] == [VARIANT, RETEST_VARIANT]
    assert [(v.conc, v.outcome, Path(v.point_dir).parent.name) for v in result.tested] == [
        (4, "pass", RETEST_VARIANT), (8, "fail", VARIANT)]
    entry = setup["rounds"][0]
    assert entry["attempts"] == [2, 1] and entry["job_id"] == "7"
    assert entry["jobs"] == [{"job_id": "7", "attempt": 1, "variant": VARIANT},
                             {"job_id": "8", "attempt": 2, "variant": RETEST_VARIANT}]
    assert entry["tasks"] == [{"conc": 8, "task_id": 0, "attempt": 1, "job_id": "7"},
                              {"conc": 4, "task_id": 0, "attempt": 2, "job_id": "8"}]


def test_a_third_test_is_a_repeat_in_a_directory_of_its_own() -> None:
    args = _args(Path("/tmp/x"))
    recipe = load_recipe(QUICKSTART)
    assert retest_setting(args, recipe, 20.0, 3)[2:] == (["client.duration_s=40"], "duration_s=40+repeat1")
    tagged = argparse.Namespace(**{**vars(args), "tag": "mine"})
    assert retest_setting(tagged, recipe, 20.0, 4)[3] == "mine+duration_s=40+repeat2"


def test_a_long_tags_retests_stay_valid_tags_and_distinct(tmp_path: Path) -> None:
    """A re-test's variant is the tag with its window (and repeat) named after it; with a tag of the longest
    allowed length that name is cut, still a tag Slurm submission accepts, and one per attempt."""
    from harness.point.state.variant import MAX_NAME, check_tag

    tag = "t" * MAX_NAME
    args = argparse.Namespace(**{**vars(_args(tmp_path)), "tag": check_tag(tag)})
    names = [retest_setting(args, load_recipe(QUICKSTART), 20.0, attempt)[3] for attempt in (2, 3, 4)]
    assert all(n is not None and check_tag(n) == n for n in names)
    assert len(set(names)) == 3
    assert names[0].endswith("+duration_s=40") and names[1].endswith("+duration_s=40+repeat1")
    short = argparse.Namespace(**{**vars(_args(tmp_path)), "tag": "mine"})
    assert retest_setting(short, load_recipe(QUICKSTART), 20.0, 3)[3] == "mine+duration_s=40+repeat1"
