"""`harness check RECIPE... [--json]`: the review rules every recipe must pass.

One line per rule with PASS, FAIL, WARN or N/A and the evidence (which point, which inherited setting).
Exit status 1 when any rule FAILs, 2 when a recipe cannot be read, 0 otherwise (warnings included).
"""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipes", nargs="*", metavar="RECIPE", help="recipe files to check")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument("--rules", action="store_true", help="list the rules and their rationale, then exit")


def main(args: argparse.Namespace) -> int:
    from harness.check import RULES, check_recipe, render_text
    from harness.errors import UserError

    if args.rules:
        for rule in RULES:
            print(f"{rule.id:<22} {rule.rationale}")
        return 0
    if not args.recipes:
        raise UserError("harness check: give at least one recipe file, e.g. recipes/quickstart-sim.yaml")
    reports = [check_recipe(path) for path in args.recipes]
    failed = any(r.status == "FAIL" for r in reports)
    if args.json:
        print(json.dumps({"status": "FAIL" if failed else "PASS",
                          "recipes": [r.to_json() for r in reports]}, indent=2))
    else:
        for report in reports:
            print("\n".join(render_text(report)))
    return 1 if failed else 0
