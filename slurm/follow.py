"""Following a job: per-point phase changes from `status.json` and new log lines (by byte offset, no
`tail -F`) from each task's Slurm output and the point's `harness.log`, until the job ends. A progress line
is shown once: from the Slurm output, not again from its copy in `harness.log`."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from slurm import query
from slurm.progress import finished, point_views, shown_state

PROGRESS_NOTE = " [progress] "   # harness.log's copy of a progress line


@dataclass
class LogTail:
    """New complete lines of a growing file since the last call."""

    path: Path
    offset: int = 0
    partial: bytes = field(default=b"")

    def new_lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read(1 << 20)
        except FileNotFoundError:
            return []
        self.offset += len(chunk)
        data = self.partial + chunk
        *lines, self.partial = data.split(b"\n")
        return [ln.decode(errors="replace") for ln in lines]


def slurm_output(record: dict[str, Any], task_id: int) -> Path:
    return Path(record["out_dir"]) / "slurm" / f"{record['job_id']}_{task_id}.out"


def _stamp() -> str:
    return datetime.now(UTC).strftime("%H:%M:%S")


def follow(record: dict[str, Any], *, interval_s: float = 2.0, out: TextIO | None = None,
           quiet: bool = False, cancel_on_interrupt: bool = False,
           states: Callable[[dict[str, Any]], tuple[dict[int, Any], str | None]] = query.job_task_states,
           ) -> list[dict[str, Any]]:
    """Print progress until the job ends; returns the final point views."""
    stream = out or sys.stdout
    # keyed by the point's index: the points of a reused deployment share one task (and its Slurm output)
    tails: dict[tuple[int, str], LogTail] = {}
    first_of_task: dict[int, int] = {}
    for i, p in enumerate(record["points"]):
        tid = int(p["task_id"])
        if tid not in first_of_task:
            first_of_task[tid] = i
            tails[(i, "slurm")] = LogTail(slurm_output(record, tid))
        tails[(i, "harness")] = LogTail(Path(p["point_dir"]) / "harness.log")
    seen: dict[int, tuple[Any, ...]] = {}
    names = {i: p["name"] for i, p in enumerate(record["points"])}

    def emit(text: str) -> None:
        if not quiet:
            print(text, file=stream, flush=True)

    previous = signal.getsignal(signal.SIGINT)
    if cancel_on_interrupt:
        def _cancel(signum: int, frame: object) -> None:
            emit(f"{_stamp()} interrupted: cancelling job {record['job_id']}")
            try:
                query.scancel(record["job_id"])
            finally:
                signal.signal(signal.SIGINT, previous)
            raise KeyboardInterrupt
        signal.signal(signal.SIGINT, _cancel)
        signal.signal(signal.SIGTERM, _cancel)
    unknown = 0
    try:
        while True:
            tasks, source = states(record)
            unknown = unknown + 1 if source is None else 0
            done = finished(record, tasks, source) and (source is not None or unknown >= 3)
            views = point_views(record, tasks)
            for i, v in enumerate(views):
                key = (v["state"], v["phase"], v["slurm_state"])
                if seen.get(i) != key:
                    seen[i] = key
                    extra = f" ({v['reason']})" if v["reason"] and v["state"] != "running" else ""
                    emit(f"{_stamp()} [{v['name']} task {v['task_id']}] {shown_state(v)}"
                         f"{' / ' + v['phase'] if v['phase'] else ''} (slurm {v['slurm_state'] or '?'}){extra}")
            for (i, kind), tail in tails.items():
                for line in tail.new_lines():
                    if kind == "harness" and PROGRESS_NOTE in line:
                        continue   # the task's Slurm output prints the same progress line
                    emit(f"[{names[i]} {kind}] {line}")
            if done:
                return views
            time.sleep(interval_s)
    finally:
        if cancel_on_interrupt:
            signal.signal(signal.SIGINT, previous)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
