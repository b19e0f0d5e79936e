"""`append-only: true` changelog entries (InferenceX code-owner Check 12): the change only adds points.

For every config key an append-only entry names, the base revision's points must all still be there unchanged:
a point is (fingerprint, concurrency, image) as `harness changed` reads it (`harness.check.changed`), so a
point whose recipe settings, image or golden curve changed counts as removed and added again. Added points must
run on the curve's image. New entries of one change are either all append-only or none. A config key the base
does not have is a new curve, not an append.
"""

from __future__ import annotations

import fnmatch

from harness.changelog import ChangelogEntry
from harness.check.changed import KeyChange

CHECK = "append-only (InferenceX Check 12)"


def _concs(points: list[tuple[str, int, str]]) -> str:
    return " ".join(f"c{conc}" for conc in sorted({conc for _, conc, _ in points}))


def key_problems(change: KeyChange) -> list[str]:
    """Why one config key's change is not an append (empty: it only adds points on the curve's image)."""
    if change.status == "added":
        return [f"{change.config_key} is a new config key (append-only adds points to an existing curve)"]
    if change.status == "removed":
        return [f"{change.config_key} was removed"]
    problems = [f"{change.config_key}: {reason} (it changes every existing point)" for reason in change.reasons]
    if change.removed:
        problems.append(f"{change.config_key}: {_concs(change.removed)} of the base changed or removed (existing "
                        "points must stay as they were)")
    images = {image for _, _, image in change.base_points}
    other = [p for p in change.added if p[2] not in images]
    if other:
        problems.append(f"{change.config_key}: added {_concs(other)} on image {other[0][2]}, the curve's is "
                        f"{', '.join(sorted(images))}")
    return problems


def problems(new: list[tuple[int, ChangelogEntry]], changes: list[KeyChange], source: str) -> list[str]:
    """Problems of the entries added since the base, `(index, entry)`, given the config keys that changed."""
    marked = [(i, e) for i, e in new if e.append_only]
    if not marked:
        return []
    out = []
    plain = [i for i, e in new if not e.append_only]
    if plain:
        out.append(f"{source}: [{', '.join(map(str, plain))}]: {CHECK}: regular entries may not be mixed with "
                   "append-only ones in one change")
    by_key = {c.config_key: c for c in changes}
    for index, entry in marked:
        for pattern in entry.config_keys:
            for key in fnmatch.filter(sorted(by_key), pattern):
                out += [f"{source}: [{index}]: {CHECK}: {p}" for p in key_problems(by_key[key])]
    return out
