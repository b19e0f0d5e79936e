"""Attempts: each run of a point (or of an eval) is an attempt with an id, and a new attempt starts in an
empty directory.

    <point dir>/                       the newest attempt: status.json, logs, aiperf/, the row and the record
    <point dir>/attempts/<id>/         an earlier attempt, set aside whole when the next one starts

So nothing of an earlier attempt (its AIPerf records, power samples, fingerprint) is ever read, or
published, as the new one's: the row and the record always describe the attempt that wrote them, and both
name it (`attempt` in `status.json` and `point_result.json`). Readers of results (report, export,
evals) skip `attempts/`. The caller holds the point's lock (`harness.point.state.ownership`) while it sets an
attempt aside.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from harness.artifacts import read_json, sync_dir
from harness.errors import UserError
from harness.point.state.ownership import LOCK_FILE
from harness.point.state.status import STATUS_FILE, reconcile_killed
from harness.point.state.status_reserve import RESERVE_FILE

ATTEMPTS_DIR = "attempts"
_KEPT = (ATTEMPTS_DIR, LOCK_FILE)


def new_attempt_id(now_ns: int | None = None) -> str:
    """`20261201T123456Z-1a2b3c`: when the attempt started (UTC) and a random suffix."""
    now = time.time_ns() if now_ns is None else now_ns
    stamp = datetime.fromtimestamp(now / 1e9, tz=UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


def _earlier_id(run_dir: Path) -> str:
    """The id the earlier attempt recorded, else one made from when its status (or directory) was written."""
    status = run_dir / "status.json"
    try:
        recorded = read_json(status).get("attempt")
    except (OSError, ValueError, AttributeError, UserError):   # none, unreadable or not a mapping
        recorded = None
    if isinstance(recorded, str) and recorded and "/" not in recorded and not recorded.startswith("."):
        return recorded
    try:
        mtime = (status if status.exists() else run_dir).stat().st_mtime_ns
    except OSError:
        mtime = time.time_ns()
    return "earlier-" + datetime.fromtimestamp(mtime / 1e9, tz=UTC).strftime("%Y%m%dT%H%M%SZ")


def set_aside(run_dir: Path) -> Path | None:
    """Move every file of the earlier attempt in `run_dir` into `attempts/<its id>/`; the directory it went
    to, or None when there was nothing to set aside."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return None
    (run_dir / RESERVE_FILE).unlink(missing_ok=True)   # an ended attempt's reserve is of no use
    entries = [e for e in run_dir.iterdir() if e.name not in _KEPT]
    if not entries:
        return None
    base = _earlier_id(run_dir)
    target = run_dir / ATTEMPTS_DIR / base
    n = 1
    while target.exists():
        n += 1
        target = run_dir / ATTEMPTS_DIR / f"{base}.{n}"
    target.mkdir(parents=True)
    for entry in entries:
        os.replace(entry, target / entry.name)
    sync_dir(target)
    sync_dir(run_dir)
    return target


def start_attempt(run_dir: Path) -> str:
    """Begin a new attempt in `run_dir` (the caller holds its lock): an earlier attempt left `running` by a
    writer that is gone is recorded as `failed: harness_killed`, then set aside; returns the new attempt's id."""

    status = Path(run_dir) / STATUS_FILE
    try:
        prior = read_json(status) if status.is_file() else None
    except (OSError, ValueError):
        prior = None
    if isinstance(prior, dict) and prior.get("state") == "running":
        reconcile_killed(Path(run_dir), prior)
    set_aside(run_dir)
    return new_attempt_id()


def in_earlier_attempt(path: Path, root: Path) -> bool:
    """`path` (below `root`) lies inside an earlier attempt's directory."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        parts = Path(path).parts
    return ATTEMPTS_DIR in parts[:-1]


def current_only(paths: Iterable[Path], root: Path) -> list[Path]:
    """`paths` without those inside earlier attempts."""
    return [p for p in paths if not in_earlier_attempt(p, root)]
