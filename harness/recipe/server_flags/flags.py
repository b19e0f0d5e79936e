"""SGLang server flags as the pinned SGLang version's own argparse parser defines them.

The harness never hard-codes SGLang flag names: it validates server arguments against a flag table dumped
from `sglang.srt.server_args.ServerArgs.add_cli_args` (shipped in `harness/recipe/server_flags/flag_tables/<version>.json`,
regenerated from the released wheel with `tools/sglang_flag_table.py`, or `harness flags dump` inside the engine image). Validation reproduces what SGLang's
parser would do with the argv the harness renders: unknown flags, argparse prefix abbreviations
(`allow_abbrev`; an ambiguous prefix is an error), bad choices and values the flag's type rejects are
all reported before anything is launched, and every flag comes out in its full canonical spelling.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from harness.errors import UserError
from harness.recipe.server_flags.flag import Flag
from harness.recipe.server_flags.flag_values import BadValue, convert

DEFAULT_VERSION = "0.5.23"

_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z._+-]*")


class RawOption(BaseModel):
    """One argparse action as dumped: option strings, action class, type name, nargs, choices, default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    flags: tuple[str, ...]
    action: str
    type: str | None
    nargs: int | str | None
    choices: tuple[Any, ...] | None
    default: Any
    const: Any = None


class RawTable(BaseModel):
    """A flag table file (`harness flags dump` output)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int | None = None
    sglang_version: str
    source: str
    options: dict[str, RawOption]


def _flag_from_raw(key: str, raw: RawOption) -> Flag:
    dest = key.split("#")[0]  # a second action on one dest is keyed `dest#2` in the table
    if raw.action == "BooleanOptionalAction":
        positives = [f for f in raw.flags if not f.startswith("--no-")]
        negative = next((f for f in raw.flags if f.startswith("--no-")), None)
        return Flag(
            dest=dest, name=positives[0], aliases=tuple(positives[1:]), negative=negative,
            kind="boolean_optional", action=raw.action, default=raw.default,
        )
    takes_no_value = "StoreTrue" in raw.action or raw.nargs == 0
    return Flag(
        dest=dest, name=raw.flags[0], aliases=tuple(raw.flags[1:]),
        kind="store_true" if takes_no_value else "value", action=raw.action,
        type=raw.type, nargs=None if takes_no_value else raw.nargs,
        choices=raw.choices, default=raw.default,
    )


class FlagTable(BaseModel):
    """All server options of one SGLang version, indexed by every option string."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    source: str
    flags: tuple[Flag, ...]
    _by_string: dict[str, Flag] = PrivateAttr(default_factory=dict)
    _sorted: list[str] = PrivateAttr(default_factory=list)

    def model_post_init(self, context: Any, /) -> None:
        for flag in self.flags:
            for spelling in flag.spellings:
                self._by_string[spelling] = flag
        self._sorted = sorted(self._by_string)

    @property
    def option_strings(self) -> list[str]:
        """Every option string of the table, sorted."""
        return list(self._sorted)

    def get(self, name: str) -> Flag | None:
        """The flag whose option string is exactly `name` (with or without `--`), else None."""
        return self._by_string.get(_dashed(name))

    def resolve(self, name: str) -> Flag:
        """The flag `name` selects, as SGLang's argparse would: exact spelling, alias, or unique prefix.

        Raises UserError for an unknown flag (with close spellings) or an ambiguous prefix (listing the
        candidates). A prefix that matches several spellings is ambiguous even when they belong to one
        option, the strictest reading of argparse's `allow_abbrev` across Python versions.
        """
        return self._by_string[self.match(name)]

    def match(self, name: str) -> str:
        """The option string `name` selects (itself, or the one spelling it is a prefix of)."""
        spelled = _dashed(name)
        if "=" in spelled:
            raise UserError(f"{spelled}: write the flag name alone and give its value separately")
        if spelled in self._by_string:
            return spelled
        matches = self._with_prefix(spelled) if len(spelled) > 2 else []
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise UserError(
                f"{spelled}: ambiguous in SGLang {self.version}: could match {', '.join(matches)} "
                "(write the full flag name)"
            )
        close = difflib.get_close_matches(spelled, self.option_strings, n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(close)}?" if close else "no similar flag exists"
        raise UserError(f"{spelled}: not a server flag of SGLang {self.version}; {hint}")


    def abbreviated(self, name: str) -> str | None:
        """The option string that `name` (with or without `--`) abbreviates, as SGLang's argparse reads a unique
        prefix; None when `name` is a spelling of its own, unknown or ambiguous."""
        spelled = _dashed(name)
        if spelled in self._by_string or "=" in spelled or len(spelled) <= 2:
            return None
        matches = self._with_prefix(spelled)
        return matches[0] if len(matches) == 1 else None

    def _with_prefix(self, prefix: str) -> list[str]:
        start = bisect.bisect_left(self._sorted, prefix)
        end = start
        while end < len(self._sorted) and self._sorted[end].startswith(prefix):
            end += 1
        return self._sorted[start:end]


