"""A full disk during a point: recognised wherever it is raised, and room kept for the point's last status.

`disk_full_error` finds ENOSPC (or EDQUOT, a quota) in an exception or what caused it, so the point runner
maps it to `failed: disk_full` in one place whatever write hit it. `run_guarded` keeps a
`StatusReserve` (`harness.point.state.status_reserve`) while a point runs, so a full disk is still recorded.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from harness.point.state.status_reserve import StatusReserve

if TYPE_CHECKING:
    from harness.point.state.status import PointStatus

DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
T = TypeVar("T")
MIN_FREE_BYTES = 64 * 1024


def disk_full_error(exc: BaseException) -> OSError | None:
    """The ENOSPC/EDQUOT error in `exc` or the chain of exceptions that led to it, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, OSError) and current.errno in DISK_FULL_ERRNOS:
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def free_bytes(path: Path) -> int:
    """Bytes this process may still write on the filesystem holding `path` (root may use the blocks the
    filesystem reserves for root)."""
    st = os.statvfs(path)
    return (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize


class FreeSpaceCheck:
    """While the server loads and AIPerf runs the harness itself writes little, and AIPerf carries on when its
    writes fail (its records are lost): so the filesystem of the point is checked every `every_s`, and one
    with less than `MIN_FREE_BYTES` left raises ENOSPC like a failed write would."""

    def __init__(self, path: Path, every_s: float = 1.0):
        self.path, self.every_s = Path(path), every_s
        self.next_at = time.monotonic()

    def __call__(self) -> None:
        now = time.monotonic()
        if now < self.next_at:
            return
        self.next_at = now + self.every_s
        if free_bytes(self.path) < MIN_FREE_BYTES:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))


def mount_point(path: Path) -> Path:
    """The mount point of the filesystem holding `path` (or its nearest existing parent)."""
    path = Path(os.path.abspath(path))
    while not path.exists():
        path = path.parent
    while not os.path.ismount(path):
        path = path.parent
    return path


def disk_full_reason(err: OSError, point_dir: Path) -> str:
    """`disk_full: <what the system said> at <file> (filesystem <mount point>: <N> bytes free)`."""
    target = Path(os.fsdecode(err.filename)) if err.filename else Path(point_dir)
    fs = mount_point(target)
    try:
        free = f"{free_bytes(fs)} bytes free"
    except OSError:
        free = "free space unknown"
    return f"disk_full: {err.strerror or 'no space left'} at {target} (filesystem {fs}: {free})"


def record_disk_full(err: OSError, run_dir: Path, status: PointStatus, reserve: StatusReserve, exit_status: int,
                     what: str = "point") -> str:
    """`failed: disk_full` in `status.json` (written through the reserve) and one line on stderr naming the
    file and the filesystem; returns the reason."""
    reason = disk_full_reason(err, run_dir)
    try:
        status.finish("failed", reason, exit_status, reserve=reserve)
        recorded = f"{status.path}: failed"
    except OSError as exc:
        recorded = f"{status.path} could not be written ({exc.strerror or exc})"
    print(f"error: {reason}; the {what} is stopped, {recorded}", file=sys.stderr, flush=True)
    return reason


def run_guarded(run_dir: Path, status: PointStatus, exit_status: int, body: Callable[[StatusReserve], T],
                on_full: Callable[[str], T], what: str = "point") -> T:
    """Run `body` with a status reserve kept in `run_dir`; a full disk raised anywhere in it is recorded
    (`record_disk_full`) and `on_full(reason)` gives the outcome. The reserve is always released."""
    reserve = StatusReserve(run_dir)
    try:
        return body(reserve)
    except Exception as exc:
        err = disk_full_error(exc)
        if err is None:
            raise
        return on_full(record_disk_full(err, run_dir, status, reserve, exit_status, what=what))
    finally:
        reserve.release()
