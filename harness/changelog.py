"""`perf-changelog.yaml`: the append-only record of which curves a change re-benchmarks.

The file is a YAML list of entries:

    - config-keys:                # recipes whose curves the change affects (`*` wildcards allowed)
        - musespark-fp4-gb300-sglang-agentic-dflash
      scenario-type:              # optional
        - agentic-coding
      description:
        - "What changed, in the words engineers use."
      pr-link: https://github.com/<owner>/<repo>/pull/<number>   (…/pull/XXX while drafting)
      append-only: true           # optional: the change only adds points (checked against --base)

Entries are only ever appended: compared with a base revision, every earlier entry must be unchanged and
in place. The bytes must be clean: UTF-8, LF line endings, no tabs, no NUL, no trailing whitespace, a
final newline; duplicate mapping keys are rejected (YAML would silently keep the last one).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import UserError
from harness.inputs.yaml_input import load_yaml, read_text

FILE_NAME = "perf-changelog.yaml"
PR_LINK = r"^https://github\.com/[A-Za-z0-9][\w.-]*/[\w.-]+/pull/(\d+|XXX)$"


class ChangelogEntry(BaseModel):
    """One appended entry: the config keys it re-benchmarks, why, and the pull request."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    config_keys: list[str] = Field(alias="config-keys", min_length=1,
                                   description="recipe config keys (or `*` wildcards) whose curves change")
    description: list[str] = Field(min_length=1, description="what changed, one string per item")
    pr_link: str = Field(alias="pr-link", pattern=PR_LINK,
                         description="https://github.com/<owner>/<repo>/pull/<n> (…/pull/XXX while drafting)")
    scenario_type: list[Literal["agentic-coding", "fixed-seq-len"]] | None = Field(
        None, alias="scenario-type", min_length=1, description="which scenarios to run (default: all)")
    append_only: bool | None = Field(
        None, alias="append-only", description="the change only adds points to the named curves: every point "
                                               "of the base revision stays as it was (InferenceX Check 12; "
                                               "`harness changelog validate --base REV` checks it)")

    @field_validator("config_keys", "description")
    @classmethod
    def _non_blank(cls, v: list[str]) -> list[str]:
        for item in v:
            if not item.strip():
                raise ValueError("empty item")
        if len(set(v)) != len(v):
            raise ValueError("an item is listed twice")
        return v


class ChangelogError(Exception):
    """A changelog text that is not valid YAML or not a list of valid entries (one line: file, entry, key)."""


