"""`harness sim`: run the SGLang-compatible simulator (same flags as `python -m harness.sim`)."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.sim.frontend.cli import add_all_options

    add_all_options(parser)


def main(args: argparse.Namespace) -> int:
    from harness.recipe.server_flags.sim_args import check_sim_args
    from harness.sim.frontend.cli import run

    argv = sys.argv[sys.argv.index("sim") + 1 :] if "sim" in sys.argv else []
    check_sim_args(args, argparse.ArgumentParser(prog="harness sim", allow_abbrev=False))
    return run(args, argv)
