"""What the point runner watches while a point runs: stop signals, and the client's progress."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any, ClassVar

from harness.point import aiperf
from harness.point.status import PointStatus


class StopSignals:
    """SIGINT/SIGTERM/SIGUSR1 become a stop request the runner acts on between steps."""

    NAMES: ClassVar[dict[int, str]] = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM",
                                       signal.SIGUSR1: "SIGUSR1"}

    def __init__(self) -> None:
        self.received: int | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        for sig in self.NAMES:
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)

    def _handle(self, signum: int, frame: object) -> None:
        self.received = self.received or signum

    def reason(self) -> str | None:
        if self.received is None:
            return None
        if self.received == signal.SIGUSR1:
            return "walltime_margin: SIGUSR1 before the Slurm time limit"
        return f"interrupted: {self.NAMES[self.received]}"


class ClientProgress:
    """AIPerf's warmup → profiling switch as phase markers (`harness.point.progress` prints the progress)."""

    def __init__(self, artifact_dir: Path, status: PointStatus):
        self.status = status
        self.phases = aiperf.PhaseWatcher(artifact_dir)
        self.last_phase_check = time.monotonic()

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last_phase_check >= 1.0:
            self.last_phase_check = now
            kind = self.phases.update()
            if kind in ("warmup", "profiling") and kind != self.status.data["phase"]:
                self.status.phase(kind, "(AIPerf)")
