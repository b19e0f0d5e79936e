"""The command reference (`docs/cli.md`), generated from the command line itself so it cannot drift:
every subcommand's `--help`, nested subcommands included, at a fixed width of 100 columns.

    python -m harness.cli_reference > docs/cli.md
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from harness.cli import SUBCOMMANDS, _build_parser

WIDTH = "100"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(prefix: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    yield prefix, parser.format_help()
    for name, child in _subparsers(parser).items():
        yield from _helps(f"{prefix} {name}", child)


def reference() -> str:
    """The whole page: the top-level help, then each command's, in the CLI's own order."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        top, _ = _build_parser([])
        sections = [("harness", top.format_help())]
        for name in SUBCOMMANDS:
            parser, _ = _build_parser([name])
            sections += list(_helps(f"harness {name}", _subparsers(parser)[name]))
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before
    out = ["# Command reference", "",
           "Every command's `--help`, generated from the command line itself "
           "(`python -m harness.cli_reference > docs/cli.md`; a test keeps this page equal to it).", ""]
    for title, text in sections:
        out += [f"## `{title}`", "", "```", text.rstrip("\n"), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(reference(), end="")
