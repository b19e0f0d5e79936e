"""`harness flags dump | show`: SGLang server flag tables.

`dump` rebuilds a flag table from the SGLang installed in this Python, straight from its own argparse
parser (`sglang.srt.server_args.ServerArgs.add_cli_args`). Run it inside the pinned engine image, e.g.
`docker run --rm IMAGE harness flags dump > 0.5.23.json`, and ship the result in `harness/recipe/server_flags/flag_tables/`.
`show` explains how the shipped table of a version resolves a flag name (aliases, prefixes, choices).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="flags_command", metavar="ACTION", required=True)

    p = sub.add_parser("dump", help="write the flag table of the SGLang installed here (run inside the image)")
    p.add_argument("--out", type=Path, default=None, help="write to this file instead of stdout")

    p = sub.add_parser("show", help="resolve a flag name against a shipped table and describe it")
    p.add_argument("name", help="flag name, alias or prefix, e.g. --cuda-graph-max-bs-decode")
    p.add_argument("--sglang-version", default=None, help="table version (default: the pinned one)")


def main(args: argparse.Namespace) -> int:
    if args.flags_command == "dump":
        return _dump(args.out)
    return _show(args.name, args.sglang_version)


def _dump(out: Path | None) -> int:
    import importlib

    from harness.errors import UserError
    from harness.recipe.server_flags.flag_dump import table_from_parser

    try:
        server_args = importlib.import_module("sglang.srt.server_args")
        sglang = importlib.import_module("sglang")
    except ImportError as exc:
        raise UserError(
            f"cannot import sglang.srt.server_args ({exc}); run `harness flags dump` inside the pinned "
            "SGLang engine image, where sglang is installed"
        ) from None
    parser = argparse.ArgumentParser(add_help=False)
    server_args.ServerArgs.add_cli_args(parser)
    version = str(getattr(sglang, "__version__", "unknown"))
    table = table_from_parser(parser, version)
    if out is None:
        from harness import SCHEMA_VERSION

        print(json.dumps({"schema_version": SCHEMA_VERSION, **table}, indent=1))
    else:
        from harness.artifacts import write_json

        write_json(out, table)
        print(f"wrote {out} ({len(table['options'])} options, sglang {version})")
    return 0


def _show(name: str, version: str | None) -> int:
    from harness.recipe.server_flags.flags import DEFAULT_VERSION, load_table

    table = load_table(version or DEFAULT_VERSION)
    flag = table.resolve(name)
    print(f"{flag.name}  (SGLang {table.version}, dest {flag.dest})")
    if flag.aliases:
        print(f"  aliases: {', '.join(flag.aliases)}")
    if flag.negative:
        print(f"  negative: {flag.negative}")
    takes = {"store_true": "no value (store_true)", "boolean_optional": "no value (--X / --no-X)"}
    value = f"type {flag.type or 'unrecorded'}, nargs {flag.nargs}"
    print(f"  takes:   {takes.get(flag.kind, value)}")
    if flag.choices is not None:
        print(f"  choices: {', '.join(str(c) for c in flag.choices)}")
    print(f"  default: {flag.default!r}")
    return 0
