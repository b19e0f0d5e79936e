"""What the point runner watches while a point runs: stop signals (the client's progress: `harness.point.replay.client_phase`)."""

from __future__ import annotations

import signal
import sys
from typing import Any, ClassVar

from harness.point.state.status import PointStatus

# What stopping waits on, by the phase the point (or eval) is in when the signal arrives.
STOPPING: dict[str, str] = {
    "launching": "stopping the server as it starts (SIGTERM, then SIGKILL after the grace period)",
    "loading": "stopping the server while it loads the model (SIGTERM, then SIGKILL after the grace period)",
    "ready": "stopping the server",
    "warmup": "stopping AIPerf (SIGINT, so it writes its summary), then the server",
    "profiling": "stopping AIPerf (SIGINT, so it writes its summary), then the server",
    "evaluating": "stopping lm-eval, then the server",
    "draining": "stopping the server",
    "collecting": "writing the record of what ran",
}


# SIGUSR1s that arrived while no point was watching for signals (see `keep_early_walltime_signal`).
_EARLY_USR1: list[int] = []


def keep_early_walltime_signal() -> None:
    """From now on a SIGUSR1 (Slurm's walltime margin) that arrives while no point watches for signals is kept
    instead of ending the process: the next point to watch (`StopSignals`) stops at once, as if it had arrived
    then, so a task still preparing its point when the margin comes ends it `cancelled`, with its record."""
    signal.signal(signal.SIGUSR1, lambda signum, frame: _EARLY_USR1.append(signum))


class StopSignals:
    """SIGINT/SIGTERM/SIGUSR1 become a stop request the runner acts on between steps. The first one is
    answered at once on stderr: `stopping... (SIGINT; <what the stop waits on in the current phase>)`."""

    NAMES: ClassVar[dict[int, str]] = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM",
                                       signal.SIGUSR1: "SIGUSR1"}

    def __init__(self, status: PointStatus | None = None) -> None:
        self.received: int | None = None
        self.status = status
        self._old: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        for sig in self.NAMES:
            self._old[sig] = signal.signal(sig, self._handle)
        if _EARLY_USR1:
            _EARLY_USR1.clear()
            self._handle(signal.SIGUSR1, None)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)

    def _handle(self, signum: int, frame: object) -> None:
        first = self.received is None
        self.received = self.received or signum
        if first:
            try:
                sys.stderr.write(f"{stopping_line(signum, self.phase())}\n")
                sys.stderr.flush()
            except (OSError, ValueError):  # a closed stderr: the status still records the stop
                pass

    def phase(self) -> str | None:
        phase = self.status.data.get("phase") if self.status is not None else None
        return phase if isinstance(phase, str) else None

    def reason(self) -> str | None:
        if self.received is None:
            return None
        if self.received == signal.SIGUSR1:
            return "walltime_margin: SIGUSR1 before the Slurm time limit"
        return f"interrupted: {self.NAMES[self.received]}"


def stopping_line(signum: int, phase: str | None) -> str:
    """`stopping... (SIGINT; phase loading: stopping the server while it loads the model ...)`."""
    name = StopSignals.NAMES.get(signum, f"signal {signum}")
    if phase is None:
        return f"stopping... ({name})"
    return f"stopping... ({name}; phase {phase}: {STOPPING.get(phase, 'finishing the current step')})"
