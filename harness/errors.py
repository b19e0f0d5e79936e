"""Errors users see: one line, exit status 2 (see `harness.cli`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class UserError(Exception):
    """A mistake in what the user gave us (a file, a flag, a value).

    The message is one line naming the file, the key path and what was expected; `hint`, when given, is a second
    line saying what to do instead (a command that works).
    """

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """` (did you mean 'x'?)` naming the closest candidates (at most three), or '' when none is close."""
    import difflib

    close = difflib.get_close_matches(word, list(dict.fromkeys(candidates)), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def and_more(rest: Sequence[str], most: int = 10) -> str:
    """` (and N more: a; b)` naming each of `rest` (the first `most`, then how many are left unnamed); '' for
    none."""
    if not rest:
        return ""
    unnamed = f"; {len(rest) - most} unnamed" if len(rest) > most else ""
    return f" (and {len(rest)} more: {'; '.join(rest[:most])}{unnamed})"


def pydantic_error_line(source: str, exc: object) -> str:
    """Render the first error of a pydantic ValidationError as `source: key.path: message`, naming the others."""
    errors = exc.errors()  # type: ignore[attr-defined]
    lines = [f"{'.'.join(str(p) for p in e.get('loc', ())) or '<root>'}: {e.get('msg')}" for e in errors]
    return f"{source}: {lines[0]}{and_more(lines[1:])}"


MAX_MESSAGE_CHARS = 600


def one_line(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A message as one printable line of at most `limit` characters (line breaks and controls escaped)."""
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in message)
    return text if len(text) <= limit else text[: limit - 1] + "…"
