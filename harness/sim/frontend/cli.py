"""Command line of the simulator: SGLang's launch flags (from the pinned table) plus `--sim-*`
(`harness.recipe.server_flags.sim_args`).

`python -m harness.sim <args>` takes exactly the argv of `python3 -m sglang.launch_server <args>`;
unknown or ambiguous flags fail like SGLang's argparse (usage line, exit status 2).
"""

from __future__ import annotations

import argparse
import os
import sys

from harness.recipe.server_flags.sim_args import add_sim_options, check_sim_args
from harness.sim.frontend.app import serve_forever
from harness.sim.frontend.flagtable import DEFAULT_VERSION, SIM_VERSION_ENV, add_sglang_options


def add_all_options(parser: argparse.ArgumentParser, version: str | None = None) -> None:
    add_sglang_options(parser, version or os.environ.get(SIM_VERSION_ENV, DEFAULT_VERSION))
    add_sim_options(parser)


def build_parser(version: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness.sim",
        description="SGLang-compatible serving simulator: takes sglang.launch_server's flags.",
    )
    add_all_options(parser, version)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    check_sim_args(args, parser)
    return run(args, argv)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    return serve_forever(args, argv)


