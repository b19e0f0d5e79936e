"""The server's secret flags, held apart from its command line.

SGLang takes its keys only as flags (`--api-key`, `--admin-api-key`; no environment variable in its flag tables).
A plan keeps them out of the command it carries (`argv`) and beside it (`secret_args`, `{"--api-key": KEY}`); the
two are joined only where a process is started (`joined`), so nothing in the harness parses a key back out of a
command line, and a command shown or compared without its secrets is simply the plan's `argv`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SECRET_FLAGS = ("api-key", "admin-api-key")   # dashless, as a recipe's `args` name them
API_KEY_FLAG = "--api-key"


def split_secret_args(args: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """`args` (dashless names) without the secret flags, and the secret flags set (`{"--api-key": KEY}`)."""
    public = {name: value for name, value in args.items() if name not in SECRET_FLAGS}
    secret = {f"--{name}": str(args[name]) for name in SECRET_FLAGS if args.get(name) not in (None, False)}
    return public, secret


def joined(argv: Sequence[str], secret_args: Mapping[str, str]) -> list[str]:
    """The command a process is started with: `argv`, then each secret flag and its value."""
    return [*argv, *(token for flag, value in secret_args.items() for token in (flag, value))]
