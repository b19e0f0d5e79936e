"""`harness preflight RECIPE --cluster PROFILE [--json]`: check a sweep before any GPU hour is spent.

One line per check (PASS, WARN or FAIL, a code, `file:key` and what was found); exit status 2 when any check
fails, else 0. `harness submit` runs the same checks before `sbatch` and refuses on a failure.
"""

from __future__ import annotations

import argparse

from harness.artifacts import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", help="recipe YAML file")
    parser.add_argument("--cluster", required=True, help="cluster profile YAML (clusters/*.yaml)")
    parser.add_argument("--points", nargs="+", help="only these points, e.g. c1 c8 or c1,c8 (default: all)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SETTING=VALUE",
                        help="override a setting first, as submit does")
    parser.add_argument("--time", dest="time_limit", help="time limit per point (overrides the profile)")
    parser.add_argument("--unofficial", action="store_true",
                        help="a smoke run (local corpus, short window): AIPerf runs with --unsafe-override and the "
                             "results are marked unofficial, never publishable")
    parser.add_argument("--python", help="interpreter the compute nodes run the harness with, as submit's --python "
                                         "(default: the profile's driver.python)")
    parser.add_argument("--ready-timeout", type=float, help="seconds to wait for each server to become ready")
    parser.add_argument("--probe", action="store_true",
                        help="also run two one-task probe steps on the partition (pyxis): is --container-image "
                             "applied on the compute nodes (the container's /etc/os-release), are the squash file "
                             "and the mount sources readable there")
    parser.add_argument("--json", action="store_true", help='print {"ok", "findings": [...]} as JSON')


def main(args: argparse.Namespace) -> int:
    from harness.preflight.run import cluster_preflight

    report = cluster_preflight(args.recipe, args.cluster, points=args.points, overrides=list(args.overrides),
                               time_limit=args.time_limit, ready_timeout_s=args.ready_timeout,
                               unofficial=args.unofficial, python=args.python, probe=args.probe)
    if args.json:
        print_json(report.to_json())
    else:
        failures = report.failures()
        if failures:   # the first cause first: the line a terminal or a CI log shows at a glance
            first = failures[0]
            print(f"preflight: FAIL: {first.code} {first.where}: {first.message}")
        for finding in report.findings:
            print(finding.line())
        print(f"preflight: {'FAIL' if failures else 'PASS'} ({len(failures)} failed of {len(report.findings)} "
              "checks)")
    return 0 if report.ok else 2