def _dashed(name: str) -> str:
    name = str(name).strip()
    return name if name.startswith("-") else f"--{name}"


def tables_dir() -> Path:
    """The directory holding the shipped flag tables."""
    return Path(__file__).resolve().parent / "flag_tables"


def available_versions(directory: Path | None = None) -> list[str]:
    """SGLang versions with a flag table, oldest first."""
    root = directory or tables_dir()
    stems = [p.stem for p in root.glob("*.json")]
    return sorted(stems, key=lambda v: [int(x) if x.isdigit() else x for x in re.split(r"[.+-]", v)])


def load_table(version: str = DEFAULT_VERSION, directory: Path | None = None) -> FlagTable:
    """The flag table of SGLang `version` (shipped tables unless `directory` is given)."""
    return _load_table(str(version), directory or tables_dir())


@lru_cache(maxsize=16)
def _load_table(version: str, root: Path) -> FlagTable:
    known = available_versions(root)
    if not _VERSION.fullmatch(version) or version not in known:
        raise UserError(f"no SGLang flag table for version {version!r} (available: {', '.join(known)})")
    path = root / f"{version}.json"
    return table_from_dict(json.loads(path.read_text()), str(path))


def table_from_dict(data: dict[str, Any], where: str) -> FlagTable:
    """Build a FlagTable from a parsed flag-table file; `where` names the file in errors."""
    try:
        raw = RawTable.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{where}: {loc or '<root>'}: {first['msg']}") from None
    flags = tuple(_flag_from_raw(dest, opt) for dest, opt in raw.options.items())
    return FlagTable(version=raw.sglang_version, source=raw.source, flags=flags)


def validate_args(table: FlagTable, args: dict[str, Any], where: str) -> dict[str, Any]:
    """Check server arguments against `table`; return them keyed by canonical full flag spelling.

    `args` maps flag names (full, alias or unambiguous prefix; with or without `--`) to values:
    true/false for flags that take no value, a list for multi-value flags, otherwise a scalar.
    `--no-X` spellings become `--X: false`. Errors are UserErrors prefixed with `where` (e.g.
    "recipes/x.yaml: base.server_args") and the flag as written.
    """
    out: dict[str, Any] = {}
    written: dict[str, str] = {}
    for key, value in args.items():
        try:
            spelling = table.match(key)
        except UserError as exc:
            raise UserError(f"{where}.{exc}") from None
        flag = table.resolve(spelling)
        negated = spelling == flag.negative
        try:
            converted = convert(flag, value)
        except BadValue as exc:
            raise UserError(f"{where}.{_dashed(key)}: {exc}") from None
        if negated:
            converted = not converted
        if flag.name in out:
            raise UserError(
                f"{where}.{_dashed(key)}: {flag.name} is already given (as {written[flag.name]}); give it once"
            )
        out[flag.name] = converted
        written[flag.name] = _dashed(key)
    return out


def _token(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def render_argv(table: FlagTable, args: dict[str, Any]) -> list[str]:
    """The argv tokens for `args` in their order: full flag spellings, store_true flags bare (omitted when
    false), `--no-X` for a false BooleanOptionalAction, multi-value flags followed by each value."""
    argv: list[str] = []
    for name, value in validate_args(table, args, "server_args").items():
        flag = table.resolve(name)
        if flag.kind == "store_true":
            if value:
                argv.append(flag.name)
        elif flag.kind == "boolean_optional":
            argv.append(flag.name if value else str(flag.negative))
        elif flag.takes_list:
            argv.append(flag.name)
            argv.extend(_token(v) for v in value)
        elif value is None:
            argv.append(flag.name)
        else:
            argv.extend((flag.name, _token(value)))
    return argv
