"""AIPerf's warmup → profiling switch, read from its artifacts while it runs, as the point's phase markers; and the
profiling phase timed on the monotonic clock, which no wall-clock step moves."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from harness.point.replay import aiperf
from harness.point.state.status import PointStatus

PHASE_CHECK_S = 1.0   # how often AIPerf's log is read: each sight of a phase's start or end is at most this late


@dataclass(frozen=True)
class ProfilingClock:
    """AIPerf's profiling phase as the harness saw it, in monotonic seconds from the first sight of its start.
    `span_s`: to the client's end, the longest the window can be; `phase_s`: to the first sight of its end (every
    request back), the phase's own length, to hold against AIPerf's wall-clock `start_time` → `end_time`. None where
    not seen (both ends read at one look give no length)."""

    span_s: float | None = None
    phase_s: float | None = None


NOT_TIMED = ProfilingClock()   # a client that never reached its profiling phase


class ClientProgress:
    """AIPerf's warmup → profiling switch as phase markers (`harness.point.replay.progress` prints the progress)."""

    def __init__(self, artifact_dir: Path, status: PointStatus):
        self.status = status
        self.phases = aiperf.PhaseWatcher(artifact_dir)
        self.last_phase_check = time.monotonic()
        self.profiling_seen_ns: int | None = None   # monotonic: when AIPerf's profiling phase was first seen
        self.profiling_end_seen = False
        self.profiling_ended_ns: int | None = None  # monotonic: when its end was first seen, at a later look

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last_phase_check >= PHASE_CHECK_S:
            self.last_phase_check = now
            self._look()

    def _look(self) -> None:
        started_before = self.profiling_seen_ns is not None
        kind = self.phases.update()
        now_ns = time.monotonic_ns()
        if kind == "profiling" and self.profiling_seen_ns is None:
            self.profiling_seen_ns = now_ns
        if "profiling" in self.phases.ended and not self.profiling_end_seen:
            self.profiling_end_seen = True
            self.profiling_ended_ns = now_ns if started_before else None
        if kind in ("warmup", "profiling") and kind != self.status.data["phase"]:
            self.status.phase(kind, "(AIPerf)")

    def clock(self) -> ProfilingClock:
        """The profiling phase on the monotonic clock, once the client has ended (its log read a last time)."""
        self._look()
        start = self.profiling_seen_ns
        if start is None:
            return ProfilingClock()
        end = self.profiling_ended_ns
        return ProfilingClock(span_s=(time.monotonic_ns() - start) / 1e9,
                              phase_s=None if end is None else (end - start) / 1e9)
