"""Where a hand-tuned run lands: a point run with `--set` overrides (or `--tag NAME`) is a *variant* of the
recipe and gets its own directory beside the recipe's baseline points, so tuning never overwrites them.

    <out>/<config_key>/conc<N>/                          the recipe as written (the baseline)
    <out>/<config_key>/variants/<variant>/conc<N>/       a variant: named by --tag, else by the overrides

A derived name is the overrides in the order given, without the `args.`/`env.`/`client.` prefixes
(`--set args.max-running-requests=64` → `max-running-requests=64`), joined with `,`; characters outside
`[A-Za-z0-9._,=+-]` become `_`, and a name longer than 80 characters is cut and ends in a hash of the
whole text. A secret's value never names a directory: an override that holds a secret (`harness.redact`:
by its key's name or by its value's shape) is named by its key alone, `--set server.env.HF_TOKEN=...` becomes
`HF_TOKEN`, so the recorded variant name and its directory are the same text. Pure functions.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from harness.errors import UserError
from harness.redact import redact_override

VARIANTS_DIR = "variants"
MAX_NAME = 80
_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._,=+-]*$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._,=+-]")
_PREFIXES = ("server.args.", "server.env.", "args.", "env.", "client.")


def check_tag(tag: str) -> str:
    """A user's `--tag NAME`: one directory name (letters, digits, `._,=+-`), at most 80 characters."""
    if not _TAG.match(tag) or len(tag) > MAX_NAME:
        raise UserError(f"--tag {tag!r}: expected a name of letters, digits and ._,=+- (at most {MAX_NAME} "
                        "characters, starting with a letter or digit)")
    return tag


def _short(text: str) -> str:
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _named(override: str) -> str:
    """An override as it names a directory: one that holds a secret (by its key's name or its value's shape)
    is named by its key alone, so neither the value nor a placeholder the redactor would rewrite is in it."""
    return override.partition("=")[0] if redact_override(override) != override else override


def derived_name(overrides: Sequence[str]) -> str:
    """The variant name of a set of overrides (see the module docstring)."""
    text = ",".join(_short(_named(o)) for o in overrides)
    name = _UNSAFE.sub("_", text).lstrip("._,=+-") or "override"
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(text.encode()).hexdigest()[:10]
        name = name[: MAX_NAME - 11].rstrip("._,=+-") + "-" + digest
    return name


def variant_name(overrides: Sequence[str], tag: str | None) -> str | None:
    """None for the recipe as written; the tag when given; else the name derived from the overrides."""
    if tag:
        return check_tag(tag)
    return derived_name(overrides) if overrides else None
