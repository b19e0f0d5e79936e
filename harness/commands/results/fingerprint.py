"""`harness fingerprint diff A B`: what differs between two worker fingerprints (files or point dirs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    d = sub.add_parser("diff", help="leaf-by-leaf differences, `key.path: old -> new` (per package for package "
                                     "lists), ignoring capture times, ports and pids; `identical` when none")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)


def _load(path: Path) -> dict[str, Any]:
    from harness.artifacts import read_json
    from harness.errors import UserError

    if path.is_dir():
        path = path / "fingerprint_agg_w0.json"
    if not path.exists():
        raise UserError(f"{path}: no fingerprint file")
    return read_json(path)


def main(args: argparse.Namespace) -> int:
    from harness.point.fingerprints.fingerprint_diff import fingerprint_diff

    lines = fingerprint_diff(_load(args.a), _load(args.b))
    print("\n".join(lines) if lines else "identical")
    return 1 if lines else 0
