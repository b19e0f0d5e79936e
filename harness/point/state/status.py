"""`status.json` of a point: its state, the reason, and when each phase began (wall-clock ns, UTC).

States: running (while the point runs), then completed | failed | cancelled. Phases: launching, loading,
ready, warmup, profiling, draining, collecting. Each phase change is also written to the point's
`harness.log` as a marker line.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.artifacts import append_text, read_json, write_json
from harness.point.state.ownership import PointLock, holder_gone
from harness.point.state.status_reserve import RESERVE_FILE, StatusReserve

STATUS_FILE = "status.json"
FINAL_STATES = ("completed", "failed", "cancelled")


class PointStatus:
    def __init__(self, point_dir: Path, conc: int, config_key: str):
        self.path = Path(point_dir) / STATUS_FILE
        self.log_path = Path(point_dir) / "harness.log"
        self.data: dict[str, Any] = {"config_key": config_key, "conc": conc, "state": "running",
                                     "reason": None, "phase": None, "phases": {}, "exit_status": None,
                                     "harness_pid": os.getpid(), "harness_host": socket.gethostname()}

    def phase(self, name: str, detail: str = "") -> None:
        now = time.time_ns()
        self.data["phase"] = name
        self.data["phases"][name] = now
        self._log(now, f"[phase] {name}{(' ' + detail) if detail else ''}")
        self.save()

    def note(self, message: str) -> None:
        self._log(time.time_ns(), message)

    def _log(self, now_ns: int, message: str) -> None:
        stamp = datetime.fromtimestamp(now_ns / 1e9, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        append_text(self.log_path, f"{stamp} {message}\n")

    def finish(self, state: str, reason: str | None, exit_status: int, reserve: StatusReserve | None = None,
               **extra: Any) -> None:
        """The final state. With `reserve` (the disk is full) the status is written first, through the
        reserve's blocks, and the log line only if there is room for it."""
        assert state in FINAL_STATES
        self.data.update(state=state, reason=reason, exit_status=exit_status, ended_ns=time.time_ns(), **extra)
        line = f"[state] {state}{(': ' + reason) if reason else ''}"
        if reserve is None:
            self.note(line)
            self.save()
            return
        reserve.write_json(self.path, self.data)
        with contextlib.suppress(OSError):
            self.note(line)

    def save(self) -> None:
        write_json(self.path, self.data)


def shown_phase(status: dict[str, Any]) -> str | None:
    """The phase a status view shows: the current one while the point runs; for a completed point none (it is
    done, not `collecting`); for a failed or cancelled one the phase it had reached when it stopped (every
    point ends by writing out its record, so `collecting` alone says nothing of where it stopped)."""
    phase, state = status.get("phase"), status.get("state")
    if not isinstance(phase, str) or not isinstance(state, (str, type(None))):
        return None
    if state not in FINAL_STATES:
        return phase
    if state == "completed":
        return None
    phases = status.get("phases")
    reached = [(t, name) for name, t in phases.items() if name != "collecting" and isinstance(t, int)] \
        if isinstance(phases, dict) else []
    return max(reached)[1] if reached else (None if phase == "collecting" else phase)


def read_status(point_dir: Path) -> dict[str, Any] | None:
    """The point's status. A `running` status whose writer is gone (nobody holds the point's lock,
    `harness.point.state.ownership`; for a directory without a lock, the harness process is gone from this host)
    is reconciled (and rewritten) to `failed: harness_killed`: every reader (run, sweep, status, report,
    follow) sees the same state."""
    path = Path(point_dir) / STATUS_FILE
    if not path.exists():
        return None
    data = read_json(path)
    if not isinstance(data, dict) or data.get("state") != "running":
        return data
    gone = holder_gone(Path(point_dir))
    if gone is False or (gone is None and not _harness_gone(data)):
        return data
    lock = PointLock(Path(point_dir), command="harness: reconcile a stale running status")
    try:
        took = lock.try_acquire()
    except OSError:   # a directory this reader may not write (a read-only copy): reconciled in what it returns
        reconcile_killed(Path(point_dir), data, write=False)
        return data
    if not took:
        return data   # a writer took it over just now
    try:
        data = read_json(path)   # as it is now, under the lock
        if isinstance(data, dict) and data.get("state") == "running":
            reconcile_killed(Path(point_dir), data)
    finally:
        lock.release()
    return data


def reconcile_killed(point_dir: Path, data: dict[str, Any], write: bool = True) -> None:
    """A `running` status whose writer ended without finishing becomes `failed: harness_killed` (in `data`,
    and with `write` in `status.json` and `harness.log`)."""
    reason = (f"harness_killed: the harness process {data.get('harness_pid')} ended without finishing the point "
              f"(last phase: {data.get('phase')})")
    data.update(state="failed", reason=reason, exit_status=1, ended_ns=time.time_ns())
    if not write:
        return
    write_json(point_dir / STATUS_FILE, data)
    (point_dir / RESERVE_FILE).unlink(missing_ok=True)   # the reserve it left (harness.point.state.status_reserve)
    append_text(point_dir / "harness.log",
                f"{datetime.now(tz=UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')} [state] failed: {reason}\n")


def _harness_gone(data: dict[str, Any]) -> bool:
    pid = data.get("harness_pid")
    if not isinstance(pid, int) or data.get("harness_host") != socket.gethostname() or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:  # a zombie (ended but not yet reaped by its parent) is gone too
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False
