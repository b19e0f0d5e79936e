"""Values of SGLang flags as SGLang's argparse types read them (one argv token at a time).

`convert(flag, value)` returns what the harness keeps for a recipe value, or raises BadValue saying what
was expected. The type callables mirrored here are SGLang's own (`sglang/srt/utils/common.py`,
`human_readable_int`; JSON-typed flags; choices checked after the type, as argparse does).
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.recipe.server_flags.flag import Flag

_INT = re.compile(r"[+-]?\d+")
_SIZE = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")
_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "human_readable_int": "an integer",
    "loads": "a JSON value",
    "json_list_type": "a JSON list",
    "parse_cuda_graph_config_arg": "a JSON value",
}


INT64 = 2 ** 63  # SGLang hands integers on to C++/CUDA code: one past 64 bits is a typo, not a setting
# Counts SGLang takes as given from argparse although below the minimum they make no server (a typo).
AT_LEAST: dict[str, int] = {"--max-running-requests": 1, "--max-queued-requests": 1, "--max-total-tokens": 1,
                            "--max-prefill-tokens": 1, "--context-length": 1}


class BadValue(Exception):
    """A value the flag's argparse action would reject; the message says what was expected."""


def human_readable_int(text: str) -> int:
    """SGLang's `human_readable_int`: an integer, or a number with a case-sensitive size suffix.

    SI `k`, `M`, `G`, `T` (powers of 1000, decimals allowed: `25.6k` = 25600) and IEC `Ki`, `Mi`, `Gi`,
    `Ti` (powers of 1024, integers only). `128K` and `1m` are errors, as in SGLang. Raises
    argparse.ArgumentTypeError, so it serves as an argparse `type` too.
    """
    value = text.strip()
    match = _SIZE.fullmatch(value)
    if match:
        number, suffix = match.groups()
        if suffix in _IEC:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    f"Decimals are not allowed with IEC suffixes like {suffix!r}; use an integer or an SI suffix"
                )
            return int(number) * _IEC[suffix]
        return int(Decimal(number) * _SI[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid integer value: {value!r}. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes "
            "(1Ki, 1Mi). Suffixes are case-sensitive."
        ) from None


def _convert_scalar(flag: Flag, value: Any) -> Any:
    """The value kept for one argv token, or BadValue saying what was expected."""
    if isinstance(value, bool):
        raise BadValue(f"expected {_TYPE_WORDS.get(flag.type or '', 'a value')}, got {str(value).lower()}")
    t = flag.type
    if t == "int":
        if isinstance(value, int):
            return _in_range(flag, value)
        if isinstance(value, str) and _INT.fullmatch(value.strip()) and len(value.strip()) <= 30:
            return _in_range(flag, int(value))
        raise BadValue(f"expected an integer, got {value!r}")
    if t == "float":
        if isinstance(value, (int, float)) and math.isfinite(value):
            return value
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                number = math.nan
            if math.isfinite(number):
                return number
        raise BadValue(f"expected a number, got {value!r}")
    if t == "human_readable_int":
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                human_readable_int(value)
            except argparse.ArgumentTypeError:
                pass
            else:
                return value  # kept as written: SGLang reads the same token
        raise BadValue(
            f"expected an integer or one with a size suffix (k, M, G, T; Ki, Mi, Gi, Ti; case-sensitive), got {value!r}"
        )
    if t in ("loads", "parse_cuda_graph_config_arg"):
        return _json_value(value, (dict, list, str, int, float), "a JSON value")
    if t == "json_list_type":
        return _json_value(value, (list,), "a JSON list")
    if isinstance(value, (dict, list)):
        raise BadValue(f"expected a single value, got {type(value).__name__}")
    if t is None:  # the table does not record the type: any scalar argv token
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            raise BadValue("expected a value")
        return value
    # str-like types (str, nullable_str, parse_cuda_graph_backend_arg, …): argv tokens are strings
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    raise BadValue(f"expected a string, got {value!r} (quote it)")


def _in_range(flag: Flag, value: int) -> int:
    """An integer within 64 bits, and at least the flag's minimum where it has one (`AT_LEAST`)."""
    low = AT_LEAST.get(flag.name, -INT64)
    if not low <= value < INT64:
        raise BadValue(f"expected an integer of at least {low}, got {value}" if value < low
                       else f"expected an integer below 2**63, got {len(str(value))} digits")
    return value


def _json_value(value: Any, allowed: tuple[type, ...], what: str) -> Any:
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            raise BadValue(f"expected {what}, got text that is not JSON: {value!r}") from None
        if not isinstance(parsed, allowed):
            raise BadValue(f"expected {what}, got {value!r}")
        return value
    if isinstance(value, allowed) and not isinstance(value, str):
        return value
    raise BadValue(f"expected {what}, got {value!r}")


def _check_choice(flag: Flag, value: Any) -> None:
    if flag.choices is None:
        return
    if flag.type is None or flag.type == "human_readable_int":  # compare argv spellings
        ok = str(value) in {str(c) for c in flag.choices}
    else:
        ok = value in flag.choices
    if not ok:
        close = difflib.get_close_matches(str(value), [str(c) for c in flag.choices], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise BadValue(f"{value!r} is not one of {', '.join(str(c) for c in flag.choices)}{hint}")


def convert(flag: Flag, value: Any) -> Any:
    """The value the harness keeps for `flag` (lists for multi-value flags), or BadValue."""
    if flag.kind in ("store_true", "boolean_optional"):
        if not isinstance(value, bool):
            raise BadValue(f"expected true or false (the flag takes no value), got {value!r}")
        return value
    if flag.takes_list:
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if flag.nargs == "+" and not items:
            raise BadValue("expected at least one value")
        if isinstance(flag.nargs, int) and len(items) != flag.nargs:
            raise BadValue(f"expected exactly {flag.nargs} values, got {len(items)}")
        out = [_convert_scalar(flag, item) for item in items]
        for item in out:
            _check_choice(flag, item)
        return out
    if value is None:
        if flag.nargs == "?":
            return None
        raise BadValue("expected a value (remove the flag to leave it unset)")
    converted = _convert_scalar(flag, value)
    _check_choice(flag, converted)
    return converted
