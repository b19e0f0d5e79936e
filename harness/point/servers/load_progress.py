"""Progress while a server loads (up to an hour for real recipes): elapsed time against the ready budget, the
phase, and the last meaningful line of the server's log."""

from __future__ import annotations

import time
from pathlib import Path

from harness.point.state.progress_line import Ticker, last_log_line
from harness.point.state.status import PointStatus
from harness.recipe.plan import PointPlan


class ServerLoadProgress(Ticker):
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
