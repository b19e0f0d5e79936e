"""A deployment on Slurm, the pure parts: the task shape of the sbatch line, the fit by nodes, the sweep plan and
submission record of `--reuse-deployment`, and the views of points that share one task."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.point.state.status import PointStatus
from harness.recipe.points import load_plans
from slurm.profile import load_profile
from slurm.progress import finished, point_views
from slurm.render import check_fit, deployment_nodes, sbatch_argv, submission_record, sweep_plan
from slurm.state import TaskState

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "tests" / "fixtures" / "recipes" / "disagg-sim-4node.yaml"
LOCAL_CI = ROOT / "clusters" / "local-ci.yaml"


def test_a_deployment_task_is_an_allocation_of_whole_nodes() -> None:
    _, plans = load_plans(RECIPE)
    profile = load_profile(LOCAL_CI)
    assert deployment_nodes(plans) == 4
    argv = sbatch_argv(profile, job_name="j", n_tasks=1, out_dir=Path("/o"), script=Path("/o/s.sh"), nodes=4)
    assert argv[3:7] == ["--array=0-0", "--nodes=4", "--ntasks-per-node=1", "--gres=gpu:8"]   # no %N for one task
    gb300 = load_profile(ROOT / "clusters" / "gb300.yaml").model_copy(update={"gpu_directive": "gpus-per-node"})
    argv = sbatch_argv(gb300, job_name="j", n_tasks=2, out_dir=Path("/o"), script=Path("/o/s.sh"), nodes=4)
    assert argv[3:8] == ["--array=0-1", "--nodes=4", "--ntasks-per-node=1", "--gpus-per-node=4", "--exclusive"]


def test_a_deployment_fits_by_nodes_and_needs_pyxis() -> None:
    recipe, plans = load_plans(RECIPE)
    profile = load_profile(LOCAL_CI)
    check_fit(recipe, plans, profile, "r.yaml")
    small = profile.model_copy(update={"gpus_per_node": 2, "gpus_per_task": None})
    with pytest.raises(UserError, match=r"a prefill worker needs 8 GPUs, its 2 node\(s\) on 'local-ci' have 4"):
        check_fit(recipe, plans, small, "r.yaml")
    host = profile.model_copy(update={"container": profile.container.model_copy(update={"runtime": "none"})})
    with pytest.raises(UserError, match="cannot place a deployment's processes"):
        check_fit(recipe, plans, host, "r.yaml")


def test_a_reused_deployment_is_one_task_for_every_point(tmp_path: Path) -> None:
    _, plans = load_plans(RECIPE)
    sweep = sweep_plan(plans, load_profile(LOCAL_CI), tmp_path, 60.0, [], reuse_deployment=True)
    assert sweep.n_tasks == 1 and sweep.reuse_deployment
    record = submission_record("7", cluster="c", recipe="r", plan_file=tmp_path / "p", script=tmp_path / "s",
                               sbatch=[], plans=plans, out_dir=tmp_path, staged={}, submitted_ns=0,
                               reuse_deployment=True)
    assert [p["task_id"] for p in record["points"]] == [0, 0] and record["reuse_deployment"] is True
    first = Path(record["points"][0]["point_dir"])
    first.mkdir(parents=True)
    PointStatus(first, 2, "disagg-sim-4node").phase("profiling")
    running = {0: TaskState(0, "RUNNING", None)}
    views = point_views(record, running)
    assert [(v["state"], v["reason"]) for v in views] == [
        ("running", None), ("pending", "after the points before it on the shared deployment")]
    assert not finished(record, running, "sacct")
    ended = {0: TaskState(0, "CANCELLED", 143)}
    views = point_views(record, ended)
    assert views[1]["state"] == "cancelled" and views[1]["reason"] == "not run: the task ended (slurm CANCELLED) " \
                                                                      "before this point"
    assert finished(record, ended, "sacct")
