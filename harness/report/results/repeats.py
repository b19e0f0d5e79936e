"""The runs of one point that `compare` pools: the newest run and the earlier identical runs kept under its
`attempts/` (`harness run --repeat N` leaves N runs there; `harness.point.state.attempt`).

An earlier run counts as a repeat of the newest when its record says it completed and names the same
recipe fingerprint, overrides, image, engine, concurrency and requested duration: the same point measured
again, not an earlier version of it. Each run's per-request samples are kept apart, so a comparison can
pool their requests for its interval and still see how far the runs moved from one another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.inputs.json_input import read_json_object
from harness.point.record.samples_file import RequestSamples
from harness.point.state.attempt import ATTEMPTS_DIR
from harness.report.analysis.spread import repeats_json, spreads

RECORD_FILE = "point_result.json"
SAME = ("recipe_fingerprint", "overrides", "image", "engine", "conc")


def _record(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / RECORD_FILE
    if not path.is_file() or path.is_symlink():
        return None
    try:
        return read_json_object(path, "point record")
    except UserError:
        return None   # an unreadable earlier run is not pooled


def _duration(record: Mapping[str, Any]) -> Any:
    client = record.get("client")
    return client.get("requested_duration_s") if isinstance(client, dict) else None


def is_repeat(newest: Mapping[str, Any], earlier: Mapping[str, Any]) -> bool:
    """`earlier` completed and measured the same point as `newest`."""
    return (earlier.get("state") == "completed" and all(earlier.get(k) == newest.get(k) for k in SAME)
            and _duration(earlier) == _duration(newest))


def repeat_dirs(point_dir: Path) -> list[Path]:
    """The newest run's directory first, then each earlier identical run's (oldest first); just the newest
    where it has no record of ours (an InferenceX row) or no earlier runs."""
    newest = _record(point_dir)
    attempts = point_dir / ATTEMPTS_DIR
    if newest is None or not attempts.is_dir() or attempts.is_symlink():
        return [point_dir]
    earlier = [d for d in sorted(attempts.iterdir()) if d.is_dir() and not d.is_symlink()]
    return [point_dir, *(d for d in earlier if (r := _record(d)) is not None and is_repeat(newest, r))]


def run_samples(point_dir: Path, samples_in: Callable[[Path], RequestSamples | None]) -> list[RequestSamples]:
    """The per-request samples of each run of the point that has them (`samples_in` reads one run's)."""
    found = (samples_in(d) for d in repeat_dirs(point_dir))
    return [s for s in found if s is not None]


def repeat_records(point_dir: Path) -> list[dict[str, Any]]:
    """The records of each run of the point (`repeat_dirs`), for the Student-t interval over its repeats; empty for a
    point run once."""
    dirs = repeat_dirs(point_dir)
    records = [r for d in dirs if (r := _record(d)) is not None]
    return records if len(records) >= 2 else []


def repeat_block(point_dir: Path) -> dict[str, Any] | None:
    """The Student-t intervals over a point's repeated runs (`repeats.json`'s form), or None for a point run once."""
    records = repeat_records(point_dir)
    if not records:
        return None
    return repeats_json(spreads(records), len(records), [str(r.get("attempt")) for r in records])
