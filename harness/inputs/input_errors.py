"""A validation error of a file a user wrote, as the key path and message of one line.

An unknown key comes first, whatever else is wrong: a misspelt key usually also leaves a required one
missing, and the typo is the cause. It names the closest valid key of the model at that place
(`unknown key 'clinet' (did you mean 'client'?)`). The count of the other errors follows the first.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from harness.errors import and_more, did_you_mean


def first_error(exc: ValidationError, model: type[BaseModel]) -> tuple[tuple[Any, ...], str]:
    """(key path, message) of the error to show: an unknown key with its nearest valid key, else the first."""
    errors = exc.errors()
    unknown = [e for e in errors if e.get("type") == "extra_forbidden"]
    first = unknown[0] if unknown else errors[0]
    loc = tuple(first.get("loc", ()))
    if unknown and loc:
        msg = f"unknown key {str(loc[-1])!r}{did_you_mean(str(loc[-1]), keys_at(model, loc[:-1]))}"
    else:
        msg = str(first.get("msg", "")).removeprefix("Value error, ")
    rest = [f"{'.'.join(str(p) for p in e.get('loc', ())) or '<root>'}: "
            f"{str(e.get('msg', '')).removeprefix('Value error, ')}" for e in errors if e is not first]
    return loc, msg + and_more(rest)


def keys_at(model: type[BaseModel], path: tuple[Any, ...]) -> list[str]:
    """The keys the model accepts at `path` (field names and aliases of the model found there), else []."""
    found: list[type[BaseModel]] = []
    _models_at(model, path, found)
    keys: list[str] = []
    for m in found:
        for name, info in m.model_fields.items():
            keys += [k for k in (name, info.alias) if k and k not in keys]
    return keys


def _models_at(tp: Any, path: tuple[Any, ...], out: list[type[BaseModel]]) -> None:
    """Every model class that the type `tp` may hold at `path` (unions give several)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        _models_at(args[0], path, out)
    elif origin in (typing.Union, types.UnionType):
        for arg in args:
            _models_at(arg, path, out)
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        if not path:
            out.append(tp)
        elif str(path[0]) in tp.model_fields:
            _models_at(tp.model_fields[str(path[0])].annotation, path[1:], out)
    elif path and origin in (dict, collections.abc.Mapping) and len(args) == 2:
        _models_at(args[1], path[1:], out)
    elif path and origin in (list, tuple, collections.abc.Sequence) and args:
        _models_at(args[0], path[1:], out)
