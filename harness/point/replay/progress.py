"""Progress people can read while AIPerf's window runs (the server's loading: `harness.point.servers.load_progress`;
the display both use: `harness.point.state.progress_line`).

The client: the profiling window's elapsed/total with an ETA,
requests done, errors, live output tokens/s (requests that ended in the last 30 s) and the running E2EL
p50, read incrementally from AIPerf's per-request records. Before the window it says AIPerf is warming up;
after it, that in-flight requests are drained — never a time past the window as if over budget.
"""

from __future__ import annotations

import bisect
import json
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.point.replay.aiperf import RECORDS_FILE, NewLines
from harness.point.state.progress_line import Ticker
from harness.point.state.status import PointStatus
from harness.recipe.plan import PointPlan

LIVE_WINDOW_S = 30.0


class ClientLiveProgress(Ticker):
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
            lanes = f"all {c.conc} lanes" if c.conc > 1 else "its 1 lane"
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
