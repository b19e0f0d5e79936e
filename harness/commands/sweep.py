"""`harness sweep RECIPE`: every point (or `--points`), one fresh server each, then the curve report."""

from __future__ import annotations

import argparse
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.commands.run import add_point_options

    add_point_options(parser)
    parser.add_argument("--points", nargs="+", help="only these points, e.g. c1 c8 (default: all)")
    parser.add_argument("--force", action="store_true", help="re-run points already completed in --out")
    parser.add_argument("--no-report", action="store_true", help="skip the report at the end")


def main(args: argparse.Namespace) -> int:
    from harness.commands.run import describe_outcome, options_from_args, overrides_with_duration
    from harness.point.result import point_dir
    from harness.point.run import EXIT_FAILED, EXIT_INVALID, EXIT_VALID, run_point
    from harness.point.status import read_status
    from harness.recipe.points import load_plans

    recipe, plans = load_plans(args.recipe, args.points, overrides_with_duration(args))
    options = options_from_args(args, recipe)
    worst = EXIT_VALID
    t0 = time.monotonic()
    for i, plan in enumerate(plans, 1):
        pdir = point_dir(args.out, plan)
        prior = read_status(pdir)
        if not args.force and prior and prior.get("state") == "completed" \
                and prior.get("fingerprint") == plan.fingerprint:
            print(f"[{i}/{len(plans)}] c{plan.conc}: already completed in {pdir} (use --force to re-run)",
                  flush=True)
            continue
        print(f"[{i}/{len(plans)}] c{plan.conc}: starting ({plan.client.duration_s:.0f} s window, "
              f"{time.monotonic() - t0:.0f} s elapsed)", flush=True)
        outcome = run_point(plan, options)
        print(describe_outcome(outcome), flush=True)
        if outcome.state == "cancelled":
            print("sweep cancelled", flush=True)
            return outcome.exit_status
        if outcome.exit_status == EXIT_FAILED:
            worst = EXIT_FAILED
        elif outcome.exit_status == EXIT_INVALID and worst == EXIT_VALID:
            worst = EXIT_INVALID
    if not args.no_report:
        _report(args, recipe.config_key)
    return worst


def _report(args: argparse.Namespace, config_key: str) -> None:
    from harness.report import build_report, render_table

    curve_dir = args.out / config_key
    outputs = build_report([curve_dir], curve_dir / "report")
    for curve in outputs.curves:  # the curves the report was built from: results are read once
        print()
        print(render_table(curve.points))
    print()
    for png in outputs.png_paths:
        print(f"plot:   {png}")
    print(f"report: {outputs.html_path}")
    print(f"pr summary: {outputs.markdown_path}")
