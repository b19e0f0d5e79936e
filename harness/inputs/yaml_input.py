"""Reading the files users write: one safe path for every loader (recipes, golden curves, changelogs,
cluster profiles, trace files).

Whatever the bytes, reading ends within a bounded time and memory in either a value or a one-line
`UserError` naming the file and, where known, the line and key path:

- `read_text` refuses what is not a readable UTF-8 regular file (a directory, a FIFO, a device, a missing
  path, a binary file) without blocking and without reading more than its cap;
- `load_yaml` refuses a text larger than `MAX_YAML_BYTES` and flow brackets (`[`, `{`) nested deeper than
  `MAX_DEPTH` before PyYAML's scanner sees them (its scanner is slow on both), then parses with PyYAML's
  safe loader and refuses nesting deeper than `MAX_DEPTH`, more than
  `MAX_ALIASES` aliases, an alias that contains itself, a document whose aliases expand to more than
  `MAX_NODES` nodes, integers longer than `MAX_INT_DIGITS` digits, a mapping key given twice (YAML
  itself silently keeps the last one) and any explicit tag (`!!python/…`, `!!int 1e3`, `!custom`), named in
  the message. It also returns the line of every key path, for `Where`;
- `short` makes any value safe to quote in a one-line message (newlines escaped, length capped).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from harness.errors import UserError
from harness.inputs.json_input import read_file_bytes

MAX_BYTES = 8 * 1024 * 1024   # a trace file is a few MB
MAX_YAML_BYTES = 64 * 1024    # a recipe, profile, golden curve or changelog is a few kB: parsing 64 KiB takes < 1 s
MAX_DEPTH = 64
MAX_ALIASES = 256
MAX_NODES = 100_000
MAX_INT_DIGITS = 30
QUOTE_CHARS = 80

Normalize = Callable[[tuple[str, ...], str], str]


def short(value: object, limit: int = QUOTE_CHARS) -> str:
    """`repr(value)` on one line, cut to `limit` characters: safe to put in an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Where:
    """Turns a key path into `file:line: key.path` for one-line errors."""

    def __init__(self, source: str, lines: dict[tuple[str, ...], int] | None = None) -> None:
        self.source, self.lines = source, lines or {}

    def error(self, path: tuple[Any, ...], message: str) -> UserError:
        keys = tuple(_key_text(p) for p in path)
        line = next((self.lines[keys[:n]] for n in range(len(keys), 0, -1) if keys[:n] in self.lines), None)
        where = f"{self.source}:{line}" if line else self.source
        return UserError(f"{where}: {'.'.join(keys) or '<root>'}: {message}")


def _key_text(key: object) -> str:
    text = str(key)
    return text if len(text) <= QUOTE_CHARS and "\n" not in text and "\r" not in text else short(text)


def read_text(path: str | Path, what: str, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of the file at `path`; `what` names it in errors ("recipe", "cluster profile")."""
    return decode(read_bytes(path, what, max_bytes), str(path))


def read_bytes(path: str | Path, what: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at `path` (at most `max_bytes`); `what` names it in errors."""

    return read_file_bytes(path, what, max_bytes)


def decode(data: bytes, source: str) -> str:
    """UTF-8 text of `data`; a byte that is not UTF-8 is a one-line error with its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UserError(f"{source}:{line}: not UTF-8 text (byte {data[exc.start]:#04x})") from None


class _Loader(yaml.SafeLoader):
    """The safe loader with bounded depth and integers, and duplicate keys refused."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    digits = sum(ch.isalnum() for ch in str(node.value))
    if digits > MAX_INT_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of {digits} digits (at most {MAX_INT_DIGITS})", node.start_mark)
    return loader.construct_yaml_int(node)


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
            key = loader.construct_object(key_node)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {short(key)} given twice (first on line {seen[key]})", key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
    yield from loader.construct_yaml_map(node)  # merge keys included


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


def _check_graph(root: yaml.Node, source: str) -> None:
    """Refuse an alias that contains itself and aliases that expand past MAX_NODES nodes."""
    size: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        if done:
            open_.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in children)
            if size[key] > MAX_NODES:
                raise UserError(f"{source}:{node.start_mark.line + 1}: aliases expand to more than "
                                f"{MAX_NODES} values")
            continue
        if key in size:
            continue
        if key in open_:
            raise UserError(f"{source}:{node.start_mark.line + 1}: an alias refers to the value that contains it")
        open_.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(children) if id(c) not in size)
        for c in children:
            if id(c) in open_:
                raise UserError(f"{source}:{c.start_mark.line + 1}: an alias refers to the value that contains it")


