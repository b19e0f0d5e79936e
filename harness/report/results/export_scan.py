"""The export's last check: no secret shape left in a file it is about to put in place.

Every file of an export is scanned with the rule of `harness.redact` (`harness.artifacts.holds_secret`): a value
it would mask is a secret left in the file. What the export writes itself passed the redacting writers of
`harness.artifacts`; what it copies as the run wrote it (AIPerf's files, a server's log, lm-eval's results, the
power evidence) did not, and a token written there (by the tool, or planted after the run) would leave with the
export. What is already masked (`<redacted>`, `<redacted:N>`), a setting's `sha256:<16 hex digits>`, a variant's
mark and a value that holds nothing (`None`, `null`, empty, `EMPTY`) are not. A JSON file is scanned value by
value, with the name each value is under (a secret-named key's string is a secret too) and an argv list as a
command; a finding names the file and the JSON path (`bmk_agentic_x/bmk_agentic_x.json: $.server_args.foo`), a
JSON Lines file the line and the path (`…/profile_export.jsonl: line 3 $.metadata.note`), any other file the line
(`…/server.log: line 12`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.artifacts import holds_secret
from harness.errors import UserError

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@lru_cache(maxsize=1 << 16)
def _text_holds(text: str) -> bool:
    return holds_secret(text)


@lru_cache(maxsize=1 << 16)
def _entry_holds(key: str, value: str | tuple[str, ...]) -> bool:
    """A string (or a list of strings, as argv) under its key (the same pairs recur in every record of a file)."""
    return holds_secret({key: value if isinstance(value, str) else list(value)})


def _member(path: str, key: object) -> str:
    name = str(key)
    return f"{path}.{name}" if _PLAIN_KEY.fullmatch(name) else f"{path}[{json.dumps(name)}]"


def json_paths(value: Any, path: str = "$") -> Iterator[str]:
    """The JSON paths in `value` where a secret shape is left: a string (with the key it is under), a list of
    strings (as a command's argv), a mapping's key."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = _member(path, key)
            if _text_holds(str(key)):
                yield where
            elif isinstance(item, str) or _strings(item):
                if _entry_holds(str(key), item if isinstance(item, str) else tuple(item)):
                    yield where
            else:
                yield from json_paths(item, where)
    elif _strings(value):
        if holds_secret(value):
            yield path
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from json_paths(item, f"{path}[{i}]")
    elif isinstance(value, str) and _text_holds(value):
        yield path


def _strings(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _text_lines(text: str) -> list[int]:
    """The numbers of the lines holding a secret shape (a shape over several lines, a PEM block: its first)."""
    if not holds_secret(text):   # the whole text at once first: most files are clean
        return []
    lines = [n for n, line in enumerate(text.splitlines(), 1) if _text_holds(line)]
    if lines:
        return lines
    begin = text.find("-----BEGIN")
    return [text.count("\n", 0, begin) + 1 if begin >= 0 else 1]


def shapes_left(path_rel: str, text: str) -> list[str]:
    """Where a secret shape is left in one file of an export (its path inside the export and its text): one
    `path: where` per finding, none for a clean file."""
    if path_rel.endswith(".json"):
        try:
            return [f"{path_rel}: {where}" for where in json_paths(json.loads(text))]
        except ValueError:
            pass   # not JSON after all: scanned as text
    if path_rel.endswith(".jsonl"):
        found: list[str] = []
        for n, line in enumerate(text.splitlines(), 1):
            try:
                found += [f"{path_rel}: line {n} {where}" for where in json_paths(json.loads(line))]
            except ValueError:
                found += [f"{path_rel}: line {n}"] if _text_holds(line) else []
        return found
    return [f"{path_rel}: line {n}" for n in _text_lines(text)]


def tree_shapes_left(root: Path) -> list[str]:
    """`shapes_left` over every regular file below `root` (paths relative to it); binary files (holding a NUL
    byte) are not text and are skipped."""
    found: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" not in data:
            found += shapes_left(path.relative_to(root).as_posix(), data.decode("utf-8", errors="replace"))
    _text_holds.cache_clear()   # the pairs of this export are not needed again
    _entry_holds.cache_clear()
    return found


def refuse_shapes_left(root: Path) -> None:
    """One line naming the first place a secret shape is left below `root` (and how many more), if any."""
    found = tree_shapes_left(root)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise UserError(f"{found[0]}{more}: a secret's shape is left in what the export would write, so nothing was "
                        "exported; mask it in the run directory (or remove the file) and export again")
