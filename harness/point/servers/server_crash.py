"""A server that crashes during the run: its main process ends, or one of SGLang's own processes dies.

SGLang runs its scheduler(s) and detokenizer as child processes titled `sglang::scheduler...` and
`sglang::detokenizer` in the server's process group. When one of them dies (an OOM kill, a segfault in a
kernel), the point ends at once as `server_crashed`, naming the process that died: seen dead here (the
processes are the ones found in `/proc` when the server became ready, so a launcher that hides them, docker
or enroot, leaves only the main process watched), or named by SGLang's own subprocess watchdog in
`server.log` ("Subprocess scheduler_0 (pid=N) crashed with exit code -9"), which takes the whole server down
within a second of the death.

A server in a container also ends when its container runtime goes away (the docker daemon stopped or killed): the
point then ends as `container_runtime_gone`, naming the runtime in its own words, not as the server's crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SGLANG_TITLE = "sglang::"
PROC = Path("/proc")
# SGLang's SubprocessWatchdog (sglang/srt/utils/watchdog.py), logged before it takes the server down
WATCHDOG_LINE = re.compile(r"Subprocess (\S+) \(pid=(\d+)\) crashed with exit code (-?\d+)")
LOG_TAIL_BYTES = 256 * 1024


@dataclass(frozen=True)
class Member:
    pid: int
    title: str
    start_ticks: int   # the process's start time (field 22 of /proc/PID/stat): a reused pid is another process


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(process group, state, start time) of a live process; None when it is gone."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[2]), fields[0], int(fields[19])


def _title(pid: int) -> str:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def sglang_members(pgid: int) -> list[Member]:
    """SGLang's own processes (titled `sglang::...`) in process group `pgid`, leader excluded."""
    found = []
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == pgid:
            continue
        stat = _stat(int(entry.name))
        if stat is None or stat[0] != pgid:
            continue
        title = _title(int(entry.name))
        if title.startswith(SGLANG_TITLE):
            found.append(Member(int(entry.name), title, stat[2]))
    return found


def dead(member: Member) -> bool:
    """Gone, a zombie, or its pid taken by another process."""
    stat = _stat(member.pid)
    return stat is None or stat[1] in ("Z", "X") or stat[2] != member.start_ticks


@dataclass
class CrashWatch:
    """The SGLang processes of a ready server, checked on every poll of the run."""

    members: list[Member]

    @classmethod
    def of_group(cls, pgid: int) -> CrashWatch:
        return cls(sglang_members(pgid))

    def died(self) -> str | None:
        """`<title> (pid N)` of the first watched process that died; None while all live."""
        for member in self.members:
            if dead(member):
                return f"{member.title} (pid {member.pid})"
        return None


def watchdog_crash(server_log: Path | None) -> str | None:
    """`<name> (pid N) crashed with exit code X`, from the last crash SGLang's subprocess watchdog logged."""
    if server_log is None:
        return None
    try:
        with open(server_log, "rb") as fh:
            fh.seek(max(0, fh.seek(0, 2) - LOG_TAIL_BYTES))
            tail = fh.read().decode(errors="replace")
    except OSError:
        return None
    found = WATCHDOG_LINE.findall(tail)
    if not found:
        return None
    name, pid, code = found[-1]
    return f"SGLang's {name} (pid {pid}) crashed with exit code {code}"


def crash_reason(exit_code: int | None, watch: CrashWatch | None, server_log: Path | None = None) -> str | None:
    """`server_crashed: ...` when a watched process died or the ready server's main process ended (then with
    what SGLang's watchdog logged, if it did); None while the server runs whole."""
    gone = watch.died() if watch is not None else None
    if exit_code is None:
        return None if gone is None else f"server_crashed: {gone} died during the run"
    logged = watchdog_crash(server_log)
    if logged is not None:
        return f"server_crashed: {logged}; the server exited with status {exit_code} during the run"
    return f"server_crashed: the server exited with status {exit_code} during the run"


def runtime_gone_reason(runtime: str, said: str, exit_code: int) -> str:
    """`container_runtime_gone: ...` for a ready server whose container runtime (`docker`) went away, in the
    runtime's own words (`said`)."""
    return (f"container_runtime_gone: the {runtime} daemon went away while the server ran ({runtime}: {said}); "
            f"the server exited with status {exit_code} during the run")