def hygiene_problems(data: bytes, source: str) -> list[str]:
    """Byte-level problems, one line each: `file:line: what`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = data[:exc.start].count(b"\n") + 1
        return [f"{source}:{at}: not UTF-8 (byte {data[exc.start]:#04x})"]
    problems = []
    for number, line in enumerate(text.split("\n"), start=1):
        if "\r" in line:
            problems.append(f"{source}:{number}: CR line ending (use LF)")
        if "\t" in line:
            problems.append(f"{source}:{number}: tab character (indent with spaces)")
        if "\x00" in line:
            problems.append(f"{source}:{number}: NUL byte")
        if line.rstrip("\r") != line.rstrip("\r").rstrip():
            problems.append(f"{source}:{number}: trailing whitespace")
    if text and not text.endswith("\n"):
        problems.append(f"{source}: no newline at the end of the file")
    if text.endswith("\n\n"):
        problems.append(f"{source}: blank lines at the end of the file")
    return problems


def parse_entries(text: str, source: str) -> list[ChangelogEntry]:
    """The entries of a changelog text; raises ChangelogError with `file[:line]: key.path: what` on a mistake."""
    try:
        raw, lines = load_yaml(text, source)
    except UserError as exc:
        raise ChangelogError(str(exc)) from None
    if raw is None or raw == []:
        raise ChangelogError(f"{source}: <root>: no entries (a changelog is a list of at least one entry)")
    if not isinstance(raw, list):
        raise ChangelogError(f"{source}: <root>: expected a list of entries")
    entries = []
    for index, item in enumerate(raw):
        try:
            entries.append(ChangelogEntry.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = tuple(str(p) for p in first["loc"])
            msg = str(first["msg"]).removeprefix("Value error, ")
            line = next((lines[(str(index), *loc[:n])] for n in range(len(loc), -1, -1)
                         if (str(index), *loc[:n]) in lines), None)
            at = f"{source}:{line}" if line else source
            raise ChangelogError(f"{at}: [{index}]{'.' + '.'.join(loc) if loc else ''}: {msg}") from None
    return entries


def _entry_json(entry: ChangelogEntry) -> dict[str, Any]:
    return entry.model_dump(by_alias=True, exclude_none=True)


def append_only_problems(base: list[ChangelogEntry], new: list[ChangelogEntry], base_text: str, new_text: str,
                         source: str, base_name: str) -> list[str]:
    """Problems if `new` does not keep every entry (and every line) of `base` unchanged at its start."""
    problems = []
    for index, old in enumerate(base):
        if index >= len(new):
            problems.append(f"{source}: [{index}]: entry for {', '.join(old.config_keys)} was deleted "
                            f"(entries in {base_name} are never removed)")
            continue
        if _entry_json(new[index]) != _entry_json(old):
            changed = sorted(k for k, v in _entry_json(old).items() if _entry_json(new[index]).get(k) != v)
            changed += sorted(k for k in _entry_json(new[index]) if k not in _entry_json(old))
            problems.append(f"{source}: [{index}]: entry for {', '.join(old.config_keys)} was edited "
                            f"({', '.join(changed) or 'moved'}); append a new entry instead")
    if not problems and not new_text.startswith(base_text):
        old_lines, new_lines = base_text.split("\n"), new_text.split("\n")
        line = next(i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1) if a != b) \
            if any(a != b for a, b in zip(old_lines, new_lines, strict=False)) else len(new_lines)
        problems.append(f"{source}:{line}: line changed since {base_name} (only appending is allowed)")
    return problems


def unknown_keys(entries: list[ChangelogEntry], known: set[str], source: str, first_index: int = 0) -> list[str]:
    """Config keys (or wildcards) of `entries` that match no recipe's config key."""
    problems = []
    for offset, entry in enumerate(entries):
        for key in entry.config_keys:
            if not fnmatch.filter(sorted(known), key):
                hint = f" (known: {', '.join(sorted(known))})" if known else ""
                problems.append(f"{source}: [{first_index + offset}].config-keys: {key!r} matches no recipe{hint}")
    return problems


def recipe_config_keys(recipes_dir: Path) -> set[str]:
    """The config keys of `recipes_dir/*.yaml` (read without full validation: only the key is needed)."""
    keys = set()
    for path in sorted(recipes_dir.glob("*.yaml")):
        try:
            raw, _ = load_yaml(read_text(path, "recipe"), str(path))
        except UserError:
            continue
        if isinstance(raw, dict) and isinstance(raw.get("config_key"), str):
            keys.add(raw["config_key"])
    return keys


def validate(data: bytes, source: str, base: bytes | None = None, base_name: str = "the base revision",
             known_keys: set[str] | None = None) -> tuple[list[ChangelogEntry], list[str]]:
    """Every problem of a changelog: bytes, schema, append-only against `base` (None: no earlier version),
    and config keys of the entries added since `base` that match no recipe (when `known_keys` is given)."""
    problems = hygiene_problems(data, source)
    if any("not UTF-8" in problem for problem in problems):
        return [], problems
    text = data.decode("utf-8")
    try:
        entries = parse_entries(text, source)
    except ChangelogError as exc:
        return [], [*problems, str(exc)]
    first_new = 0
    if base is not None:
        base_text = base.decode("utf-8", errors="replace")
        try:
            base_entries = parse_entries(base_text, f"{base_name}:{FILE_NAME}")
        except ChangelogError:
            base_entries = []
        problems += append_only_problems(base_entries, entries, base_text, text, source, base_name)
        first_new = len(base_entries)
    if known_keys is not None:
        problems += unknown_keys(entries[first_new:], known_keys, source, first_new)
    return entries, problems
