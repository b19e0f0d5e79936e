"""SGLang's launch flags, rebuilt as an argparse parser from the pinned flag table.

The flag table (`harness/recipe/flag_tables/<version>.json`) is a dump of SGLang's own argparse parser:
for every option its flags, action, nargs, type, choices and default. Rebuilding a parser from it
gives the simulator the same accept/reject behaviour as SGLang, including argparse's prefix
abbreviations (`--tp` works because only `--tp-size` starts with it; `--cuda-graph-max-bs` is
ambiguous in 0.5.20+ and fails with exit status 2).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

DEFAULT_VERSION = "0.5.23"
TABLE_DIR = Path(__file__).resolve().parent.parent / "recipe" / "flag_tables"

# Types SGLang's parser uses that are not plain Python builtins. The simulator only needs to
# accept what SGLang accepts; the richer ones (JSON payloads, CUDA-graph specs) stay strings.
_TYPES: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "str": str}


def _human_readable_int(text: str) -> int:
    """SGLang's `human_readable_int`: an integer, optionally with a K/M/G suffix (powers of 1000)."""
    t = text.strip()
    scale = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000}.get(t[-1:].lower())
    if scale is not None:
        return int(float(t[:-1]) * scale)
    return int(t)


_TYPES["human_readable_int"] = _human_readable_int


@cache
def load_table(version: str = DEFAULT_VERSION) -> dict[str, Any]:
    """The flag table of one SGLang version (`{"options": {dest: spec}, "sglang_version": ...}`)."""
    path = TABLE_DIR / f"{version}.json"
    with open(path) as fh:
        table: dict[str, Any] = json.load(fh)
    return table


def add_sglang_options(parser: argparse.ArgumentParser, version: str = DEFAULT_VERSION) -> None:
    """Add every option of SGLang `version`'s launch parser to `parser`, with the same dests."""
    for dest, spec in load_table(version)["options"].items():
        flags: list[str] = spec["flags"]
        action = spec["action"]
        default = spec["default"]
        if action in ("_StoreTrueAction", "DeprecatedStoreTrueAction"):
            parser.add_argument(*flags, dest=dest, action="store_true", default=default)
        elif action == "BooleanOptionalAction":
            positive = [f for f in flags if not f.startswith("--no-")]
            parser.add_argument(*positive, dest=dest, action=argparse.BooleanOptionalAction, default=default)
        else:
            kwargs: dict[str, Any] = {"dest": dest, "default": default}
            if spec["nargs"] not in (None, 0):
                kwargs["nargs"] = spec["nargs"]
            typ = spec["type"]
            if typ in _TYPES:
                kwargs["type"] = _TYPES[typ]
                if spec["choices"] is not None:
                    kwargs["choices"] = spec["choices"]
            elif spec["choices"] is not None and typ is None:
                kwargs["choices"] = spec["choices"]
            parser.add_argument(*flags, **kwargs)


def sglang_dests(version: str = DEFAULT_VERSION) -> list[str]:
    """The dest names of every SGLang option (the keys of the resolved server args)."""
    return list(load_table(version)["options"])
