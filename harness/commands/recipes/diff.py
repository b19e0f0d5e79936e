"""`harness diff OLD NEW`: per-point changes between two versions of a recipe (paths or `REV:path`),
as a markdown list ready to paste into a pull request."""

from __future__ import annotations

import argparse
import sys

from harness.artifacts import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", help="old recipe: a path or REV:path (e.g. HEAD~1:recipes/x.yaml)")
    parser.add_argument("new", help="new recipe: a path or REV:path")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def main(args: argparse.Namespace) -> int:
    from harness.recipe.diff import diff_specs

    result = diff_specs(args.old, args.new)
    if args.json:
        print_json(result.model_dump(mode="json"))
    else:
        sys.stdout.write(result.render())
    return 0
