"""One writer per point: an advisory lock on a point's (or an eval's) directory, naming its holder.

`<run dir>/.writer.lock` is held with `flock` for as long as a `run`, `sweep`, `eval` or Slurm task writes
the directory, and holds its holder: pid, host, when it took the lock (ns, UTC) and its command line. A
second writer is refused at once with one line naming the holder (exit status 2). The kernel drops the lock
when its holder ends, however it ends (SIGKILL included): a lock whose holder is gone is simply taken over.

`holder_gone` lets readers tell a stale `running` status from a live one: the lock can be taken, so nobody
writes the directory now.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from harness.artifacts import pwrite_text
from harness.errors import UserError

LOCK_FILE = ".writer.lock"
MAX_HOLDER_BYTES = 4096


def holder_text(holder: dict[str, Any]) -> str:
    """`pid 123 on host-a since 2026-12-01T12:00:00Z (harness run ...)`, from what the lock file holds."""
    since = holder.get("start_ns")
    when = datetime.fromtimestamp(since / 1e9, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ") \
        if isinstance(since, int) and not isinstance(since, bool) else "an unknown time"
    command = holder.get("command")
    tail = f" ({command})" if isinstance(command, str) and command else ""
    return f"pid {holder.get('pid', '?')} on {holder.get('host', '?')} since {when}{tail}"


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        raw = os.pread(fd, MAX_HOLDER_BYTES, 0)
        data = json.loads(raw.decode("utf-8", "replace")) if raw else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class PointBusy(UserError):
    """Another process writes this directory now."""


class PointLock:
    """The writer's lock on `run_dir` (a context manager); `acquire` raises `PointBusy` naming the holder."""

    def __init__(self, run_dir: Path, command: str | None = None):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self.command = command if command is not None else " ".join(["harness", *sys.argv[1:]])[:512]
        self._fd: int | None = None

    def acquire(self, patience_s: float = 0.5) -> None:
        """Take the lock, or raise `PointBusy` naming its holder. A reader's brief look (`holder_gone`) is
        waited out for up to `patience_s`; a writer holding it is not."""
        deadline = time.monotonic() + patience_s
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                raise PointBusy(f"{self.run_dir}: another harness writes this point now "
                                f"({holder_text(self.holder())}); wait for it to end or stop it, or give "
                                "another --out or --tag")
            time.sleep(0.05)

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; False (nothing taken) if somebody does."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError:
            pass   # a filesystem without flock (some NFS mounts): the holder is still recorded, readers fall back
            # to the recorded pid (harness.point.state.status)
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "start_ns": time.time_ns(),
                  "command": self.command}
        try:
            os.ftruncate(fd, 0)
            pwrite_text(fd, json.dumps(holder))   # redacted: a --set secret never reaches the file
        except OSError as exc:   # a full disk: the lock is not taken, and the error names the lock file
            os.close(fd)
            raise OSError(exc.errno, exc.strerror, str(self.path)) from exc
        self._fd = fd
        return True

    def holder(self) -> dict[str, Any]:
        """What the lock file says of its holder (empty when it says nothing readable)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return {}
        try:
            return _read_holder(fd)
        finally:
            os.close(fd)

    def release(self) -> None:
        """Give the lock up (the file stays: removing it would let two writers lock two different files)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)   # closing the only descriptor drops the flock
        self._fd = None

    def __enter__(self) -> PointLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def check_free(run_dir: Path) -> None:
    """Refuse (`PointBusy`, naming the holder) when another process writes `run_dir` now; takes nothing."""
    lock = PointLock(run_dir)
    if holder_gone(run_dir) is False:
        lock.acquire()   # waits out a reader's look; raises PointBusy naming a writer
        lock.release()


def holder_gone(run_dir: Path) -> bool | None:
    """True when nobody holds `run_dir`'s lock (its last holder, if any, has ended), False while a process
    (this one included) holds it, None when the directory was never locked (made by an older harness)."""
    path = Path(run_dir) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return False   # there, but not ours to open: somebody else's
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    finally:
        os.close(fd)
    return True
