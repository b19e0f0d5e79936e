"""Pure rendering of a sweep for Slurm: staged plans, the sweep plan file, the sbatch command line and the
tiny batch script. Nothing here touches the cluster.

The batch script only (optionally) makes sure the image is in the cache, then `exec`s `harness run-point`:
the exec makes the harness the batch shell itself, so `--signal=B:USR1@<margin>` reaches it directly and
the point flushes its artifacts and marks itself cancelled before the walltime kill.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.evals.run import eval_dir, row_name
from harness.point.record.result import RECORD_FILE, point_dir, result_name
from harness.recipe.plan import PointPlan
from harness.recipe.schema import Recipe
from harness.recipe.thresholds import Thresholds
from slurm.images import cache_path
from slurm.profile import ClusterProfile
from slurm.sweep_plan import SweepPlanFile

STAGED_FLAGS = ("--model-path", "--speculative-draft-model-path")


def stage_plans(plans: list[PointPlan], staging: dict[str, str]) -> tuple[list[PointPlan], dict[str, str]]:
    """Point the server at staged local copies of its checkpoints; returns the plans and what was mapped."""
    applied: dict[str, str] = {}
    out = []
    for plan in plans:
        argv = list(plan.server.argv)
        for i, token in enumerate(argv[:-1]):
            if token in STAGED_FLAGS and argv[i + 1] in staging:
                applied[argv[i + 1]] = staging[argv[i + 1]]
                argv[i + 1] = staging[argv[i + 1]]
        out.append(plan.model_copy(update={"server": plan.server.model_copy(update={"argv": argv})}))
    return out, applied


def check_fit(recipe: Recipe, plans: list[PointPlan], profile: ClusterProfile, source: str) -> None:
    """A recipe runs on a cluster only if its GPU type matches and every point fits its task: one array task's
    GPUs for a single server; for a deployment, nodes of the profile's GPUs with each worker within its nodes
    (raises UserError)."""
    problem = fit_problem(recipe, plans, profile, source)
    if problem is not None:
        raise UserError(problem)


def fit_problem(recipe: Recipe, plans: list[PointPlan], profile: ClusterProfile, source: str) -> str | None:
    """Why the recipe does not fit the cluster (one line), or None."""
    if recipe.engine != "sim":
        if recipe.hardware.gpu != profile.gpu:
            return (f"{source}: hardware.gpu: recipe is for {recipe.hardware.gpu!r} but cluster {profile.name!r} "
                    f"has {profile.gpu!r}")
        if recipe.hardware.gpus_per_node != profile.gpus_per_node:
            return (f"{source}: hardware.gpus_per_node: {recipe.hardware.gpus_per_node} but cluster "
                    f"{profile.name!r} has {profile.gpus_per_node} GPUs per node")
    for plan in plans:
        if plan.deployment is not None:
            problem = deployment_fit_problem(plan, profile, source)
            if problem is not None:
                return problem
        elif plan.resources.num_gpus > profile.task_gpus:
            return (f"{source}: points.{plan.name}: needs {plan.resources.num_gpus} GPUs, an array task on "
                    f"{profile.name!r} gets {profile.task_gpus}")
    return None


def deployment_fit_problem(plan: PointPlan, profile: ClusterProfile, source: str) -> str | None:
    """A deployment takes whole nodes of `gpus_per_node` GPUs: every worker's tp x pp x pcp within its nodes."""
    dep = plan.deployment
    assert dep is not None
    if profile.launcher != "pyxis":
        return (f"{source}: deployment: cluster {profile.name!r} runs servers with container.runtime "
                f"{profile.container.runtime}, which cannot place a deployment's processes on their nodes; "
                "a deployment needs runtime pyxis (one srun step per node)")
    for role in dep.roles:
        room = role.nodes_per_worker * profile.gpus_per_node
        if role.gpus_per_worker > room:
            return (f"{source}: points.{plan.name}: a {role.role} worker needs {role.gpus_per_worker} GPUs, its "
                    f"{role.nodes_per_worker} node(s) on {profile.name!r} have {room}")
    return None


def deployment_nodes(plans: list[PointPlan]) -> int | None:
    """Nodes of the sweep's deployment (every point plans the same shape); None without a deployment."""
    counts = {p.deployment.nodes for p in plans if p.deployment is not None}
    if not counts:
        return None
    if len(counts) > 1 or any(p.deployment is None for p in plans):
        raise UserError("points plan deployments of different sizes; one sweep runs one deployment shape")
    return counts.pop()


def image_file(profile: ClusterProfile, image: str) -> str | None:
    """Where the cached image of `image` lives, or None when the runtime takes the reference as is."""

    cache = profile.container.image_cache_dir
    if cache is None or profile.container.runtime not in ("pyxis", "enroot", "apptainer"):
        return None
    return str(cache_path(Path(cache), image, profile.container.runtime, profile.cpu_arch))


