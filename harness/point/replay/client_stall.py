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

The accuracy eval watches lm-eval the same way (`harness.evals.run`): its answers, its console log and
output directory, its group's CPU time. lm-eval may spend no CPU time at all while it waits for long answers,
so there a client with requests in flight on the server (`sglang:num_running_reqs` + `num_queue_reqs` > 0) is
waiting on the server, not stalled: whether the server makes progress is the server watch's question. Where
the server shows no such count (no `/metrics`), waiting and stalling look the same from outside, so only a
stopped client (every process in state `T`) is judged stalled.
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

    def __init__(self, bound_s: float, now: float, what: str = "AIPerf record"):
        self.bound_s = bound_s
        self.what = what
        self.last_progress = now
        self.seen: tuple[int, ...] | None = None
        self.sample: GroupSample | None = None
        self.records = 0
        self.server_unknown = False

    def saw(self, records: int, log_bytes: int, sample: GroupSample | None, now: float,
            server_busy: bool | None = False) -> None:
        """`server_busy`: the client has requests in flight on the server; None: the server cannot say."""
        seen = (records, log_bytes, -1 if sample is None else sample.ticks)
        if seen != self.seen or server_busy:   # waiting on the server's answers is not a stall of the client
            self.seen = seen
            self.last_progress = now
        self.records, self.sample = records, sample
        self.server_unknown = server_busy is None

    def silent_s(self, now: float) -> float:
        return now - self.last_progress

    def stalled_reason(self, now: float) -> str | None:
        silent = self.silent_s(now)
        if self.sample is None or self.sample.processes == 0 or silent < self.bound_s:
            return None
        if self.server_unknown and self.sample.stopped < self.sample.processes:
            return None   # maybe waiting on answers the server cannot count: only a stopped client is judged
        return (f"client_stalled: no new {self.what}, no client log output and no CPU time in the client's "
                f"{self.sample.processes} processes for {silent:.0f} s (bound {self.bound_s:g} s; "
                f"{self.stopped_words()}{self.records} {self.what}s)")

    def stopped_words(self) -> str:
        s = self.sample
        return "" if s is None or not s.stopped else f"{s.stopped} of {s.processes} stopped (SIGSTOP); "


class ClientStallWatch:
    """The judge fed by the runner's loop (`check`, called on each poll of the client): the client's finished
    requests (`count`: AIPerf's records, lm-eval's answers, named by `what`), the sizes of its logs (a directory
    counts every file under it) and its group's CPU time, sampled at most every `poll_s`. `server_busy`, where
    given, says the client has requests in flight on the server (the clock restarts while it does), or None
    when the server cannot say (then only a stopped client is judged)."""

    def __init__(self, pgid: int, bound_s: float, count: Callable[[], int], logs: tuple[Path, ...],
                 sample: Callable[[int], GroupSample | None] = group_sample, what: str = "AIPerf record",
                 server_busy: Callable[[], bool | None] | None = None):
        self.pgid = pgid
        self.count = count
        self.logs = logs
        self.sample = sample
        self.server_busy = server_busy
        self.poll_s = max(0.5, min(2.0, bound_s / 5))
        self.judge = ClientStallJudge(bound_s, time.monotonic(), what)
        self.reason: str | None = None
        self._next = 0.0

    def _log_bytes(self) -> int:
        total = 0
        for path in self.logs:
            if path.is_dir():
                for root, _dirs, files in os.walk(path):
                    total += sum(_size(os.path.join(root, name)) for name in files)
            else:
                total += _size(path)
        return total

    def check(self) -> str | None:
        now = time.monotonic()
        if self.reason is None and now >= self._next:
            self._next = now + self.poll_s
            busy = False if self.server_busy is None else self.server_busy()
            self.judge.saw(self.count(), self._log_bytes(), self.sample(self.pgid), now, server_busy=busy)
            self.reason = self.judge.stalled_reason(now)
        return self.reason

    def waiting(self) -> str | None:
        """What the progress line adds while the client is quiet (None: it is not, for now)."""
        silent = self.judge.silent_s(time.monotonic())
        if self.judge.sample is None or silent < min(10.0, self.judge.bound_s / 2):
            return None
        if self.judge.server_unknown:
            return (f"no client progress for {silent:.0f} s ({self.judge.stopped_words()}the server shows no "
                    "requests in flight: only a stopped client fails as client_stalled)")
        return (f"no client progress for {silent:.0f} s ({self.judge.stopped_words()}fails as client_stalled at "
                f"{self.judge.bound_s:g} s)")


def _size(path: str | Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
