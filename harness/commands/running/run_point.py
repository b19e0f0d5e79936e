"""`harness run-point SWEEP_PLAN.json`: run one point of a planned sweep (what a Slurm array task execs).

The file holds the options and every point's plan (`slurm.sweep_plan.SweepPlanFile`); the task picks its point
by `--task-id`, defaulting to `$SLURM_ARRAY_TASK_ID`. With an eval planned (`submit --with-eval`), the task
after the last point runs it. A plan of `submit --reuse-deployment` has one task: it runs every point in order on
one deployment (as `harness sweep --reuse-deployment` does), which it stops after the last point or a signal.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slurm.sweep_plan import SweepPlanFile


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plan_file", type=Path, help="sweep plan JSON written by `harness submit`")
    parser.add_argument("--task-id", type=int, help="index of the point (default: $SLURM_ARRAY_TASK_ID)")


def main(args: argparse.Namespace) -> int:
    from harness.point.state.watch import keep_early_walltime_signal

    keep_early_walltime_signal()   # first: Slurm's USR1 may come while the task still prepares its point
    from harness.errors import UserError
    from harness.point.outcome_text import describe_outcome
    from harness.point.run import run_point
    from slurm.sweep_plan import load_sweep_plan

    task = args.task_id
    if task is None:
        env = os.environ.get("SLURM_ARRAY_TASK_ID")
        if env is None:
            raise UserError("run-point: give --task-id or run inside a Slurm array task")
        task = int(env)
    sweep = load_sweep_plan(args.plan_file)
    if not 0 <= task < sweep.n_tasks:
        raise UserError(f"{args.plan_file}: task {task} out of range (0..{sweep.n_tasks - 1})")
    if sweep.reuse_deployment:
        from harness.point.sequence import run_sequence

        return run_sequence(sweep.points, sweep.options(), reuse_deployment=True).exit_status
    if task == len(sweep.points) and sweep.eval is not None:
        return _run_eval(sweep)
    outcome = run_point(sweep.points[task], sweep.options())
    print(describe_outcome(outcome), flush=True)
    return outcome.exit_status


def _run_eval(sweep: SweepPlanFile) -> int:
    from harness.commands.running.eval import describe_eval
    from harness.evals.run import options_for, run_eval

    assert sweep.eval is not None
    outcome = run_eval(sweep.eval.plan, options_for(sweep.eval, sweep.options()))
    print(describe_eval(outcome), flush=True)
    return outcome.exit_status
