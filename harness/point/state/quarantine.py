"""A point whose record cannot be read keeps no row a collector would publish.

The published row (`bmk_agentic_*.json`) sits beside the record it was written with. When that record cannot be
read (truncated, corrupt, not a record), the point is failed (`record_corrupt`, `harness.point.state.truth`) and its
row describes nothing we can vouch for; but a collector that globs rows (InferenceX's takes every
`bmk_agentic_*.json` under a run) would still publish it. So the first reader that notices (`report`, `check
--results`, `export`, `status`, `ingest`, a sweep's resume) moves every row of the point into
`quarantine/<row>.quarantined` (a name no `*.json` glob matches) and appends why to `quarantine/why.txt`. The
record stays where it is, as the evidence. A re-run sets the whole attempt aside (`quarantine/` with it) and writes
a fresh row.

A point directory that cannot be changed (a read-only archive) keeps its row; the reader says so and reads on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness.artifacts import append_text, move_aside

QUARANTINE_DIR = "quarantine"
NOTE_FILE = "why.txt"
SUFFIX = ".quarantined"
ROW_GLOB = "bmk_agentic_*.json"


@dataclass(frozen=True)
class Quarantined:
    """What `quarantine_rows` did: the rows it moved (their names), and why it could not move one."""

    moved: tuple[str, ...] = ()
    error: str | None = None

    def words(self, point_dir: Path) -> str:
        """A clause for the reader's line: where the rows went, or that they could not be moved; '' when the
        point has no row and none was quarantined earlier."""
        if self.error is not None:
            return f"its row could not be moved aside ({self.error})"
        if self.moved or (Path(point_dir) / QUARANTINE_DIR / NOTE_FILE).is_file():
            return f"its row is set aside in {QUARANTINE_DIR}/ until the point is re-run"
        return ""


def rows_of(point_dir: Path) -> list[Path]:
    """The published rows in the point directory itself (not in `attempts/` or `quarantine/`)."""
    return sorted(p for p in Path(point_dir).glob(ROW_GLOB) if p.is_file() or p.is_symlink())


def quarantine_rows(point_dir: Path, why: str, now_ns: int | None = None) -> Quarantined:
    """Move the point's rows into `quarantine/`, the note first (a row is never set aside without its why)."""
    point_dir = Path(point_dir)
    rows = rows_of(point_dir)
    if not rows:
        return Quarantined()
    stamp = datetime.fromtimestamp((time.time_ns() if now_ns is None else now_ns) / 1e9, tz=UTC)
    qdir = point_dir / QUARANTINE_DIR
    moved: list[str] = []
    try:
        qdir.mkdir(exist_ok=True)
        append_text(qdir / NOTE_FILE, "".join(
            f"{stamp:%Y-%m-%dT%H:%M:%SZ} {row.name} -> {QUARANTINE_DIR}/{row.name}{SUFFIX}: the point's record "
            f"cannot be read ({why}); a re-run of the point writes a fresh row\n" for row in rows))
        for row in rows:
            move_aside(row, qdir / f"{row.name}{SUFFIX}")
            moved.append(row.name)
    except OSError as exc:
        return Quarantined(tuple(moved), f"{exc.filename or qdir}: {exc.strerror or exc}")
    return Quarantined(tuple(moved))
