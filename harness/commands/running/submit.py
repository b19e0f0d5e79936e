"""`harness submit RECIPE --cluster PROFILE`: the recipe's points as one Slurm job array.

Prints the job id (stdout, alone on its line). `--wait` follows the job to its end; `--json` prints
`{"job_id", "out_dir", "points": [{"conc", "task_id", "state", "exit_code", "result", ...}]}` (with
`--wait`, the final states). Exit status with `--wait`: 0 when every point (and the eval, with `--with-eval`)
completed with its result, 3 when they did but the eval scored below its threshold or, with `--fail-on-invalid`,
a point's verdict is invalid, else 1.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.artifacts import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", help="recipe YAML file")
    parser.add_argument("--cluster", required=True, help="cluster profile YAML (clusters/*.yaml)")
    parser.add_argument("--points", nargs="+", help="only these points, e.g. c1 c8 or c1,c8 (default: all)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SETTING=VALUE",
                        help="override a setting, e.g. args.hicache-size=160 (recorded in the result)")
    parser.add_argument("--duration", type=float, help="profiling window in seconds (overrides client.duration_s)")
    parser.add_argument("--unofficial", action="store_true",
                        help="a smoke run (local corpus, short window): AIPerf runs with --unsafe-override and the "
                             "results are marked unofficial, never publishable")
    parser.add_argument("--out", type=Path, help="sweep output directory on shared storage "
                                                 "(default: runs/slurm/<config_key>-<UTC time>)")
    parser.add_argument("--throttle", type=int, help="at most N points at once (the array's %%N)")
    parser.add_argument("--time", dest="time_limit", help="time limit per point (overrides the profile)")
    parser.add_argument("--signal-margin", type=int, help="seconds before the time limit that USR1 arrives")
    parser.add_argument("--ready-timeout", type=float, help="seconds to wait for each server to become ready")
    parser.add_argument("--require-power", action="store_true", help="a point without valid power is invalid")
    from harness.commands.running.run import add_stall_option

    add_stall_option(parser)
    parser.add_argument("--python", help="interpreter the compute nodes run the harness with (default: the profile's "
                                         "driver.python; preflight checks the same one)")
    parser.add_argument("--reuse-deployment", action="store_true",
                        help="a recipe with a deployment section: ONE task (an allocation of the deployment's "
                             "nodes) runs every point in order on one deployment, as `harness sweep "
                             "--reuse-deployment` does")
    from harness.commands.running.sweep import add_with_eval

    add_with_eval(parser)
    parser.add_argument("--no-preflight", action="store_true",
                        help="submit without `harness preflight`'s checks (e.g. to test the walltime margin)")
    parser.add_argument("--dry-run", action="store_true", help="write the plan and script, print the sbatch "
                                                               "command, submit nothing")
    parser.add_argument("--wait", action="store_true", help="follow the job until it ends, then build the report")
    parser.add_argument("--json", action="store_true", help="print the job and its points as JSON")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between polls with --wait")
    parser.add_argument("--cancel-on-interrupt", action="store_true",
                        help="with --wait: Ctrl-C / SIGTERM cancels the job")
    from harness.commands.running.follow import add_fail_on_invalid

    add_fail_on_invalid(parser, "with --wait: ")
    from harness.commands.running.run import add_label_options

    add_label_options(parser)


def main(args: argparse.Namespace) -> int:
    import shlex
    import sys
    import time

    from harness.commands.running.run import warn_abbreviated_flags
    from harness.errors import UserError
    from harness.recipe.load import load_recipe
    from harness.submission import PreflightFailed, SubmitRequest, prepare, submit
    from slurm import query
    from slurm.follow import follow
    from slurm.progress import exit_status, job_json, point_views, render_table

    if args.fail_on_invalid and not args.wait:
        raise UserError("--fail-on-invalid: only with --wait (or give it to `harness follow JOB`)")
    if args.throttle is not None and args.throttle < 1:
        raise UserError("--throttle: expected a positive number of points")
    if args.with_eval:
        from harness.commands.running.eval import check_eval_args

        check_eval_args(args)
    overrides = [*args.overrides, *([f"client.duration_s={args.duration:g}"] if args.duration else [])]
    req = SubmitRequest(recipe=args.recipe, cluster=args.cluster, points=args.points, overrides=tuple(overrides),
                        out_dir=args.out, throttle=args.throttle, time_limit=args.time_limit,
                        signal_margin_s=args.signal_margin, ready_timeout_s=args.ready_timeout,
                        stall_timeout_s=args.stall_timeout,
                        require_power=args.require_power, python=args.python, with_eval=args.with_eval,
                        eval_task=args.task, eval_limit=args.limit, eval_min_score=args.min_score,
                        preflight=not args.no_preflight, tag=args.tag, note=args.note, unofficial=args.unofficial,
                        reuse_deployment=args.reuse_deployment)
    warn_abbreviated_flags(args.recipe, load_recipe(args.recipe).server.sglang_version, args.overrides)

    def warn(line: str) -> None:
        print(f"preflight: {line}", file=sys.stderr)

    try:
        prep = prepare(req, time.time_ns()) if args.dry_run else None
    except PreflightFailed as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        print("preflight failed: nothing submitted (details: harness preflight RECIPE --cluster PROFILE)",
              file=sys.stderr)
        return 2
    if prep is not None:
        for line in prep["warnings"]:
            warn(line)
        if args.json:
            print_json({"dry_run": True, "sbatch": prep["sbatch"], "script": str(prep["script"]),
                        "plan": str(prep["plan_file"]), "warnings": list(prep["warnings"])})
            return 0
        print(shlex.join(prep["sbatch"]))
        print(f"script: {prep['script']}\nplan:   {prep['plan_file']}", file=sys.stderr)
        return 0
    try:
        record = submit(req, warn)
    except PreflightFailed as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        print("preflight failed: nothing submitted", file=sys.stderr)
        return 2
    except query.SlurmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not args.json:
        print(record["job_id"], flush=True)
    print(f"submitted job {record['job_id']}: {len(record['points'])} points -> {record['out_dir']}",
          file=sys.stderr, flush=True)
    if args.wait:
        views = follow(record, interval_s=args.interval, out=sys.stderr if args.json else sys.stdout,
                       cancel_on_interrupt=args.cancel_on_interrupt)
        status = exit_status(views, args.fail_on_invalid)
    else:
        views = point_views(record, query.job_task_states(record)[0])
        status = 0
    report_lines: list[str] = []
    html = None
    if args.wait:
        from slurm.report import job_report

        report_lines, html = job_report(record)
    if args.json:
        print("\n".join(report_lines), file=sys.stderr)
        print_json({**job_json(record, views), **({"report": str(html) if html else None}
                                                 if args.wait else {})})
    elif args.wait:
        print(render_table(views))
        print("\n".join(report_lines))
    return status
