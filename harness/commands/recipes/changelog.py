"""`harness changelog validate [--base REV] [FILE]`: check perf-changelog.yaml.

Checks the entry schema, byte hygiene (UTF-8, LF, no tabs, no trailing whitespace, final newline), that
entries added since REV name config keys of recipes under recipes/, and with --base that the file only
grew by appending (no earlier entry edited, moved or deleted), and that the points of every config key an
`append-only: true` entry added since REV names only grew (InferenceX Check 12, `harness.check.append_only`). Prints
every problem, one per line; exit
status 2 when there is any (like every loader's mistakes) or when the file or the revision cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.changelog import ChangelogEntry


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="changelog_command", metavar="ACTION", required=True)
    p = sub.add_parser("validate", help="schema, byte hygiene and append-only check of perf-changelog.yaml")
    p.add_argument("file", nargs="?", default="perf-changelog.yaml", help="changelog file (default: %(default)s)")
    p.add_argument("--base", metavar="REV", help="git revision to compare with (append-only check)")
    p.add_argument("--recipes", metavar="DIR", help="recipes directory whose config keys entries may name "
                                                    "(default: recipes/ beside the changelog)")


def main(args: argparse.Namespace) -> int:
    from harness import changelog
    from harness.check import gitrev
    from harness.inputs.yaml_input import read_bytes

    path = Path(args.file)
    data = read_bytes(path, "changelog")
    base, base_name = None, "the base revision"
    if args.base:
        root = gitrev.repo_root(path.resolve().parent)
        commit = gitrev.resolve(root, args.base)
        rel = path.resolve().relative_to(root).as_posix()
        base, base_name = gitrev.show(root, commit, rel) or b"", args.base
    recipes = Path(args.recipes) if args.recipes else path.resolve().parent / "recipes"
    known = changelog.recipe_config_keys(recipes) if recipes.is_dir() else None
    entries, problems = changelog.validate(data, str(args.file), base, base_name, known)
    if args.base and not problems:
        problems = _append_only(root, args.base, entries, base or b"", base_name, str(args.file))
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        return 2
    since = f"; compared with {args.base}" if args.base else ""
    print(f"{args.file}: OK, {len(entries)} entries{since}")
    return 0


def _append_only(root: Path, base_rev: str, entries: list[ChangelogEntry], base: bytes, base_name: str,
                 source: str) -> list[str]:
    """Check 12 on the entries added since the base (their config keys' points, as `harness changed` reads them)."""
    from harness import changelog
    from harness.check import append_only
    from harness.check.changed import changed_keys

    try:
        first_new = len(changelog.parse_entries(base.decode("utf-8", errors="replace"), base_name)) if base else 0
    except changelog.ChangelogError:
        first_new = 0
    new = list(enumerate(entries))[first_new:]
    if not any(entry.append_only for _, entry in new):
        return []
    changes, _ = changed_keys(root, base_rev)
    return append_only.problems(new, changes, source)
