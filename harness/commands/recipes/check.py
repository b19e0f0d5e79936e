"""`harness check RECIPE... [--json]`: the review rules every recipe must pass.

One line per rule with PASS, FAIL, WARN or N/A and the evidence (which point, which inherited setting).
With `--results DIR` the `accuracy-eval` rule also checks each curve's newest accuracy eval there
(`--waive-eval REASON` turns its FAIL into a recorded WARN), and the `publishable` rule checks that every point
there may be published (`--waive-unofficial REASON` likewise).
Exit status 1 when any rule FAILs, 2 when a recipe cannot be read, 0 otherwise (warnings included).

`harness check --results PATH...` without a recipe judges measured points instead: InferenceX's Check 14 per
curve (`harness.check.measured`), exit status 0 when every curve passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from harness.artifacts import print_json

if TYPE_CHECKING:
    from harness.check.rule import Rule


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipes", nargs="*", metavar="RECIPE", help="recipe files to check")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument("--rules", action="store_true", help="list the rules and their rationale, then exit")
    parser.add_argument("--results", action="extend", nargs="+", type=Path, default=[], metavar="PATH",
                        help="run directories or InferenceX rows holding the curves' results: with recipes, also "
                             "check their accuracy evals and publishability; alone, count each curve's measured "
                             "Pareto frontier (InferenceX Check 14)")
    parser.add_argument("--cluster", type=Path, metavar="PROFILE",
                        help="cluster profile whose host_dram caps the KV-offload DRAM (rule kv-offload-dram); "
                             "without it only the 3 TB cap is checked")
    parser.add_argument("--waive-eval", metavar="REASON",
                        help="accept a missing, failed or below-threshold eval, recording REASON (needs --results)")
    parser.add_argument("--waive-unofficial", metavar="REASON",
                        help="accept points that are not publishable, recording REASON (needs --results)")


def main(args: argparse.Namespace) -> int:
    from harness.check import RULES, check_recipe, render_text
    from harness.check.measured import ParetoCoverage
    from harness.check.rules_eval import AccuracyEval
    from harness.check.rules_submission import Publishable
    from harness.errors import UserError

    if args.rules:
        for rule in (*RULES, AccuracyEval([]), Publishable([]), ParetoCoverage([])):
            print(f"{rule.id:<22} {rule.described}")
        return 0
    if not args.recipes and args.results and args.waive_eval is None and args.waive_unofficial is None:
        return _measured(args.results, args.json)
    if not args.recipes:
        raise UserError("harness check: give at least one recipe file, e.g. recipes/quickstart-sim.yaml")
    for flag, waiver in (("--waive-eval", args.waive_eval), ("--waive-unofficial", args.waive_unofficial)):
        if waiver is not None and (not args.results or not waiver.strip()):
            raise UserError(f"{flag}: needs --results DIR and a non-empty reason")
    for d in args.results:
        if not d.is_dir():
            raise UserError(f"--results {d}: no such directory")
    rules = RULES if args.cluster is None else _with_cluster(RULES, args.cluster)
    if args.results:
        rules = (*rules, AccuracyEval(args.results, args.waive_eval), Publishable(args.results, args.waive_unofficial),
                 ParetoCoverage(args.results))
    reports = [check_recipe(path, rules) for path in args.recipes]
    failed = any(r.status == "FAIL" for r in reports)
    if args.json:
        print_json({"status": "FAIL" if failed else "PASS", "recipes": [r.to_json() for r in reports]})
    else:
        for report in reports:
            print("\n".join(render_text(report)))
    return 1 if failed else 0


def _with_cluster(rules: tuple[Rule, ...], path: Path) -> tuple[Rule, ...]:
    """The rules with `kv-offload-dram` reading the host DRAM of the cluster profile at `path`."""
    from harness.check.rules_review import KvOffloadDram
    from harness.errors import UserError
    from slurm.profile import load_profile

    profile = load_profile(path)
    if profile.host_dram is None:
        raise UserError(f"--cluster {path}: the profile has no host_dram (the nodes' CPU DRAM); add "
                        "`host_dram: {gb: N, system: hgx|nvl72}`")
    return tuple(KvOffloadDram(profile.host_dram, str(path)) if isinstance(r, KvOffloadDram) else r for r in rules)


def _measured(paths: list[Path], as_json: bool) -> int:
    """Check 14 on the measured points under `paths`: 0 when every curve passes, 1 otherwise."""
    from harness.check import measured

    coverages = measured.measured_coverage(paths)
    if as_json:
        print_json(measured.render_json(coverages))
    else:
        print("\n".join(measured.render_text(coverages)))
    return 0 if measured.passed(coverages) else 1
