"""`harness run-point SWEEP_PLAN.json`: run one point of a planned sweep (what a Slurm array task execs).

The file holds the options and every point's plan (`harness.sweep_plan.SweepPlanFile`); the task picks its point
by `--task-id`, defaulting to `$SLURM_ARRAY_TASK_ID`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plan_file", type=Path, help="sweep plan JSON written by `harness submit`")
    parser.add_argument("--task-id", type=int, help="index of the point (default: $SLURM_ARRAY_TASK_ID)")


def main(args: argparse.Namespace) -> int:
    from harness.commands.run import describe_outcome
    from harness.errors import UserError
    from harness.point.run import run_point
    from harness.sweep_plan import load_sweep_plan

    task = args.task_id
    if task is None:
        env = os.environ.get("SLURM_ARRAY_TASK_ID")
        if env is None:
            raise UserError("run-point: give --task-id or run inside a Slurm array task")
        task = int(env)
    sweep = load_sweep_plan(args.plan_file)
    if not 0 <= task < len(sweep.points):
        raise UserError(f"{args.plan_file}: task {task} out of range (0..{len(sweep.points) - 1})")
    outcome = run_point(sweep.points[task], sweep.options())
    print(describe_outcome(outcome), flush=True)
    return outcome.exit_status