def sweep_plan(plans: list[PointPlan], profile: ClusterProfile, out_dir: Path, ready_timeout_s: float,
               overrides: list[str], thresholds: Thresholds | None = None, *, variant: str | None = None,
               tag: str | None = None, note: str | None = None,
               stall_timeout_s: float | None = None, reuse_deployment: bool = False) -> SweepPlanFile:
    images = {p.image for p in plans}
    if len(images) != 1:
        raise UserError(f"points use several images ({', '.join(sorted(images))}); one sweep runs one image")
    return SweepPlanFile(out_dir=str(out_dir), launcher=profile.launcher, ready_timeout_s=ready_timeout_s,
                         thresholds=thresholds or Thresholds(), mounts=list(profile.default_mounts),
                         image_path=image_file(profile, plans[0].image), gpus=None, overrides=overrides,
                         variant=variant, tag=tag, note=note, points=plans, stall_timeout_s=stall_timeout_s,
                         reuse_deployment=reuse_deployment)


def sbatch_argv(profile: ClusterProfile, *, job_name: str, n_tasks: int, out_dir: Path, script: Path,
                throttle: int | None = None, time_limit: str | None = None,
                signal_margin_s: int | None = None, comment: str | None = None,
                nodes: int | None = None) -> list[str]:
    """The exact sbatch command: one job array, one task per point (or one task for every point of a reused
    deployment). A task is one node with the profile's GPUs per task, or, for a deployment of `nodes` nodes, an
    allocation of that many whole nodes (one task per node, every GPU of each)."""
    if n_tasks < 1:
        raise UserError("nothing to submit: no points selected")
    throttle = throttle if throttle is not None else profile.max_parallel
    array = f"0-{n_tasks - 1}" + (f"%{throttle}" if throttle and n_tasks > 1 else "")
    gpus = profile.task_gpus if nodes is None else profile.gpus_per_node
    gpu_opt = f"--gres=gpu:{gpus}" if profile.gpu_directive == "gres" else f"--gpus-per-node={gpus}"
    shape = ["--nodes=1", "--ntasks=1"] if nodes is None else [f"--nodes={nodes}", "--ntasks-per-node=1"]
    argv = ["sbatch", "--parsable", f"--job-name={job_name}", f"--array={array}", *shape, gpu_opt]
    if profile.exclusive:
        argv.append("--exclusive")
    argv += [f"--time={time_limit or profile.time_limit}",
             f"--signal=B:USR1@{signal_margin_s if signal_margin_s is not None else profile.signal_margin_s}",
             f"--output={out_dir / 'slurm' / '%A_%a.out'}", f"--chdir={out_dir}"]
    for key in ("account", "partition", "qos"):
        value = getattr(profile, key)
        if value:
            argv.append(f"--{key}={value}")
    if comment:
        argv.append(f"--comment={comment}")
    argv += list(profile.sbatch_directives)
    argv.append(str(script))
    for token in argv:
        if any(c in token for c in "\n\r\0"):
            raise UserError(f"sbatch option {token!r}: contains a line break")
    return argv


def batch_script(python: str, plan_file: Path, sbatch: list[str], profile: ClusterProfile, image: str) -> str:
    """The batch script: every value shlex-quoted; the last line execs the point runner."""
    lines = ["#!/bin/bash",
             "# One array task = one point of the sweep (or, with --reuse-deployment, every point on one "
             "deployment); all logic is in `harness run-point`.",
             "# Submitted as:",
             "#   " + shlex.join(sbatch),
             "set -eu"]
    cached = image_file(profile, image)
    if cached is not None:
        ensure = [python, "-m", "slurm.images", "ensure", "--runtime", profile.container.runtime,
                  "--arch", profile.cpu_arch, image, cached]
        lines.append(shlex.join(ensure))
    lines.append("exec " + shlex.join([python, "-m", "harness", "run-point", str(plan_file)]))
    return "\n".join(lines) + "\n"


def submission_record(job_id: str, *, cluster: str, recipe: str, plan_file: Path, script: Path,
                      sbatch: list[str], plans: list[PointPlan], out_dir: Path, staged: dict[str, str],
                      submitted_ns: int, evaluation: Any = None, variant: str | None = None,
                      reuse_deployment: bool = False) -> dict[str, Any]:
    """The job as later commands see it; an eval task (`--with-eval`) is listed after the points. With a reused
    deployment every point maps to task 0, the one task that runs them all in order."""

    points = [{"task_id": 0 if reuse_deployment else i, "name": p.name, "conc": p.conc, "point_dir": str(point_dir(out_dir, p, variant)),
               "result": RECORD_FILE, "row": f"{result_name(p)}.json"} for i, p in enumerate(plans)]
    if evaluation is not None:
        points.append({"task_id": len(plans), "name": f"eval-{evaluation.plan.name}", "conc": evaluation.plan.conc,
                       "point_dir": str(eval_dir(out_dir, evaluation.plan)), "result": row_name(evaluation.task),
                       "kind": "eval"})
    return {"job_id": job_id, "cluster": cluster, "recipe": recipe, "out_dir": str(out_dir),
            "plan_file": str(plan_file), "script": str(script), "sbatch": sbatch, "staged_models": staged,
            "submitted_ns": submitted_ns, "variant": variant, "reuse_deployment": reuse_deployment,
            "points": points}
