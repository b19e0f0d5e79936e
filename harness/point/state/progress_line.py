"""The progress line of a long step, and the server-log line worth showing in it.

On a terminal (stdout is a TTY, `HARNESS_PROGRESS` is not `plain`) a rich progress bar is redrawn in
place; otherwise (logs, CI, Slurm) a plain line every `every_s` seconds. Either way the same line goes to
the point's `harness.log` every `every_s` seconds (`Ticker`). A log's last meaningful line skips access-log
lines and terminal control codes; the last segment of a `\\r` progress bar counts.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from harness.point.state.status import PointStatus

if TYPE_CHECKING:
    from rich.console import Console

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ACCESS = re.compile(r'"(GET|POST|PUT|DELETE|HEAD) /|HTTP/1\.[01]" \d{3}')


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


class Ticker:
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