def _yaml_error(exc: yaml.YAMLError, source: str) -> UserError:
    mark = getattr(exc, "problem_mark", None)
    at = f"{source}:{mark.line + 1}" if mark is not None else source
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return UserError(f"{at}: not valid YAML: {problem}")


_FLOW = re.compile(r"[\[\]{}]")


def _check_flow_depth(text: str, source: str) -> None:
    """Refuse flow brackets nested deeper than MAX_DEPTH, counted on the raw text (brackets inside quoted
    strings count too: nobody writes 64 of them) before PyYAML's scanner, which slows down with depth."""
    depth = 0
    for m in _FLOW.finditer(text):
        depth = depth + 1 if m.group() in "[{" else max(depth - 1, 0)
        if depth > MAX_DEPTH:
            line = text.count("\n", 0, m.start()) + 1
            raise UserError(f"{source}:{line}: not valid YAML: nested deeper than {MAX_DEPTH} levels")


def _scan(text: str, source: str) -> int:
    """How many aliases (`*name`) the text uses (libyaml's parser when PyYAML has it: the fast pass); a value
    with an explicit tag (`!!python/object:…`, `!!int 1e3`, `!custom`) is refused, naming the tag."""
    loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    try:
        events = list(yaml.parse(text, Loader=loader))
    except yaml.YAMLError:
        if loader is yaml.SafeLoader:
            raise
        events = list(yaml.parse(text, Loader=yaml.SafeLoader))
    for e in events:
        tag = getattr(e, "tag", None)
        if isinstance(tag, str) and tag != "!" and isinstance(e, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
            shown = "!!" + tag[len(_STANDARD):] if tag.startswith(_STANDARD) else tag
            at = f"{source}:{e.start_mark.line + 1}" if e.start_mark is not None else source
            raise UserError(f"{at}: YAML tag {short(shown)} is not accepted (tags are "
                            "refused: write the value plainly, a string in quotes)")
    return sum(isinstance(e, yaml.AliasEvent) for e in events)


_STANDARD = "tag:yaml.org,2002:"


def load_yaml(text: str, source: str, normalize: Normalize = lambda path, key: key,
              ) -> tuple[Any, dict[tuple[str, ...], int]]:
    """Parse YAML text safely: (the value, the 1-based line of every key path). `normalize` maps a key
    as written to the key it stands for (two spellings of one key count as given twice)."""
    if len(text) > MAX_YAML_BYTES:
        raise UserError(f"{source}: {len(text)} characters, larger than {MAX_YAML_BYTES // 1024} KiB "
                        "(a recipe, cluster profile or golden curve is a few kB)")
    _check_flow_depth(text, source)
    try:
        loader = _Loader(text)
    except yaml.YAMLError as exc:  # a character YAML does not allow (NUL, most controls)
        raise _yaml_error(exc, source) from None
    try:
        aliases = _scan(text, source)
        if aliases > MAX_ALIASES:
            raise UserError(f"{source}: {aliases} aliases (at most {MAX_ALIASES})")
        root = loader.get_single_node()
        if root is None:
            return None, {}
        _check_graph(root, source)
        lines = _line_map(root, Where(source), normalize)
        value = loader.construct_document(root)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source) from None
    finally:
        loader.dispose()
    return value, lines


def _line_map(root: yaml.Node, where: Where, normalize: Normalize) -> dict[tuple[str, ...], int]:
    """1-based line of every key path; a key given twice (after `normalize`) is an error."""
    lines: dict[tuple[str, ...], int] = {}
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, value in node.value:
                key = normalize(path, str(key_node.value))
                if key in seen and key != "<<":
                    where.lines = lines
                    raise where.error((*path, key), f"given twice (again on line {key_node.start_mark.line + 1})")
                seen.add(key)
                lines.setdefault((*path, key), key_node.start_mark.line + 1)
                stack.append((value, (*path, key)))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines.setdefault((*path, str(i)), item.start_mark.line + 1)
                stack.append((item, (*path, str(i))))
    return lines


def load_yaml_file(path: str | Path, what: str, normalize: Normalize = lambda path, key: key,
                   ) -> tuple[Any, dict[tuple[str, ...], int]]:
    """`read_text` then `load_yaml`: the value of a YAML file and the line of every key path."""
    return load_yaml(read_text(path, what), str(path), normalize)
