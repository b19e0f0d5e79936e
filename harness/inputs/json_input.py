"""Reading the JSON files the harness finds on disk (results, records, statuses, fingerprints, eval
results): one bounded reader for every result reader (report, compare, export, fingerprint diff, status,
follow, check --results).

Whatever the bytes or the kind of file, reading ends within a bounded time and memory in either a value
or a one-line `UserError` naming the file:

- only a regular file is opened for reading (a FIFO, a device such as `/dev/zero`, a socket or a directory
  is refused without reading it, and never blocks); a symlink loop is refused;
- a file larger than `max_bytes` is refused before it is read;
- a file is read with memory in proportion to its size, never a buffer of `max_bytes` (a trace corpus's
  bound is 4 GiB: a reader that reserved it would fail under a 4 GB address-space limit);
- the text must be UTF-8 JSON, nested at most `MAX_DEPTH` deep;
- `read_json_object` also requires the top level to be an object (`{...}`).

`JsonFields` reads typed fields out of a value read this way: a field of the wrong type is treated as
absent (the lenient readers) or refused with one line (`require_*`).
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from harness.errors import UserError

MAX_BYTES = 32 * 1024 * 1024   # a record or row is a few kB, a fingerprint ~100 kB, an InferenceX agg list a few MB
MAX_DEPTH = 64
READ_CHUNK = 1024 * 1024       # what a file is read in beyond the size it states (a file still growing, /proc)

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_file_bytes(path: str | Path, what: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at `path` (at most `max_bytes`); `what` names it in errors.
    Non-regular files are refused without reading (and without blocking on a FIFO)."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise _open_error(path, what, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise UserError(f"{path}: is {kind}; expected a {what} file")
        if info.st_size > max_bytes:
            raise UserError(f"{path}: {info.st_size} bytes, larger than {_size(max_bytes)}; not a {what} file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = _read_bounded(fh, info.st_size, max_bytes + 1)
    except OSError as exc:
        raise UserError(f"{path}: cannot read the {what} file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise UserError(f"{path}: larger than {_size(max_bytes)}; not a {what} file")
    return data


def _read_bounded(fh: BinaryIO, size: int, limit: int) -> bytes:
    """At most `limit` bytes of `fh`, with memory proportional to what the file holds: the size it states (plus
    one byte, to see the end) is read first, then chunks while the file grows, never a buffer of `limit`."""
    chunks: list[bytes] = []
    total = 0
    want = min(limit, size + 1)
    while total < limit:
        chunk = fh.read(min(limit - total, max(want, READ_CHUNK)))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        want = READ_CHUNK
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n // 1024} KiB"


def _open_error(path: Path, what: str, exc: OSError) -> UserError:
    if exc.errno == errno.ENOENT:
        return UserError(f"{path}: no such {what} file")
    if exc.errno == errno.ELOOP:
        return UserError(f"{path}: a symlink loop; expected a {what} file")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return UserError(f"{path}: not readable (permission denied)")
    if exc.errno == errno.ENAMETOOLONG:
        return UserError(f"{str(path)[:80]}…: file name too long")
    return UserError(f"{path}: cannot open the {what} file: {exc.strerror or exc}")


def parse_json(data: bytes | str, source: str, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of `data` (UTF-8), nested at most `max_depth` deep; else a one-line UserError."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise UserError(f"{source}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})") from None
    try:
        value = json.loads(text, parse_int=_int)
    except RecursionError:
        raise UserError(f"{source}: not readable as JSON: nested deeper than {max_depth} levels") from None
    except ValueError as exc:  # JSONDecodeError, and integers past Python's digit limit
        raise UserError(f"{source}: not readable as JSON: {str(exc).splitlines()[0][:160]}") from None
    if depth_exceeds(value, max_depth):
        raise UserError(f"{source}: not readable as JSON: nested deeper than {max_depth} levels")
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        raise UserError(f"{source}: not readable as JSON: a string holds a lone surrogate escape (\\ud800-\\udfff), "
                        "which is not text")
    return value


MAX_INT_DIGITS = 308   # what a float can hold: every number a reader meets may become one
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _int(digits: str) -> int:
    n = len(digits.lstrip("-"))
    if n > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {n} digits (at most {MAX_INT_DIGITS})")
    return int(digits)


def _has_lone_surrogate(value: Any) -> bool:
    """True when a key or string anywhere in `value` holds an unpaired surrogate (iterative)."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def depth_exceeds(value: Any, max_depth: int) -> bool:
    """True when `value` nests lists/objects more than `max_depth` deep (iterative: any depth is safe)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def read_json_value(path: str | Path, what: str, max_bytes: int = MAX_BYTES) -> Any:
    """The JSON value of the file at `path`, read within the bounds above."""
    return parse_json(read_file_bytes(path, what, max_bytes), str(path))


def read_json_object(path: str | Path, what: str, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """The JSON object (`{...}`) of the file at `path`; any other top-level value is a one-line error."""
    value = read_json_value(path, what, max_bytes)
    if not isinstance(value, dict):
        raise UserError(f"{path}: <root>: expected a {what} (a JSON object), got {type_name(value)}")
    return value


def finite_number(value: Any) -> float | None:
    """A finite int/float as float; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def type_name(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


class JsonFields:
    """Typed access to the fields of one JSON object read from `source`.

    `text`, `integer`, `number`, `boolean`, `section` and `items` return the field when it has that type and
    None (or an empty value) otherwise: booleans are never numbers, non-finite floats are never numbers. `require_*`
    refuse a missing or wrong-typed field with one line naming the file and the key."""

    def __init__(self, data: Any, source: str | Path, prefix: str = "") -> None:
        self.data: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
        self.source, self.prefix = str(source), prefix

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def text(self, key: str) -> str | None:
        v = self.data.get(key)
        return v if isinstance(v, str) else None

    def integer(self, key: str) -> int | None:
        v = self.data.get(key)
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            return v
        return int(v) if isinstance(v, float) and v.is_integer() and abs(v) < 2 ** 63 else None

    def number(self, key: str) -> float | None:
        v = self.data.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        try:
            f = float(v)
        except OverflowError:
            return None
        return f if math.isfinite(f) else None

    def boolean(self, key: str) -> bool | None:
        v = self.data.get(key)
        return v if isinstance(v, bool) else None

    def section(self, key: str) -> JsonFields:
        return JsonFields(self.data.get(key), self.source, f"{self.prefix}{key}.")

    def items(self, key: str) -> list[Any]:
        v = self.data.get(key)
        return v if isinstance(v, list) else []

    def require_str(self, key: str) -> str:
        v = self.text(key)
        if v is None:
            raise self._error(key, "a string")
        return v

    def require_int(self, key: str) -> int:
        v = self.integer(key)
        if v is None:
            raise self._error(key, "an integer")
        return v

    def _error(self, key: str, expected: str) -> UserError:
        got = "missing" if key not in self.data else f"got {type_name(self.data[key])}"
        return UserError(f"{self.source}: {self.prefix}{key}: expected {expected}, {got}")
