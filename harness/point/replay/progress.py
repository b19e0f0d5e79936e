"""Progress people can read while a point runs: the server loading, then AIPerf's window.

Server loading (up to an hour for real recipes): elapsed time against the ready budget, the phase, and
the last meaningful line of `server.log` (access-log lines and terminal control codes skipped; the last
segment of a `\\r` progress bar counts). The client: the profiling window's elapsed/total with an ETA,
requests done, errors, live output tokens/s (requests that ended in the last 30 s) and the running E2EL
p50, read incrementally from AIPerf's per-request records. Before the window it says AIPerf is warming up;
after it, that in-flight requests are drained — never a time past the window as if over budget.

On a terminal (stdout is a TTY, `HARNESS_PROGRESS` is not `plain`) a rich progress bar is redrawn in
place; otherwise (logs, CI, Slurm) a plain line every `every_s` seconds. Either way the same line goes to
the point's `harness.log` every `every_s` seconds.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harness.point.replay.aiperf import RECORDS_FILE, NewLines
from harness.point.state.status import PointStatus
from harness.recipe.plan import PointPlan

if TYPE_CHECKING:
    from rich.console import Console

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ACCESS = re.compile(r'"(GET|POST|PUT|DELETE|HEAD) /|HTTP/1\.[01]" \d{3}')
LIVE_WINDOW_S = 30.0


def last_meaningful_line(text: str, limit: int = 160) -> str | None:
    """The last server-log line worth showing: no access-log lines, no control codes, `\\r` bars resolved."""
    for raw in reversed(text.splitlines()):
        line = _ANSI.sub("", raw.split("\r")[-1] if raw.rstrip("\r") else raw).strip()
        if not line or _ACCESS.search(line) or not any(c.isalnum() for c in line):
            continue
        return line if len(line) <= limit else line[: limit - 1] + "…"
    return None


def last_log_line(path: Path) -> str | None:
    """The last meaningful line at the end of a log file (None: empty or unreadable)."""
    return last_meaningful_line(_tail(path))


def _tail(path: Path, size: int = 16384) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, path.stat().st_size - size))
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


class Display(Protocol):
    def show(self, line: str, completed: float | None, total: float | None) -> None: ...
    def close(self) -> None: ...


class PlainDisplay:
    """A plain line every `every_s` seconds (logs, CI, Slurm output)."""

    def __init__(self, every_s: float):
        self.every_s, self.last = every_s, time.monotonic()

    def show(self, line: str, completed: float | None, total: float | None) -> None:
        if time.monotonic() - self.last >= self.every_s:
            self.last = time.monotonic()
            print(line, flush=True)

    def close(self) -> None:
        pass


class BarDisplay:
    """A rich progress bar redrawn in place on a terminal: the bar keeps its width and the line wraps below
    it on a narrow terminal (never cut, never squeezing the bar away)."""

    def __init__(self, console: Console | None = None) -> None:
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn
        from rich.table import Column

        self.progress = Progress(SpinnerColumn(), BarColumn(bar_width=24, table_column=Column(width=24, no_wrap=True)),
                                 TextColumn("{task.description}", table_column=Column(ratio=1, overflow="fold")),
                                 transient=True, console=console)
        self.task = self.progress.add_task("", total=None)
        self.progress.start()

    def show(self, line: str, completed: float | None, total: float | None) -> None:
        self.progress.update(self.task, description=line, completed=completed or 0, total=total)

    def close(self) -> None:
        self.progress.stop()


def make_display(every_s: float) -> Display | None:
    if every_s <= 0:
        return None
    if sys.stdout.isatty() and os.environ.get("HARNESS_PROGRESS", "") != "plain":
        return BarDisplay()
    return PlainDisplay(every_s)


class _Ticker:
    """Shared: the display and the `harness.log` note every `every_s` seconds."""

    def __init__(self, status: PointStatus, every_s: float):
        self.status, self.every_s = status, every_s
        self.display = make_display(every_s)
        self.start = self.last_note = time.monotonic()

    def emit(self, line: str, completed: float | None = None, total: float | None = None) -> None:
        if self.display is None:
            return
        self.display.show(line, completed, total)
        if time.monotonic() - self.last_note >= self.every_s:
            self.last_note = time.monotonic()
            self.status.note(f"[progress] {line}")

    def close(self) -> None:
        if self.display is not None:
            self.display.close()
            self.display = None


class ServerLoadProgress(_Ticker):
    """While the server loads: elapsed against the ready budget, the phase, the last server-log line (a
    deployment sets `server_log` and `source` to the member it waits on)."""

    def __init__(self, plan: PointPlan, status: PointStatus, server_log: Path, budget_s: float, every_s: float):
        super().__init__(status, every_s)
        self.plan, self.server_log, self.budget_s = plan, server_log, budget_s
        self.source: str | None = None

    def line(self) -> str:
        elapsed = time.monotonic() - self.start
        phase = self.status.data.get("phase") or "launching"
        last = last_log_line(self.server_log) or "(no server output yet)"
        source = f"{self.source}: " if self.source else ""
        return (f"c{self.plan.conc} server {phase} {elapsed:.0f} s (ready budget {self.budget_s:.0f} s): "
                f"{source}{last}")

    def tick(self) -> None:
        if self.display is not None:
            self.emit(self.line(), None, None)


class ClientLiveProgress(_Ticker):
    """While AIPerf runs: the window's elapsed/total and ETA, requests, errors, output tok/s, E2EL p50. After the
    window: draining within the grace, then what the point waits for past it; `waiting` adds what the client
    watch sees (a client quiet for a while, and when it fails as `client_stalled`)."""

    def __init__(self, plan: PointPlan, artifact_dir: Path, status: PointStatus, every_s: float,
                 waiting: Callable[[], str | None] | None = None):
        super().__init__(status, every_s)
        self.plan = plan
        self.waiting = waiting
        self.records = NewLines(artifact_dir / RECORDS_FILE)
        self.done = self.errors = 0
        self.e2el: list[float] = []                        # sorted, successful profiled requests
        self.recent: deque[tuple[int, int]] = deque()      # (end ns, output tokens)

    def _read(self) -> None:
        for raw in self.records.read():
            try:
                rec: dict[str, Any] = json.loads(raw)
            except ValueError:
                continue
            meta = rec.get("metadata") or {}
            if meta.get("benchmark_phase", "profiling") != "profiling":
                continue
            if rec.get("error"):
                self.errors += 1
                continue
            metrics = rec.get("metrics") or {}
            latency = (metrics.get("request_latency") or {}).get("value")
            if not isinstance(latency, (int, float)):
                continue
            self.done += 1
            bisect.insort(self.e2el, float(latency) / 1e3)
            osl = (metrics.get("output_sequence_length") or {}).get("value")
            self.recent.append((int(meta.get("request_end_ns") or time.time_ns()), int(osl or 0)))

    def line(self) -> tuple[str, float | None, float]:
        c, total = self.plan.client, self.plan.client.duration_s
        self._read()
        now = time.time_ns()
        while self.recent and self.recent[0][0] < now - LIVE_WINDOW_S * 1e9:
            self.recent.popleft()
        started = self.status.data.get("phases", {}).get("profiling")
        head = f"c{self.plan.conc}"
        quiet = self.waiting() if self.waiting is not None else None
        tail = f"; {quiet}" if quiet else ""
        if started is None:
            waited = time.monotonic() - self.start
            lanes = f"all {c.concurrency} lanes" if c.concurrency > 1 else "its 1 lane"
            return (f"{head} AIPerf warming up {lanes} ({waited:.0f} s so far; then the {total:.0f} s window){tail}",
                    None, total)
        past = (now - started) / 1e9 - total
        elapsed = min((now - started) / 1e9, total)
        live = sum(t for _, t in self.recent) / min(LIVE_WINDOW_S, max(1.0, (now - started) / 1e9))
        p50 = self.e2el[len(self.e2el) // 2] if len(self.e2el) % 2 else \
            (sum(self.e2el[len(self.e2el) // 2 - 1: len(self.e2el) // 2 + 1]) / 2 if self.e2el else None)
        stats = (f"{self.done} requests, {self.errors} errors, {live:.0f} out tok/s, "
                 f"E2EL p50 {'-' if p50 is None else f'{p50:.2f} s'}")
        if past > c.grace_s:
            return (f"{head} window done ({total:.0f} s): {stats}; grace over {past - c.grace_s:.0f} s ago, waiting "
                    f"for AIPerf to end its last requests and write its summary{tail}"), total, total
        if elapsed >= total:
            return (f"{head} window done ({total:.0f} s): {stats}; draining in-flight requests "
                    f"(≤ {c.grace_s:.0f} s){tail}"), total, total
        return f"{head} profiling {elapsed:.0f}/{total:.0f} s (ETA {total - elapsed:.0f} s): {stats}{tail}", elapsed, \
            total

    def tick(self) -> None:
        if self.display is not None:
            line, done, total = self.line()
            self.emit(line, done, total)
