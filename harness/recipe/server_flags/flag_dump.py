"""A flag table from a live argparse parser: what `harness flags dump` writes for the pinned tables."""

from __future__ import annotations

import json
from typing import Any


def _jsonable(value: Any) -> Any:
    if isinstance(value, (tuple, set, frozenset)):
        value = list(value)
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def table_from_parser(parser: Any, sglang_version: str) -> dict[str, Any]:
    """A flag-table document from an argparse parser (SGLang's `ServerArgs.add_cli_args` applied to one).

    One entry per option, keyed by its destination: option strings, action class name, type callable
    name, nargs, choices (a set's in sorted order, so dumps are reproducible), default and the constant a
    store-const action stores. The help action is left out; a second action on one destination is keyed
    `dest#2`.
    """
    options: dict[str, dict[str, Any]] = {}
    for action in parser._actions:
        if type(action).__name__ == "_HelpAction" or not action.option_strings:
            continue
        kind = action.type
        type_name = None if kind is None else getattr(kind, "__name__", type(kind).__name__)
        key = action.dest
        n = 2
        while key in options:
            key, n = f"{action.dest}#{n}", n + 1
        choices = action.choices
        if isinstance(choices, (set, frozenset)):
            choices = sorted(choices, key=str)
        options[key] = {
            "action": type(action).__name__,
            "choices": None if choices is None else [_jsonable(c) for c in choices],
            "const": _jsonable(getattr(action, "const_value", action.const)),
            "default": _jsonable(action.default),
            "flags": list(action.option_strings),
            "nargs": action.nargs,
            "type": type_name,
        }
    return {
        "options": dict(sorted(options.items())),
        "sglang_version": sglang_version,
        "source": f"argparse parser of sglang.srt.server_args.ServerArgs.add_cli_args, sglang {sglang_version}",
    }
