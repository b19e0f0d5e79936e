"""sbatch rendering: the exact command line, the tiny batch script, model staging and fit checks."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.recipe.points import load_plans
from slurm.profile import load_profile, parse_profile
from slurm.render import batch_script, check_fit, image_file, sbatch_argv, stage_plans, sweep_plan

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "recipes" / "quickstart-sim.yaml"


def test_local_ci_sbatch_command() -> None:
    p = load_profile(ROOT / "clusters" / "local-ci.yaml")
    argv = sbatch_argv(p, job_name="harness-q", n_tasks=3, out_dir=Path("/o"), script=Path("/o/s.sh"))
    assert argv == ["sbatch", "--parsable", "--job-name=harness-q", "--array=0-2%2", "--nodes=1", "--ntasks=1",
                    "--gres=gpu:4", "--time=00:15:00", "--signal=B:USR1@60", "--output=/o/slurm/%A_%a.out",
                    "--chdir=/o", "/o/s.sh"]


def test_cluster_sbatch_command_is_exclusive_with_site_options() -> None:
    p = load_profile(ROOT / "clusters" / "gb300.yaml")
    p = p.model_copy(update={"qos": "bench", "sbatch_directives": ["--constraint=gb300"],
                             "gpu_directive": "gpus-per-node"})
    argv = sbatch_argv(p, job_name="j", n_tasks=11, out_dir=Path("/o"), script=Path("/o/s.sh"), throttle=4,
                       time_limit="01:30:00", signal_margin_s=600, comment="harness sweep /o")
    assert argv[3:] == ["--array=0-10%4", "--nodes=1", "--ntasks=1", "--gpus-per-node=4", "--exclusive",
                        "--time=01:30:00", "--signal=B:USR1@600", "--output=/o/slurm/%A_%a.out", "--chdir=/o",
                        "--account=SITE-account", "--partition=SITE-gb300", "--qos=bench",
                        "--comment=harness sweep /o", "--constraint=gb300", "/o/s.sh"]


def test_no_points_no_job() -> None:
    p = load_profile(ROOT / "clusters" / "local-ci.yaml")
    with pytest.raises(UserError, match="nothing to submit"):
        sbatch_argv(p, job_name="j", n_tasks=0, out_dir=Path("/o"), script=Path("/o/s.sh"))


def test_batch_script_quotes_and_execs_the_point_runner() -> None:
    p = load_profile(ROOT / "clusters" / "local-ci.yaml")
    plan = Path("/runs/it's here/plan.json")
    text = batch_script("/venv/bin/python", plan, ["sbatch", "x"], p, "img:1")
    last = text.strip().splitlines()[-1]
    assert last.startswith("exec ")
    assert shlex.split(last) == ["exec", "/venv/bin/python", "-m", "harness", "run-point", str(plan)]
    assert "slurm.images" not in text


def test_batch_script_imports_the_image_into_the_cache_first() -> None:
    p = load_profile(ROOT / "clusters" / "h200.yaml")
    text = batch_script("/py", Path("/o/plan.json"), ["sbatch"], p, "lmsysorg/sglang:v0.5.23-cu130")
    lines = text.strip().splitlines()
    assert shlex.split(lines[-2]) == ["/py", "-m", "slurm.images", "ensure", "--runtime", "pyxis",
                                      "--arch", "x86_64", "lmsysorg/sglang:v0.5.23-cu130",
                                      "/shared/SITE/harness/images/x86_64/lmsysorg_sglang_v0.5.23-cu130.sqsh"]
    assert lines[-1].startswith("exec ")


def test_sweep_plan_uses_the_cached_image_and_profile_mounts() -> None:
    p = load_profile(ROOT / "clusters" / "h200.yaml")
    _, plans = load_plans(QUICKSTART)
    sweep = sweep_plan(plans, p, Path("/o"), 600.0, ["client.duration_s=15"])
    assert sweep.launcher == "pyxis"
    assert sweep.image_path == "/shared/SITE/harness/images/x86_64/lmsysorg_sglang_v0.5.23-cu130.sqsh"
    assert sweep.mounts == ["/raid/models:/raid/models"]
    assert [pp.conc for pp in sweep.points] == [2, 4, 8]


def test_model_staging_rewrites_model_path_only() -> None:
    _, plans = load_plans(QUICKSTART)
    staged, applied = stage_plans(plans, {"demo/agentic-coder-8b": "/scratch/m"})
    assert applied == {"demo/agentic-coder-8b": "/scratch/m"}
    argv = staged[0].server.argv
    assert argv[argv.index("--model-path") + 1] == "/scratch/m"
    assert staged[0].fingerprint == plans[0].fingerprint          # same checkpoint, same identity
    assert stage_plans(plans, {"other": "/x"})[1] == {}


def _profile(**changes: object) -> object:
    base = {"name": "c", "gpu": "h200", "gpus_per_node": 8, "cpu_arch": "x86_64", "container": {"runtime": "pyxis"}}
    return parse_profile({**base, **changes}, "c.yaml")


def test_fit_checks() -> None:
    recipe, plans = load_plans(QUICKSTART)
    check_fit(recipe, plans, _profile(), "r.yaml")                 # the simulator runs anywhere
    real = recipe.model_copy(update={"engine": "sglang"})
    with pytest.raises(UserError, match="hardware.gpu: recipe is for 'sim' but cluster 'c' has 'h200'"):
        check_fit(real, plans, _profile(), "r.yaml")
    big = [plans[0].model_copy(update={"resources": plans[0].resources.model_copy(update={"num_gpus": 8})})]
    with pytest.raises(UserError, match="points.c2: needs 8 GPUs, an array task on 'c' gets 4"):
        check_fit(recipe, big, _profile(gpus_per_task=4), "r.yaml")


def test_profiles_of_two_architectures_sharing_one_cache_never_share_an_image() -> None:
    gb300, h200 = (load_profile(ROOT / "clusters" / f"{n}.yaml") for n in ("gb300", "h200"))
    shared = {"container": gb300.container.model_copy(update={"image_cache_dir": "/shared/images"})}
    a, b = (image_file(p.model_copy(update=shared), "lmsysorg/sglang:v0.5.23") for p in (gb300, h200))
    assert a == "/shared/images/aarch64/lmsysorg_sglang_v0.5.23.sqsh"
    assert b == "/shared/images/x86_64/lmsysorg_sglang_v0.5.23.sqsh"
