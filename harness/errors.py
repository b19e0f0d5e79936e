"""Errors users see: one line, exit status 2 (see `harness.cli`)."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in what the user gave us (a file, a flag, a value).

    The message is one line naming the file, the key path and what was expected.
    """


def pydantic_error_line(source: str, exc: object) -> str:
    """Render the first error of a pydantic ValidationError as `source: key.path: message`."""
    errors = exc.errors()  # type: ignore[attr-defined]
    first = errors[0]
    loc = ".".join(str(p) for p in first.get("loc", ()))
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{source}: {loc or '<root>'}: {first.get('msg')}{more}"
