"""`harness eval RECIPE [--point cN]`: an accuracy eval (lm-eval GSM8K) of a point's serving config on a
fresh server, its InferenceX eval row, and the gate against the threshold.

Exit status: 0 at or above the threshold, 3 below it, 1 failed (server died, lm-eval crashed, nothing
scored), 2 bad input, 128+N cancelled by signal N.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.evals.run import EvalOutcome

TASKS = ("gsm8k",)


def add_eval_options(parser: argparse.ArgumentParser) -> None:
    """Options of the eval shared by `eval`, `sweep --with-eval` and `submit --with-eval`."""
    parser.add_argument("--task", default="gsm8k", choices=TASKS, help="eval task (default gsm8k)")
    parser.add_argument("--limit", type=int, help="evaluate only the first N problems (smoke runs)")
    parser.add_argument("--min-score", type=float,
                        help="threshold when harness/evals/thresholds.yaml has none for the task")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.commands.running.run import positive_seconds
    from launchers import launcher_kinds

    parser.add_argument("recipe", help="recipe YAML file")
    parser.add_argument("--point", help="the point whose serving config is evaluated (default: highest concurrency)")
    add_eval_options(parser)
    parser.add_argument("--out", default="runs", type=Path, help="output directory (default: runs)")
    parser.add_argument("--launcher", default="local", choices=launcher_kinds(), help="how the server starts")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SETTING=VALUE",
                        help="override a setting, e.g. sim_args.sim-eval-accuracy=0.8 (recorded)")
    parser.add_argument("--ready-timeout", type=float, help="seconds to wait for the server to become ready")
    parser.add_argument("--eval-timeout", type=positive_seconds, default=6 * 3600.0, metavar="S",
                        help="seconds lm-eval may run (default 21600)")
    parser.add_argument("--stall-timeout", type=positive_seconds, metavar="S",
                        help="fail the eval as server_stalled after S seconds without progress while requests are "
                             "in flight, or as client_stalled after S seconds without an answer, a log line, "
                             "output or CPU time of lm-eval while none is in flight "
                             "(default: a tenth of --eval-timeout, 60 to 300 s)")
    parser.add_argument("--mount", action="append", default=[], help="container mount SRC:DST (repeatable)")
    parser.add_argument("--image-path", help="local .sqsh/.sif image to use instead of pulling the image")


def check_eval_args(args: argparse.Namespace) -> None:
    from harness.errors import UserError

    if args.limit is not None and args.limit < 1:
        raise UserError("--limit: expected a positive number of problems")
    if args.min_score is not None and not 0.0 <= args.min_score <= 1.0:
        raise UserError("--min-score: expected a score in [0, 1]")


def main(args: argparse.Namespace) -> int:
    from harness.evals.plan import eval_task
    from harness.evals.run import options_for, run_eval
    from harness.point.servers.serve import ServerOptions
    from harness.recipe.load import load_recipe

    check_eval_args(args)
    task = eval_task(args.recipe, [args.point] if args.point else None, args.task, args.limit, args.min_score,
                     args.overrides)
    task = task.model_copy(update={"eval_timeout_s": args.eval_timeout})
    ready = args.ready_timeout or load_recipe(args.recipe).server.ready_timeout_s
    server = ServerOptions(out_dir=args.out, launcher=args.launcher, ready_timeout_s=ready, mounts=tuple(args.mount),
                           image_path=args.image_path, stall_timeout_s=args.stall_timeout)
    outcome = run_eval(task.plan, options_for(task, server))
    print(describe_eval(outcome), flush=True)
    return outcome.exit_status


def describe_eval(o: EvalOutcome) -> str:
    r = o.result
    sim = (f" [partial: --limit {r['limit']}]" if r.get("partial") else "") + (" (simulated)" if r["simulated"] else "")
    lines = [f"{o.eval_dir}: {o.state}" + (f" ({o.reason})" if o.reason else "")]
    if r["score"] is not None:
        gate = ("FAIL (below threshold)" if not r["passed"] else
                "PARTIAL (at or above threshold on part of the test split: not an acceptance)"
                if r.get("partial") else "PASS")   # as the report and `harness check` judge it
        lines.append(f"  {r['task']} {r['score_name']} = {r['score']:.4f} ± {_se(r['score_se'])} "
                     f"(n={r['n_eff']}){sim}; threshold {r['min_score']:.2f} ({r['threshold_source']}): {gate}")
    else:
        lines.append(f"  {r['task']}: no score; threshold {r['min_score']:.2f} ({r['threshold_source']})")
    if r["row"]:
        lines.append(f"  row: {o.eval_dir / r['row']}")
    return "\n".join(lines)


def _se(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, float | int) else str(value)
