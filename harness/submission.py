"""`harness submit`: a recipe's points as ONE Slurm job array on a cluster profile.

A recipe with a `deployment:` section gets tasks of N whole nodes (N = the deployment's nodes), its processes
placed by launcher pyxis; with `--reuse-deployment` the array has ONE such task that runs every point in order on
one deployment.

Writes, under the sweep's out dir: `slurm/plan-<stamp>.json` (the sweep plan every task reads),
`slurm/job-<stamp>.sh` (the tiny batch script), then runs one `sbatch --parsable` and records the job in
`.harness-jobs.json` (and the per-user index) so later commands can find and cancel it.

The plan on shared storage holds no secret: each secret value is a numbered placeholder (`<redacted:1>`,
`harness.redact.seal`) and the values travel in the job's environment (`HARNESS_SECRETS`, given to sbatch
only, which exports the submitting environment to the tasks); `harness run-point` puts them back.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import preflight
from harness.artifacts import write_sealed_json, write_text
from harness.errors import UserError
from harness.evals.plan import eval_task
from harness.inputs.yaml_input import load_yaml_file
from harness.point.record.validity import with_required_power
from harness.point.servers.deployment_reuse import check_reusable
from harness.point.state.variant import variant_name
from harness.preflight import files
from harness.preflight.aiperf_scenario import refuse_unless_accepted
from harness.preflight.files import with_corpus_cache
from harness.recipe.plan import PointPlan
from harness.recipe.points import load_plans
from harness.recipe.schema import Recipe
from launchers.base import check_engine
from slurm import jobs, query, render
from slurm.profile import check_time_limit, driver_python, load_profile
from slurm.sweep_plan import SECRETS_ENV


@dataclass(frozen=True)
class SubmitRequest:
    recipe: str
    cluster: str
    points: list[str] | None = None
    overrides: tuple[str, ...] = ()
    out_dir: Path | None = None
    throttle: int | None = None
    time_limit: str | None = None
    signal_margin_s: int | None = None
    ready_timeout_s: float | None = None
    stall_timeout_s: float | None = None
    require_power: bool = False
    python: str | None = None
    with_eval: bool = False
    eval_task: str = "gsm8k"
    eval_limit: int | None = None
    eval_min_score: float | None = None
    preflight: bool = True
    tag: str | None = None
    note: str | None = None
    unofficial: bool = False
    reuse_deployment: bool = False

    @property
    def variant(self) -> str | None:
        return variant_name(self.overrides, self.tag)


class PreflightFailed(Exception):
    """Preflight found problems; `lines` holds one line per failed check."""

    def __init__(self, lines: list[str]):
        super().__init__(lines[0] if lines else "preflight failed")
        self.lines = lines


def default_out_dir(config_key: str, now_ns: int) -> Path:
    stamp = datetime.fromtimestamp(now_ns / 1e9, tz=UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path("runs") / "slurm" / f"{config_key}-{stamp}"


def prepare(req: SubmitRequest, now_ns: int, loaded: tuple[Recipe, list[PointPlan]] | None = None) -> dict[str, Any]:
    """Validate everything and write the plan file and the batch script; nothing is submitted yet. `loaded`: the
    recipe and the plans to submit (a search's points at concurrencies of its own), instead of the recipe's
    points that `req` selects."""

    profile = load_profile(req.cluster)
    recipe, plans = loaded or load_plans(req.recipe, req.points, list(req.overrides), req.unofficial)
    check_deployment(plans, profile, req)
    if req.time_limit is not None:
        try:
            check_time_limit(req.time_limit)
        except ValueError as exc:
            raise UserError(f"--time {exc}") from None
    if req.preflight:
        report = preflight.cluster(recipe, plans, profile, load_yaml_file(req.cluster, "cluster profile")[0],
                                   recipe_src=str(req.recipe), cluster_src=str(req.cluster),
                                   time_limit=req.time_limit, ready_timeout_s=req.ready_timeout_s,
                                   python=req.python, reuse_deployment=req.reuse_deployment)
        if not report.ok:
            raise PreflightFailed([f.line() for f in report.failures()])
        plans, staged = report.plans, report.staged
        warnings = [f.line() for f in report.warnings()]
    else:
        warnings = []

        refuse_unless_accepted(plans, str(req.recipe))   # AIPerf's check is never skipped
        plans = with_corpus_cache(plans, Path(profile.corpus_cache) if profile.corpus_cache else None)
        render.check_fit(recipe, plans, profile, req.recipe)
        plans, staged = render.stage_plans(plans, profile.model_staging)
    if profile.secret_names:  # the task process redacts the profile's secret names too
        plans = [p.model_copy(update={"secret_names": [*p.secret_names, *profile.secret_names]}) for p in plans]

    check_engine(profile.launcher, recipe.engine, recipe.image)
    out_dir = (req.out_dir or default_out_dir(recipe.config_key, now_ns)).resolve()
    (out_dir / "slurm").mkdir(parents=True, exist_ok=True)
    stamp = datetime.fromtimestamp(now_ns / 1e9, tz=UTC).strftime("%Y%m%dT%H%M%S%fZ")
    plan_file = out_dir / "slurm" / f"plan-{stamp}.json"
    script = out_dir / "slurm" / f"job-{stamp}.sh"
    thresholds = with_required_power(recipe.validity, req.require_power)
    sweep = render.sweep_plan(plans, profile, out_dir, req.ready_timeout_s or recipe.server.ready_timeout_s,
                              list(req.overrides), thresholds, variant=req.variant, tag=req.tag, note=req.note,
                              stall_timeout_s=req.stall_timeout_s, reuse_deployment=req.reuse_deployment)
    sweep.slo, sweep.pricing = recipe.slo, recipe.pricing or profile.pricing   # each record's attainment and cost
    if req.with_eval:
        sweep.eval = _staged_eval(req, profile)
    sbatch = render.sbatch_argv(profile, job_name=f"harness-{recipe.config_key}", n_tasks=sweep.n_tasks,
                                out_dir=out_dir, script=script, throttle=req.throttle, time_limit=req.time_limit,
                                signal_margin_s=req.signal_margin_s, comment=f"harness sweep {out_dir}",
                                nodes=render.deployment_nodes(plans))
    python = driver_python(profile, req.python)
    secrets = write_sealed_json(plan_file, sweep.model_dump())
    write_text(script, render.batch_script(python, plan_file, sbatch, profile, plans[0].image))
    os.chmod(script, 0o755)
    return {"profile": profile.name, "plans": plans, "staged": staged, "out_dir": out_dir,
            "plan_file": plan_file, "script": script, "sbatch": sbatch, "eval": sweep.eval, "secrets": secrets,
            "warnings": warnings}


def check_deployment(plans: list[Any], profile: Any, req: SubmitRequest) -> None:
    """A deployment runs with launcher pyxis (one srun step per node of its allocation); `--reuse-deployment`
    needs every point to plan the same deployment and runs no eval task. One line each, before anything else."""

    if req.reuse_deployment:
        check_reusable(plans)
        if req.with_eval:
            raise UserError("--reuse-deployment with --with-eval: the eval starts its own server; submit it "
                            "separately (harness submit --with-eval without --reuse-deployment)")
    if any(p.deployment is not None for p in plans) and profile.launcher != "pyxis":
        raise UserError(f"{req.recipe}: deployment: cluster {profile.name!r} has container.runtime "
                        f"{profile.container.runtime}, which cannot place a deployment's processes on their nodes "
                        "(a deployment needs runtime pyxis: one srun step per node)")


def _staged_eval(req: SubmitRequest, profile: Any) -> Any:
    """The sweep's eval task, its plan pointed at the staged checkpoints like the points'."""

    task = eval_task(req.recipe, req.points, req.eval_task, req.eval_limit, req.eval_min_score, list(req.overrides))
    staged_plans, _ = render.stage_plans([task.plan], profile.model_staging)
    if req.preflight:  # the same checkpoint resolution as the points' (HF cache, full revision hashes)

        found, staged_plans = files.resolve_files(staged_plans, f"{req.recipe} (eval)",
                                                  in_container=profile.container.runtime != "none",
                                                  mounts=list(profile.default_mounts), hf_cache=profile.hf_cache,
                                                  hf_cache_src=f"{req.cluster}:hf_cache")
        failed = [f.line() for f in found if f.level == "fail"]
        if failed:
            raise PreflightFailed(failed)
    plan = staged_plans[0]
    return task.model_copy(update={"plan": plan.model_copy(
        update={"secret_names": [*plan.secret_names, *profile.secret_names]})})


def secrets_env(secrets: dict[str, str]) -> dict[str, str] | None:
    """sbatch's environment: ours plus the sealed plan's secret values (None: ours as is)."""
    import json

    return {**os.environ, SECRETS_ENV: json.dumps(secrets)} if secrets else None


def submit(req: SubmitRequest, warn: Callable[[str], None] = lambda line: None,
           loaded: tuple[Recipe, list[PointPlan]] | None = None) -> dict[str, Any]:
    """Prepare, run sbatch once, record the job; returns the submission record. Preflight's warnings go to
    `warn`, one line each. When sbatch refuses the job, the plan and script written for it are removed.
    `loaded`: as for `prepare`."""
    now = time.time_ns()
    prep = prepare(req, now, loaded)
    for line in prep["warnings"]:
        warn(line)
    try:
        job_id = query.sbatch(prep["sbatch"], env=secrets_env(prep["secrets"]))
    except query.SlurmError:
        for path in (prep["script"], prep["plan_file"]):
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            prep["script"].parent.rmdir()    # slurm/, when nothing else was ever submitted there
        raise
    record = render.submission_record(
        job_id, cluster=prep["profile"], recipe=str(Path(req.recipe).resolve()), plan_file=prep["plan_file"],
        script=prep["script"], sbatch=prep["sbatch"], plans=prep["plans"], out_dir=prep["out_dir"],
        staged=prep["staged"], submitted_ns=now, evaluation=prep["eval"], variant=req.variant,
        reuse_deployment=req.reuse_deployment)
    jobs.record_job(record)
    return record
