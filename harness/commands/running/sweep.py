"""`harness sweep RECIPE`: every point (or `--points`), one fresh server each, then the curve report."""

from __future__ import annotations

import argparse
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.evals.plan import EvalTask
    from harness.point.servers.serve import ServerOptions
    from harness.report.analysis.curves import Curve


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.commands.running.judging import add_slo_option
    from harness.commands.running.run import add_point_options

    add_point_options(parser)
    add_slo_option(parser)
    parser.add_argument("--points", nargs="+", help="only these points, e.g. c1 c8 or c1,c8 (default: all)")
    parser.add_argument("--force", action="store_true", help="re-run points already completed in --out")
    parser.add_argument("--no-report", action="store_true", help="skip the report at the end")
    parser.add_argument("--reuse-deployment", action="store_true",
                        help="a recipe with a deployment section: keep one deployment up for every point (each "
                             "point waits until its workers are idle; AIPerf's cache bust keeps the points apart)")
    add_with_eval(parser)


def add_with_eval(parser: argparse.ArgumentParser) -> None:
    from harness.commands.running.eval import add_eval_options

    parser.add_argument("--with-eval", action="store_true",
                        help="also run the accuracy eval (lm-eval GSM8K) at the highest selected concurrency")
    add_eval_options(parser)


def main(args: argparse.Namespace) -> int:
    from harness.commands.running.run import (
        check_out_dir,
        engine_rehearsal,
        local_preflight,
        options_from_args,
        overrides_with_duration,
        warn_abbreviated_flags,
        warn_idle_overrides,
    )
    from harness.point.record.result import point_dir
    from harness.point.run import EXIT_FAILED, EXIT_INVALID
    from harness.point.sequence import run_sequence
    from harness.point.servers.deployment_reuse import check_reusable
    from harness.point.state.ownership import check_free
    from harness.point.state.variant import VARIANTS_DIR
    from harness.recipe.points import check_placeable, load_plans

    recipe, plans = load_plans(args.recipe, args.points, overrides_with_duration(args), args.unofficial)
    warn_abbreviated_flags(args.recipe, recipe.server.sglang_version, args.overrides)
    warn_idle_overrides(args.recipe, args.points, overrides_with_duration(args), args.unofficial, plans,
                        args.overrides)
    options = options_from_args(args, recipe)
    check_placeable(plans, options.launcher, args.recipe)
    if args.reuse_deployment:
        check_reusable(plans)
    for plan in plans:   # another writer of any of these points: refused at once, naming it
        check_free(point_dir(args.out, plan, options.variant))
    rehearse = engine_rehearsal("sweep", args, recipe, list(args.points or []))
    plans = local_preflight(args.recipe, recipe, plans, args.corpus_cache, rehearse, args.launcher)
    check_out_dir(args.out)
    evaluation = _eval_task(args)
    if options.variant:
        print(f"variant {options.variant} -> {args.out / recipe.config_key / VARIANTS_DIR / options.variant} "
              "(the recipe's own points are left as they are)", flush=True)
    t0 = time.monotonic()
    done = run_sequence(plans, options, reuse_deployment=args.reuse_deployment, force=args.force, t0=t0,
                        rehearse=rehearse)
    worst = done.exit_status
    if done.stopped:
        return worst
    if evaluation is not None:
        status = _run_eval(args, evaluation, options, t0)
        if status > 128:
            print("sweep cancelled", flush=True)
            return status
        if status == EXIT_FAILED or worst == EXIT_FAILED:
            worst = EXIT_FAILED
        elif status == EXIT_INVALID:   # the eval completed below its threshold
            worst = EXIT_INVALID
    if not args.no_report:
        _report(args, recipe.config_key)
    if options.variant:
        from harness.commands.running.run import baseline_command, compare_hint

        print(compare_hint(args.out / recipe.config_key, options.variant,
                           baseline_command("sweep", args, list(args.points or []))))
    from harness.store.auto import ingest_after

    ingest_after([args.out / recipe.config_key])
    return worst


def _eval_task(args: argparse.Namespace) -> EvalTask | None:
    """The sweep's eval, planned (and its threshold resolved) before any point runs."""
    from harness.commands.running.eval import check_eval_args
    from harness.evals.plan import eval_task

    if not args.with_eval:
        return None
    check_eval_args(args)
    return eval_task(args.recipe, args.points, args.task, args.limit, args.min_score, list(args.overrides))


def _run_eval(args: argparse.Namespace, task: EvalTask, options: ServerOptions, t0: float) -> int:
    """The eval after the points, its server run as the points' were (launcher, mounts, timeouts)."""
    from harness.commands.running.eval import describe_eval
    from harness.evals.run import completed_before, eval_dir, options_for, run_eval

    if not args.force and completed_before(args.out, task.plan, task.task):
        print(f"[eval] c{task.plan.conc} {task.task}: already completed in {eval_dir(args.out, task.plan)} "
              "(use --force to re-run)", flush=True)
        return 0
    print(f"[eval] c{task.plan.conc} {task.task}: starting (sweep at {time.monotonic() - t0:.0f} s)", flush=True)
    outcome = run_eval(task.plan, options_for(task, options))
    print(describe_eval(outcome), flush=True)
    return outcome.exit_status


def _report(args: argparse.Namespace, config_key: str) -> None:
    from harness.report import build_report
    from harness.report.analysis.table import render_curve
    from harness.report.render.plain import plain

    curve_dir = args.out / config_key
    outputs = build_report([curve_dir], curve_dir / "report")
    from harness.report.results.evals import eval_lines

    for curve in outputs.curves:  # the curves the report was built from: results are read once
        print()
        print(plain(render_curve(curve)), end="")
        if args.with_eval:
            print("\n".join(plain(line) for line in eval_lines(curve.config_keys, outputs.evals, curve.simulated)))
    print()
    for png in outputs.png_paths:
        print(f"plot:   {png}")
    print(f"report: {outputs.html_path}")
    print(f"pr summary: {outputs.markdown_path}")
    print(f"csv:    {outputs.csv_path}")
    print(f"inside: {outputs.html_path.parent / 'inspect'}/ (a page per point, linked from the report)")
    hint = inspect_hint(outputs.curves)
    if hint:
        print(f"why the last point reads as it does: {hint}")


def _shown(path: Path) -> str:
    """`path` relative to the working directory where it lies below it (as the user named the run)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def inspect_hint(curves: list[Curve]) -> str | None:
    """`harness inspect` of the highest-concurrency point against the one below it, in the first curve with two
    points that have directories."""
    for curve in curves:
        own = sorted((p for p in curve.points if (p.point_dir / "status.json").exists()), key=lambda p: p.conc)
        if len(own) >= 2:
            return shlex.join(["harness", "inspect", _shown(own[-1].point_dir), "--vs", _shown(own[-2].point_dir)])
    return None
