"""A child process in its own process group, torn down as a whole: SIGTERM (or SIGINT) → grace → SIGKILL.

Servers (launchers) and the AIPerf client both run this way, so no process of a point outlives it. A small
watchdog process beside each group ends the group (SIGTERM, then SIGKILL after `WATCHDOG_GRACE_S`) when the
harness process dies without tearing it down (SIGKILL, OOM killer): the watchdog notices that it has been
reparented, which happens however its parent died; it then also runs the group's `on_orphan` command, if any
(`docker rm -f NAME`: a container outlives the docker client that started it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

WATCHDOG_POLL_S = 0.2
WATCHDOG_GRACE_S = 3.0
# argv: parent pid, process group id, the on-orphan command as JSON. Exits when the group is gone; ends the group
# (and runs the on-orphan command) when the parent is gone.
_WATCHDOG = f"""
import json, os, signal, subprocess, sys, time
parent, pgid, on_orphan = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
signal.signal(signal.SIGINT, signal.SIG_IGN)
def alive():
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
while alive():
    if os.getppid() != parent:
        os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + {WATCHDOG_GRACE_S}
        while alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if alive():
            os.killpg(pgid, signal.SIGKILL)
        if on_orphan:
            try:
                subprocess.run(on_orphan, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            except Exception:
                pass
        break
    time.sleep({WATCHDOG_POLL_S})
"""


class ProcessGroup:
    """A running command whose stdout and stderr go to a log file."""

    def __init__(self, argv: list[str], env: dict[str, str], log_path: Path, cwd: Path | None = None,
                 on_orphan: list[str] | None = None):
        self.argv = argv
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab", buffering=0)
        self.popen = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.pgid = self.popen.pid  # start_new_session makes the child its own group leader
        self.started_ns = time.time_ns()
        self.watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(self.pgid), json.dumps(on_orphan or [])],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def exit_code(self) -> int | None:
        """The exit status once the leader has exited (zombies are reaped here), else None."""
        return self.popen.poll()

    def wait_exit(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the leader to exit; whether it has."""
        try:
            self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True

    def group_alive(self) -> bool:
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pgid, sig)
        except ProcessLookupError:
            pass

    def stop(self, grace_s: float = 10.0, first_signal: int = signal.SIGTERM) -> int | None:
        """Send `first_signal` to the whole group, wait up to `grace_s`, then SIGKILL what is left;
        wait until no process of the group remains. Returns the leader's exit code."""
        if self.group_alive():
            self.signal_group(first_signal)
            deadline = time.monotonic() + grace_s
            while time.monotonic() < deadline:
                self.popen.poll()
                if not self.group_alive():
                    break
                time.sleep(0.05)
            if self.group_alive():
                self.signal_group(signal.SIGKILL)
        try:
            code = self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        # members of the group that outlived the leader
        deadline = time.monotonic() + 5
        while self.group_alive() and time.monotonic() < deadline:
            self.signal_group(signal.SIGKILL)
            time.sleep(0.05)
        self._log.close()
        try:  # it exits by itself once the group is gone
            self.watchdog.wait(timeout=WATCHDOG_POLL_S * 10)
        except subprocess.TimeoutExpired:
            self.watchdog.kill()
            self.watchdog.wait()
        return code
