"""A server that crashes during the run: its main process ends, or one of SGLang's own processes dies.

SGLang runs its scheduler(s) and detokenizer as child processes titled `sglang::scheduler...` and
`sglang::detokenizer` in the server's process group. When one of them dies (an OOM kill, a segfault in a
kernel), the main process may keep answering `/health` for a while; the point must end at once, as
`server_crashed`, naming the process that died. The processes are the ones seen when the server became ready
(read from `/proc`, so a process of a launcher that hides them, docker or enroot, is not watched: the
main process's exit still ends the point).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SGLANG_TITLE = "sglang::"
PROC = Path("/proc")


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


def crash_reason(exit_code: int | None, watch: CrashWatch | None) -> str | None:
    """`server_crashed: ...` when the ready server's main process ended or a watched process died; None while
    the server runs whole."""
    if exit_code is not None:
        return f"server_crashed: the server exited with status {exit_code} during the run"
    gone = watch.died() if watch is not None else None
    if gone is not None:
        return f"server_crashed: {gone} died during the run"
    return None
