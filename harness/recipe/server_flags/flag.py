"""One SGLang server option as the pinned version's argparse parser defines it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

FlagKind = Literal["store_true", "boolean_optional", "value"]


class Flag(BaseModel):
    """One SGLang server option.

    `name` is the canonical spelling (the first option string), `aliases` the other spellings of the same
    option; `negative` is the `--no-…` spelling of a BooleanOptionalAction. `type` is the name of the
    argparse type callable (`int`, `float`, `str`, `loads`, …) or None when the table does not record it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    dest: str
    name: str
    aliases: tuple[str, ...] = ()
    negative: str | None = None
    kind: FlagKind
    action: str
    type: str | None = None
    nargs: int | str | None = None
    choices: tuple[Any, ...] | None = None
    default: Any = None

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every option string that selects this flag (negative spelling included)."""
        return (self.name, *self.aliases, *((self.negative,) if self.negative else ()))

    @property
    def takes_list(self) -> bool:
        return self.kind == "value" and (self.nargs in ("+", "*") or isinstance(self.nargs, int))
