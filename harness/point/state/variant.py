"""Where a hand-tuned run lands: a point run with `--set` overrides (or `--tag NAME`) is a *variant* of the
recipe and gets its own directory beside the recipe's baseline points, so tuning never overwrites them.

    <out>/<config_key>/conc<N>/                          the recipe as written (the baseline)
    <out>/<config_key>/variants/<variant>/conc<N>/       a variant: named by --tag, else by the overrides

A derived name is the overrides in the order given, without the `args.`/`env.`/`client.` prefixes
(`--set args.max-running-requests=64` → `max-running-requests=64`), joined with `,`; characters outside
`[A-Za-z0-9._,=+-]` become `_`, and a name longer than 80 characters is cut and ends in a hash of the
whole text. A secret's value never names a directory: an override that holds a secret (`harness.redact`:
by its key's name or by its value's shape), or that sets an environment variable or server argument outside
the allow-list of `harness.redact_plain` (`server.env.MY_SETTING=...`), is named by its key and a mark:
`--set server.env.HF_TOKEN=...` becomes `HF_TOKEN=redacted-<8 hex digits>`. The digits are a slow salted hash of the value (PBKDF2-SHA256,
200,000 rounds), so two different secrets name two variants while the name does not reveal the value; the
redactor keeps the mark as written, so the recorded variant name and its directory are the same text. Pure
functions.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from harness.errors import UserError
from harness.redact import override_holds_secret
from harness.redact_plain import override_outside_allow_list

VARIANTS_DIR = "variants"
MAX_NAME = 80
_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._,=+-]*$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._,=+-]")
_PREFIXES = ("server.args.", "server.env.", "args.", "env.", "client.")
_MARK_SALT = b"harness variant secret mark"
_MARK_ROUNDS = 200_000
_CUT_MARK = re.compile(r"=(?:r|re|red|reda|redac|redact|redacte|redacted|redacted-[0-9a-f]{0,7})$")  # a cut mark


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


@functools.lru_cache(maxsize=256)
def secret_mark(value: str) -> str:
    """`redacted-<8 hex digits>`: what names a secret value in a variant (distinct values, distinct marks)."""
    digest = hashlib.pbkdf2_hmac("sha256", value.encode(), _MARK_SALT, _MARK_ROUNDS)
    return "redacted-" + digest.hex()[:8]


def _named(override: str) -> str:
    """An override as it names a directory: one that holds a secret (by its key's name or its value's shape) or
    sets a variable or argument outside the allow-list is named by its key and the value's mark, so neither the
    value nor a placeholder the redactor would rewrite is in it."""
    key, _, value = override.partition("=")
    if not override_holds_secret(override) and not override_outside_allow_list(key):
        return override
    return f"{key}={secret_mark(value)}"


def _cut(name: str, room: int, whole: str) -> str:
    """`name` cut to `room` characters, ending in a hash of `whole` (what it was made from), never in part of a
    secret's mark."""
    digest = hashlib.sha256(whole.encode()).hexdigest()[:10]
    return _CUT_MARK.sub("", name[: room - 11]).rstrip("._,=+-") + "-" + digest


def derived_name(overrides: Sequence[str]) -> str:
    """The variant name of a set of overrides (see the module docstring)."""
    text = ",".join(_short(_named(o)) for o in overrides)
    name = _UNSAFE.sub("_", text).lstrip("._,=+-") or "override"
    return _cut(name, MAX_NAME, text) if len(name) > MAX_NAME else name


def suffixed(name: str, suffix: str) -> str:
    """A variant named after another, e.g. a search's re-test `NAME+duration_s=40`: within MAX_NAME characters,
    `name` cut (ending in a hash of it) where the two together would be longer."""
    if len(name) + len(suffix) <= MAX_NAME:
        return name + suffix
    return _cut(name, MAX_NAME - len(suffix), name) + suffix


def variant_name(overrides: Sequence[str], tag: str | None) -> str | None:
    """None for the recipe as written; the tag when given; else the name derived from the overrides."""
    if tag:
        return check_tag(tag)
    return derived_name(overrides) if overrides else None


def next_compare(curve_dir: Path, variant: str, run_baseline: str) -> str:
    """The line that says how to compare the variant `variant` of the curve in `curve_dir` (`<out>/<config_key>`)
    when the recipe's own points are not there: against another variant beside it that has results
    (`harness compare OTHER_DIR VARIANT_DIR`), else by running the recipe as written (`run_baseline`, the command
    that does) and then `harness compare CURVE_DIR --variant NAME`. Every command in it runs as printed."""
    import shlex

    here = curve_dir / VARIANTS_DIR / variant
    others = sorted(d for d in (curve_dir / VARIANTS_DIR).glob("*")
                    if d.name != variant and any(d.glob("conc*/bmk_agentic_*.json")))
    lead = f"no results of the recipe as written in {curve_dir} to compare the variant with"
    if others:
        return (f"{lead}; against the variant {others[0].name} beside it: harness compare "
                f"{shlex.quote(str(others[0]))} {shlex.quote(str(here))}")
    return (f"{lead}; run them first: {run_baseline}; then: harness compare {shlex.quote(str(curve_dir))} "
            f"--variant {shlex.quote(variant)}")
