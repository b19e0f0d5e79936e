"""SGLang's launch flags, rebuilt as an argparse parser from the pinned flag table.

The flag table (`harness/recipe/server_flags/flag_tables/<version>.json`) is a dump of SGLang's own argparse parser:
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

from harness.recipe.server_flags.flag_values import human_readable_int

DEFAULT_VERSION = "0.5.23"
SIM_VERSION_ENV = "HARNESS_SIM_SGLANG_VERSION"  # the SGLang release whose flags the simulator parses
TABLE_DIR = Path(__file__).resolve().parent.parent.parent / "recipe" / "server_flags" / "flag_tables"

# Types SGLang's parser uses. The simulator only needs to accept what SGLang accepts; JSON payloads and
# CUDA-graph specs stay the strings they were given (choices are still checked on them).
_TYPES: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "str": str,
                                           "human_readable_int": human_readable_int}


@cache
def load_table(version: str = DEFAULT_VERSION) -> dict[str, Any]:
    """The flag table of one SGLang version (`{"options": {dest: spec}, "sglang_version": ...}`)."""
    path = TABLE_DIR / f"{version}.json"
    with open(path) as fh:
        table: dict[str, Any] = json.load(fh)
    return table


class _StoreConst(argparse.Action):
    """SGLang's DeprecatedStoreConstAction: the old spelling (with or without its one value) stores a constant."""

    def __init__(self, option_strings: list[str], dest: str, const: Any = None, **kwargs: Any) -> None:
        self._value = const
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, self._value)


def add_sglang_options(parser: argparse.ArgumentParser, version: str = DEFAULT_VERSION) -> None:
    """Add every option of SGLang `version`'s launch parser to `parser`, with the same dests.

    Types the simulator knows are applied (int, float, str, human_readable_int); every other value stays
    the string given. Choices are enforced on every flag that has them, as SGLang's argparse does.
    """
    for key, spec in load_table(version)["options"].items():
        dest = key.split("#")[0]  # a second action on one dest is keyed `dest#2`
        flags: list[str] = spec["flags"]
        action = spec["action"]
        default = spec["default"]
        if action in ("_StoreTrueAction", "DeprecatedStoreTrueAction"):
            parser.add_argument(*flags, dest=dest, action="store_true", default=default)
        elif action == "BooleanOptionalAction":
            positive = [f for f in flags if not f.startswith("--no-")]
            parser.add_argument(*positive, dest=dest, action=argparse.BooleanOptionalAction, default=default)
        elif action == "DeprecatedStoreConstAction":
            parser.add_argument(*flags, dest=dest, action=_StoreConst, const=spec.get("const"),
                                nargs=spec["nargs"], choices=spec["choices"], default=argparse.SUPPRESS)
        else:
            kwargs: dict[str, Any] = {"dest": dest, "default": default}
            if spec["nargs"] not in (None, 0):
                kwargs["nargs"] = spec["nargs"]
            if spec["type"] in _TYPES:
                kwargs["type"] = _TYPES[spec["type"]]
            if spec["choices"] is not None:
                kwargs["choices"] = spec["choices"]
            parser.add_argument(*flags, **kwargs)


def sglang_dests(version: str = DEFAULT_VERSION) -> list[str]:
    """The dest names of every SGLang option (the keys of the resolved server args)."""
    return list(dict.fromkeys(key.split("#")[0] for key in load_table(version)["options"]))
