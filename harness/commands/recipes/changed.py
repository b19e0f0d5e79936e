"""`harness changed --base REV [--json]`: config keys whose points differ from the base revision.

Points are identified by (fingerprint, concurrency, image); recipes are `recipes/*.yaml` of the repository
at REV and in the work tree, both planned by the current harness. Added and removed recipes count as
changed; so does a recipe whose golden curve file changed. One line per changed key; exit status 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.artifacts import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base", metavar="REV", required=True, help="git revision to compare with")
    parser.add_argument("--repo", metavar="DIR", default=".", help="repository (default: the current directory)")
    parser.add_argument("--json", action="store_true", help="print JSON: config-key, base/head/added/removed points")


def main(args: argparse.Namespace) -> int:
    from harness.check import gitrev
    from harness.check.changed import changed_keys

    root = gitrev.repo_root(Path(args.repo).resolve())
    changes, warnings = changed_keys(root, args.base)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        print_json({"base": args.base, "changed": [c.to_json() for c in changes], "warnings": warnings})
        return 0
    if not changes:
        print(f"no config key changed since {args.base}")
    for change in changes:
        print(f"{change.config_key}  {change.summary()}")
    return 0
