"""One deployment kept up for every point of a sweep (`--reuse-deployment`), as InferenceX's AgentX multi-node
script runs its concurrency list against the same engines.

The first point starts the deployment (its directory keeps the workers' and the router's logs); every later point
checks that it is still up, then waits until it is idle: every worker's `/metrics` shows no running and no queued
request (`sglang:num_running_reqs` + `sglang:num_queue_reqs` = 0) on `IDLE_POLLS` polls in a row, within a budget
(InferenceX: three polls, 1800 s). AIPerf's first-turn-prefix cache bust gives every invocation its own marker,
so a point never hits the KV cache of the one before. Each point's record says it reused a deployment, which
one (its launch token) and where it was started. The sweep stops the deployment after its last point, or when
one point ends it (a crash, a signal).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.artifacts import scrub_logs
from harness.errors import UserError
from harness.point.servers.deployment_server import DeploymentServer
from harness.point.servers.readiness import NotReady
from harness.point.servers.server_metrics import scrape_all
from harness.point.state.status import PointStatus
from harness.point.state.watch import StopSignals
from harness.recipe.plan import PointPlan

if TYPE_CHECKING:
    from harness.point.servers.node_power import NodePowerSamplers
    from harness.power import PowerSampler

IDLE_POLLS = 3
IDLE_POLL_S = 2.0
IDLE_BUDGET_S = 1800.0
IN_FLIGHT = ("sglang:num_running_reqs", "sglang:num_queue_reqs")


def in_flight(counters: dict[str, float] | None) -> float | None:
    """Running plus queued requests over the scraped workers (None: a worker did not answer)."""
    if counters is None:
        return None
    return sum(counters.get(name, 0.0) for name in IN_FLIGHT)


def check_reusable(plans: list[PointPlan]) -> None:
    """One deployment serves every point only if every point plans the same one (one line naming the first that
    does not)."""
    first = plans[0]
    if first.deployment is None:
        raise UserError("--reuse-deployment: the recipe has no deployment section (one server per point)")
    for plan in plans[1:]:
        if plan.deployment != first.deployment:
            raise UserError(f"--reuse-deployment: points.{plan.name} changes the deployment of points.{first.name} "
                            "(its role args or env differ); one deployment serves every point only when they "
                            "are equal: drop its deployment changes or run without --reuse-deployment")


class SharedDeployment:
    """The sweep's one deployment: started by the first point, stopped by the sweep."""

    def __init__(self, idle_budget_s: float = IDLE_BUDGET_S, idle_poll_s: float = IDLE_POLL_S):
        self.server: DeploymentServer | None = None
        self.first_point: str | None = None
        self.points = 0
        self.idle_budget_s = idle_budget_s
        self.idle_poll_s = idle_poll_s

    def for_point(self, plan: PointPlan, pdir: Path, launcher: str, mounts: tuple[str, ...],
                  image_path: str | None) -> ReusedDeployment:
        if self.server is None:   # the first point, or the first after a failed deployment was stopped
            self.server = DeploymentServer(plan, pdir, launcher, mounts=mounts, image_path=image_path)
            self.first_point = str(pdir)
            self.points = 0       # counts the points on this deployment, not the sweep's
        self.points += 1
        return ReusedDeployment(self, self.server, pdir, self.points)

    def stop(self, grace_s: float, status: PointStatus | None = None) -> None:
        if self.server is not None:
            self.server.stop(grace_s, status)
            if self.first_point is not None:
                scrub_logs(Path(self.first_point))
            self.server = None


class ReusedDeployment:
    """The shared deployment as one point sees it: the point runner's server, but stopping it leaves it up."""

    def __init__(self, shared: SharedDeployment, server: DeploymentServer, pdir: Path, order: int):
        self.shared = shared
        self.server = server
        self.pdir = pdir
        self.order = order
        self.idle: dict[str, Any] | None = None
        self.sigs: StopSignals | None = None

    base_url = property(lambda self: self.server.base_url)
    metrics_urls = property(lambda self: self.server.metrics_urls)
    watch_url = property(lambda self: self.server.watch_url)
    api_key = property(lambda self: self.server.api_key)

    def power_sampler(self, pdir: Path) -> PowerSampler | NodePowerSamplers:
        return self.server.power_sampler(pdir)

    @property
    def logs_final(self) -> bool:
        """Whether the deployment has stopped (its logs are scrubbed once it has: the sweep does it, or this point
        when it ended the deployment)."""
        return self.server.exit_code() is not None

    @property
    def run_record(self) -> dict[str, Any]:
        """What the point's record says of the deployment it ran on."""
        return {"reused": self.order > 1, "deployment_id": self.server.token, "point_order": self.order,
                "started_in": self.shared.first_point, "idle_wait": self.idle}

    def start_ready(self, plan: PointPlan, status: PointStatus, sigs: StopSignals, ready_timeout_s: float,
                    progress_every_s: float = 30.0, on_poll: Callable[[], None] | None = None) -> None:
        status.data["deployment_reuse"] = self.run_record
        self.sigs = sigs
        if self.server.ready is None:
            self.server.start_ready(plan, status, sigs, ready_timeout_s, progress_every_s, on_poll)
            return
        gone = self.server.exited()
        if gone is not None:
            raise NotReady("server_exited", f"the reused deployment's {gone[0].label} exited with status {gone[1]}")
        status.phase("loading", f"reusing deployment {self.server.token} (started in {self.shared.first_point}); "
                                "waiting until its workers are idle")
        self.idle = wait_idle(self.server.metrics_urls, self.shared.idle_budget_s, self.shared.idle_poll_s, sigs,
                              on_poll)
        status.data["deployment_reuse"] = self.run_record
        status.phase("ready")

    def exit_code(self) -> int | None:
        return self.server.exit_code()

    def stop_reason(self, sigs: StopSignals) -> str | None:
        return self.server.stop_reason(sigs)

    def stop(self, grace_s: float, status: PointStatus) -> None:
        """Fingerprints into this point's directory; the deployment itself stops only when it failed or the run
        was stopped by a signal (then its members' exit statuses go to this point's status; the sweep stops it
        after its last point)."""
        try:
            self.server.write_fingerprints(self.pdir)
        finally:
            signalled = self.sigs is not None and self.sigs.reason() is not None
            if signalled or self.server.exited() is not None:
                self.shared.stop(grace_s, status)


def wait_idle(urls: list[str], budget_s: float, poll_s: float, sigs: StopSignals,
              on_poll: Callable[[], None] | None = None) -> dict[str, Any]:
    """Until every worker shows nothing running or queued on `IDLE_POLLS` polls in a row; raises NotReady
    (`deployment_busy`) past the budget."""
    start = time.monotonic()
    in_a_row = polls = 0
    last: float | None = None
    while True:
        if sigs.reason():
            raise NotReady("stopped", sigs.reason() or "")
        last = in_flight(scrape_all(urls))
        polls += 1
        in_a_row = in_a_row + 1 if last == 0 else 0
        if in_a_row >= IDLE_POLLS:
            return {"waited_s": round(time.monotonic() - start, 3), "polls": polls}
        if time.monotonic() - start >= budget_s:
            raise NotReady("deployment_busy", f"the reused deployment's workers still had {last} request(s) running "
                                              f"or queued after {budget_s:.0f} s")
        if on_poll is not None:
            on_poll()
        time.sleep(poll_s)
