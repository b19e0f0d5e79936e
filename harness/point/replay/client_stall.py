"""Is the client still making progress? The client watch is the server stall watch's counterpart: a client that
stopped working (its process group stopped by SIGSTOP, a deadlock, a hung worker) ends the point within the
stall bound as `failed: client_stalled`, and its whole process group is torn down, instead of the point
waiting for the client's own timeout (warm-up + window + grace + the client overhead).

Progress is any of: a new AIPerf record, growth of AIPerf's logs (its own `logs/aiperf.log`, its console
output `client.log`), or CPU time spent by any process of the client's group. A working AIPerf spends CPU time
all along, even between records (it scrapes the server's `/metrics`, its services exchange heartbeats), so a
long generation is never mistaken for a stall; a stopped or hung one spends none. The bound is the point's
stall bound (`--stall-timeout`; by default a tenth of the window, 60 s to 300 s), the same as the server's.

The client is judged before the server: when the client is frozen, the server's streams stop too, and the
point is the client's failure. When the server is the one that stopped, the client still spends CPU time and
the server's watch says `server_stalled`. CPU time is read from `/proc`; where there is none, only records and
logs count, and the watch stays off (a long generation writes neither).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class GroupSample:
    """The client's process group at one look: CPU ticks of all its processes, how many there are and how
    many of them are stopped (state `T`)."""

    ticks: int
    processes: int
    stopped: int


def group_sample(pgid: int, proc: Path = PROC) -> GroupSample | None:
    """The processes of group `pgid` from `/proc` (None where there is no `/proc`)."""
    if not proc.is_dir():
        return None
    ticks = processes = stopped = 0
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            with open(os.path.join(entry.path, "stat"), "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        # after the command: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        if len(fields) < 13 or int(fields[2]) != pgid:
            continue
        processes += 1
        ticks += int(fields[11]) + int(fields[12])
        stopped += fields[0] in (b"T", b"t")
    return GroupSample(ticks, processes, stopped)


class ClientStallJudge:
    """The pure decision, fed with what was seen and when (monotonic seconds)."""

    def __init__(self, bound_s: float, now: float):
        self.bound_s = bound_s
        self.last_progress = now
        self.seen: tuple[int, ...] | None = None
        self.sample: GroupSample | None = None
        self.records = 0

    def saw(self, records: int, log_bytes: int, sample: GroupSample | None, now: float) -> None:
        seen = (records, log_bytes, -1 if sample is None else sample.ticks)
        if seen != self.seen:
            self.seen = seen
            self.last_progress = now
        self.records, self.sample = records, sample

    def silent_s(self, now: float) -> float:
        return now - self.last_progress

    def stalled_reason(self, now: float) -> str | None:
        silent = self.silent_s(now)
        if self.sample is None or self.sample.processes == 0 or silent < self.bound_s:
            return None
        return (f"client_stalled: no new AIPerf record, no client log output and no CPU time in the client's "
                f"{self.sample.processes} processes for {silent:.0f} s (bound {self.bound_s:g} s; "
                f"{self.stopped_words()}{self.records} AIPerf records)")

    def stopped_words(self) -> str:
        s = self.sample
        return "" if s is None or not s.stopped else f"{s.stopped} of {s.processes} stopped (SIGSTOP); "


class ClientStallWatch:
    """The judge fed by the runner's loop (`check`, called on each poll of the client): AIPerf's records
    (`count`), the sizes of its logs and its group's CPU time, sampled at most every `poll_s`."""

    def __init__(self, pgid: int, bound_s: float, count: Callable[[], int], logs: tuple[Path, ...],
                 sample: Callable[[int], GroupSample | None] = group_sample):
        self.pgid = pgid
        self.count = count
        self.logs = logs
        self.sample = sample
        self.poll_s = max(0.5, min(2.0, bound_s / 5))
        self.judge = ClientStallJudge(bound_s, time.monotonic())
        self.reason: str | None = None
        self._next = 0.0

    def _log_bytes(self) -> int:
        total = 0
        for path in self.logs:
            try:
                total += path.stat().st_size
            except OSError:
                pass
        return total

    def check(self) -> str | None:
        now = time.monotonic()
        if self.reason is None and now >= self._next:
            self._next = now + self.poll_s
            self.judge.saw(self.count(), self._log_bytes(), self.sample(self.pgid), now)
            self.reason = self.judge.stalled_reason(now)
        return self.reason

    def waiting(self) -> str | None:
        """What the progress line adds while the client is quiet (None: it is not, for now)."""
        silent = self.judge.silent_s(time.monotonic())
        if self.judge.sample is None or silent < min(10.0, self.judge.bound_s / 2):
            return None
        return (f"no client progress for {silent:.0f} s ({self.judge.stopped_words()}fails as client_stalled at "
                f"{self.judge.bound_s:g} s)")
