"""What changed between two sides of a comparison: the image, SGLang, the client and its scenario, the recipe's
revision, the host and hardware, each recipe setting (the plan's settings, key by key) and the worker fingerprint
(`harness.point.fingerprints.fingerprint_diff`, per-launch values ignored), each as `what: baseline -> candidate`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from harness.point.fingerprints.fingerprint_diff import fingerprint_diff
from harness.store.entry import Entry

FIELDS = (("image", "image"), ("sglang_version", "SGLang"), ("client_version", "client"), ("scenario", "scenario"),
          ("recipe_revision", "recipe revision"), ("hardware", "hardware"), ("host", "host"))
MAX_FINGERPRINT_LINES = 20
MAX_LINE = 200


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """`(dotted.key, value)` of every leaf of a JSON value."""
    if isinstance(value, Mapping):
        for k in sorted(value):
            yield from flatten(value[k], f"{prefix}.{k}" if prefix else str(k))
    else:
        yield prefix, repr(value) if isinstance(value, str) and not value else str(value)


def _shown(values: set[str]) -> str:
    return "/".join(sorted(values)) if values else "-"


def settings_changes(a: Sequence[Entry], b: Sequence[Entry]) -> list[str]:
    def per_key(entries: Sequence[Entry]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for e in entries:
            for k, v in flatten(e.settings or {}):
                out.setdefault(k, set()).add(v)
        return out

    ka, kb = per_key(a), per_key(b)
    return [f"setting {k}: {_shown(ka.get(k, set()))} -> {_shown(kb.get(k, set()))}"
            for k in sorted(ka.keys() | kb.keys()) if ka.get(k) != kb.get(k)]


def fingerprint_changes(a: Sequence[Entry], b: Sequence[Entry]) -> list[str]:
    """The fingerprint diff of the newest run of each side, for the first fingerprint file both have."""
    fa = next((e.fingerprints for e in reversed(a) if e.fingerprints), None)
    fb = next((e.fingerprints for e in reversed(b) if e.fingerprints), None)
    if not fa or not fb:
        return []
    common = sorted(fa.keys() & fb.keys())
    if not common or not isinstance(fa[common[0]], dict) or not isinstance(fb[common[0]], dict):
        return []
    lines = fingerprint_diff(fa[common[0]], fb[common[0]])
    more = len(lines) - MAX_FINGERPRINT_LINES
    return [_cut(f"fingerprint {line}") for line in lines[:MAX_FINGERPRINT_LINES]] + \
        ([f"fingerprint: {more} more lines (harness fingerprint diff)"] if more > 0 else [])


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[:MAX_LINE - 1] + "…"


def changes(a: Sequence[Entry], b: Sequence[Entry]) -> list[str]:
    """Every difference between the two sides, as `what: baseline -> candidate`."""
    out = []
    for attr, label in FIELDS:
        sa = {str(v) for e in a if (v := getattr(e, attr)) is not None}
        sb = {str(v) for e in b if (v := getattr(e, attr)) is not None}
        if sa != sb:
            out.append(f"{label}: {_shown(sa)} -> {_shown(sb)}")
    return out + settings_changes(a, b) + fingerprint_changes(a, b)
