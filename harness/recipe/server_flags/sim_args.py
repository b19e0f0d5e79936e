"""The simulator's own flags (`--sim-*`, not SGLang's): what a recipe's `sim_args:` may set, checked when the recipe
is loaded with the same parser and rules the simulator starts with."""

from __future__ import annotations

import argparse
from typing import NoReturn


def add_sim_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("simulator (not SGLang flags)")
    g.add_argument("--sim-profile", default="demo",
                   help="timing profile: demo, gb300-tp4, h200-tp8, or a path to a profile JSON (default demo)")
    g.add_argument("--sim-startup-seconds", type=float, default=None,
                   help="seconds before /health turns 200 (default: the profile's startup time)")
    g.add_argument("--sim-crash-after", type=float, default=None,
                   help="exit with status 1 this many seconds after becoming ready")
    g.add_argument("--sim-error-rate", type=float, default=0.0,
                   help="fraction of chat requests answered with HTTP 500")
    g.add_argument("--sim-errors-after", type=float, default=None,
                   help="answer with --sim-error-rate only from this many seconds after becoming ready "
                        "(default: from the start), e.g. to fail requests after a client's warm-up")
    g.add_argument("--sim-errors-after-requests", type=int, default=0, metavar="N",
                   help="answer the first N chat requests normally, then with --sim-error-rate (a trigger that "
                        "a slow machine cannot move, unlike --sim-errors-after)")
    g.add_argument("--sim-stall-after", type=float, default=None,
                   help="stop producing tokens this many seconds after becoming ready (connections stay open)")
    g.add_argument("--sim-stall-after-requests", type=int, default=0, metavar="N",
                   help="stop producing tokens when the Nth chat request arrives (connections stay open; a trigger "
                        "that a slow machine cannot move, unlike --sim-stall-after)")
    g.add_argument("--sim-drop-rate", type=float, default=0.0,
                   help="fraction of streams closed mid-response")
    g.add_argument("--sim-truth-log", default=None, help="write one JSON line per request to this file")
    g.add_argument("--sim-eval-answers", default=None, metavar="FILE",
                   help="JSON lines of {question, answer}: a prompt containing a known question gets its worked "
                        "answer ending in '#### <number>' (e.g. harness/evals/gsm8k/test.jsonl)")
    g.add_argument("--sim-eval-accuracy", type=float, default=1.0, metavar="P",
                   help="with --sim-eval-answers: probability that an answer's final number is right (seeded)")
    g.add_argument("--sim-seed", type=int, default=None,
                   help="seed for acceptance draws and faults (default: --random-seed, else 0)")


class _Refused(Exception):
    pass


class _CheckingParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Refused(message)


def sim_flags_problem(argv: list[str]) -> str | None:
    """Why the simulator would refuse these `--sim-*` flags at start, or None (checked at plan time)."""
    parser = _CheckingParser(prog="sim_args", add_help=False, allow_abbrev=False)
    add_sim_options(parser)
    try:
        args = parser.parse_args(argv)
        check_sim_args(args, parser)
    except _Refused as exc:
        return str(exc)
    if "--sim-profile" in argv:
        return "set the simulator profile with sim_profile, not sim_args"
    return None


def check_sim_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    for name in ("sim_error_rate", "sim_drop_rate", "sim_eval_accuracy"):
        v = getattr(args, name)
        if not 0.0 <= v <= 1.0:
            parser.error(f"--{name.replace('_', '-')}: expected a fraction in [0, 1], got {v}")
    for name in ("sim_errors_after_requests", "sim_stall_after_requests"):
        if getattr(args, name) < 0:
            parser.error(f"--{name.replace('_', '-')}: expected a count >= 0, got {getattr(args, name)}")
    for name in ("sim_startup_seconds", "sim_crash_after", "sim_stall_after"):
        v = getattr(args, name)
        if v is not None and v < 0:
            parser.error(f"--{name.replace('_', '-')}: expected seconds >= 0, got {v}")
