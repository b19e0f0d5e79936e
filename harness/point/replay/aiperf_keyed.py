"""`aiperf` with the endpoint's API key taken from the environment rather than the command line.

AIPerf's `profile` reads its API key only from `--api-key` (or a complete YAML config), where `ps` and
`/proc/PID/cmdline` show it to every user of the machine. The harness runs AIPerf as
`python -m harness.point.replay.aiperf_keyed profile ...` with the key in `HARNESS_AIPERF_API_KEY`: this entry point
removes the variable from its environment (AIPerf's own processes never inherit it), appends `--api-key KEY`
to the arguments inside the process and runs AIPerf's own command-line app. AIPerf then sends
`Authorization: Bearer <key>` and writes `<redacted>` in its exports.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

KEY_ENV = "HARNESS_AIPERF_API_KEY"
MODULE = "harness.point.replay.aiperf_keyed"


def keyed_argv(argv: Sequence[str], python: str = sys.executable) -> list[str]:
    """An `aiperf profile ...` argv, run through this entry point (the key then comes from `KEY_ENV`)."""
    return [python, "-m", MODULE, *argv[1:]]


def with_key(args: Sequence[str], environ: dict[str, str] | os._Environ[str]) -> list[str]:
    """AIPerf's arguments with `--api-key` from `KEY_ENV` (popped from `environ`); unchanged without it."""
    key = environ.pop(KEY_ENV, None)
    return [*args, "--api-key", key] if key else list(args)


def main() -> None:
    sys.argv = [sys.argv[0], *with_key(sys.argv[1:], os.environ)]
    from aiperf.cli import app

    sys.exit(app())   # as AIPerf's own `aiperf` script


if __name__ == "__main__":
    main()
