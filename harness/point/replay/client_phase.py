"""AIPerf's warmup → profiling switch, read from its artifacts while it runs, as the point's phase markers."""

from __future__ import annotations

import time
from pathlib import Path

from harness.point.replay import aiperf
from harness.point.state.status import PointStatus


class ClientProgress:
    """AIPerf's warmup → profiling switch as phase markers (`harness.point.replay.progress` prints the progress)."""

    def __init__(self, artifact_dir: Path, status: PointStatus):
        self.status = status
        self.phases = aiperf.PhaseWatcher(artifact_dir)
        self.last_phase_check = time.monotonic()
        self.profiling_seen_ns: int | None = None   # monotonic: when AIPerf's profiling phase was first seen

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last_phase_check >= 1.0:
            self.last_phase_check = now
            kind = self.phases.update()
            if kind == "profiling" and self.profiling_seen_ns is None:
                self.profiling_seen_ns = time.monotonic_ns()
            if kind in ("warmup", "profiling") and kind != self.status.data["phase"]:
                self.status.phase(kind, "(AIPerf)")

    def profiling_span_s(self) -> float | None:
        """Monotonic seconds from the profiling phase's first sight until now (the client's end): an upper bound
        of the window that no wall-clock step can move; None when the phase was never seen."""
        return None if self.profiling_seen_ns is None else (time.monotonic_ns() - self.profiling_seen_ns) / 1e9
