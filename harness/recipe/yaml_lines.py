"""Where a key of a YAML file is: `file:line: key.path` for one-line errors, and duplicate keys caught
(YAML itself silently keeps the last of two equal keys)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from harness.errors import UserError


class Where:
    """Turns a key path into `file:line: key.path` for one-line errors."""

    def __init__(self, source: str, lines: dict[tuple[str, ...], int] | None = None) -> None:
        self.source, self.lines = source, lines or {}

    def error(self, path: tuple[Any, ...], message: str) -> UserError:
        keys = tuple(str(p) for p in path)
        line = next((self.lines[keys[:n]] for n in range(len(keys), 0, -1) if keys[:n] in self.lines), None)
        where = f"{self.source}:{line}" if line else self.source
        return UserError(f"{where}: {'.'.join(keys) or '<root>'}: {message}")


def line_map(text: str, where: Where,
             normalize: Callable[[tuple[str, ...], str], str] = lambda path, key: key,
             ) -> dict[tuple[str, ...], int]:
    """1-based line of every key path in the YAML text; duplicate keys are errors (YAML keeps the last)."""
    lines: dict[tuple[str, ...], int] = {}

    def walk(node: yaml.Node, path: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, value in node.value:
                key = normalize(path, str(key_node.value))
                if key in seen:
                    where.lines = lines
                    raise where.error((*path, key), f"given twice (again on line {key_node.start_mark.line + 1})")
                seen.add(key)
                lines[(*path, key)] = key_node.start_mark.line + 1
                walk(value, (*path, key))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[(*path, str(i))] = item.start_mark.line + 1
                walk(item, (*path, str(i)))

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is not None:
        walk(root, ())
    return lines
