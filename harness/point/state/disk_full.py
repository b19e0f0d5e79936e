"""A full disk during a point: recognised wherever it is raised, and room kept for the point's last status.

`disk_full_error` finds ENOSPC (or EDQUOT, a quota) in an exception or what caused it, so the point runner
maps it to `failed: disk_full` in one place whatever write hit it. `StatusReserve` is a small file made in
the point's directory when the point starts; on a full disk the final status is written into its blocks,
cut to length and renamed over `status.json`: no new data block is needed. Where even that fails (a
copy-on-write filesystem needs new blocks to overwrite), the reserve is deleted and the blocks it frees
take an ordinary write.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from harness import SCHEMA_VERSION
from harness.artifacts import json_text, write_json

if TYPE_CHECKING:
    from harness.point.state.status import PointStatus

DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
RESERVE_FILE = ".status.reserve"
RESERVE_BYTES = 64 * 1024
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


class StatusReserve:
    """Room for the last write of `status.json` on a full disk (see the module docstring)."""

    def __init__(self, point_dir: Path):
        self.path = Path(point_dir) / RESERVE_FILE

    def make(self) -> None:
        with open(self.path, "wb") as fh:
            fh.write(os.urandom(RESERVE_BYTES))   # incompressible: a compressing filesystem allocates it too
            fh.flush()
            os.fsync(fh.fileno())

    def write_json(self, target: Path, data: dict[str, Any]) -> None:
        """Write `data` as `target` (with `schema_version` and secrets redacted, like
        `harness.artifacts.write_json`) through the reserve's blocks; with no reserve left, an ordinary write."""
        body = (json_text({"schema_version": SCHEMA_VERSION, **{k: v for k, v in data.items()
                                                                 if k != "schema_version"}}) + "\n").encode()
        if len(body) <= RESERVE_BYTES:
            try:
                fd = os.open(self.path, os.O_WRONLY)
                try:
                    view = memoryview(body)
                    while view:
                        view = view[os.write(fd, view):]
                    os.ftruncate(fd, len(body))
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.chmod(self.path, 0o644)
                os.replace(self.path, target)
                return
            except OSError:
                pass
        self.release()
        write_json(target, data)

    def release(self) -> None:
        self.path.unlink(missing_ok=True)
