"""Which results store is in use: `--db`, else `HARNESS_DB`, else the per-user SQLite file.

The per-user file is `$XDG_DATA_HOME/harness/results.sqlite3`, else `~/.local/share/harness/results.sqlite3`.
`HARNESS_DB=off` (or `--db off`) turns the store off: nothing is ingested automatically, and the commands that need a
store say so in one line. A value that starts with `postgresql://` or `postgres://` is a PostgreSQL URL (psycopg 3);
`sqlite:///PATH` or any other value is the path of a SQLite file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UserError

ENV = "HARNESS_DB"
OFF = "off"
FILE_NAME = "results.sqlite3"
_PG = re.compile(r"^postgres(?:ql)?://", re.IGNORECASE)
_SECRET = re.compile(r"(://[^:/@]*:)[^@/]*@")


@dataclass(frozen=True)
class Location:
    """A store: a SQLite file (`path`) or a PostgreSQL URL (`url`)."""

    kind: str              # "sqlite" | "postgresql"
    path: Path | None = None
    url: str | None = None

    @property
    def shown(self) -> str:
        """How the store is named in messages: the file, or the URL without its password."""
        if self.kind == "sqlite":
            return str(self.path)
        return _SECRET.sub(r"\1<redacted>@", self.url or "")


def default_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "harness" / FILE_NAME


def parse(text: str) -> Location | None:
    """The store `text` names; None for `off`."""
    value = text.strip()
    if not value:
        raise UserError("--db/HARNESS_DB: empty; give a SQLite file path, a postgresql:// URL or `off`")
    if value.lower() == OFF:
        return None
    if _PG.match(value):
        return Location("postgresql", url=value)
    if "://" in value and not value.startswith("sqlite:///"):
        scheme = value.split("://", 1)[0]
        raise UserError(f"--db/HARNESS_DB: {scheme}:// is not a store this harness knows; give a SQLite file path, "
                        "a postgresql:// URL or `off`")
    return Location("sqlite", path=Path(value.removeprefix("sqlite://")).expanduser())


def resolve(option: str | None = None) -> Location | None:
    """The store in use: `option` (`--db`), else `HARNESS_DB`, else the per-user SQLite file; None when off."""
    if option is not None:
        return parse(option)
    env = os.environ.get(ENV)
    if env is not None:
        return parse(env)
    return Location("sqlite", path=default_path())


def required(option: str | None = None) -> Location:
    """The store in use, for a command that cannot work without one."""
    location = resolve(option)
    if location is None:
        raise UserError("the results store is off (HARNESS_DB=off); pass --db PATH|URL or unset HARNESS_DB")
    return location
