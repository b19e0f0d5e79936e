"""A deployment for one point (or several): its workers on their nodes and the router the client talks to.

The point runner treats it as it treats one fresh server (`harness.point.servers.serve.FreshServer`): `start_ready`,
`stop_reason`, `exit_code`, `stop`. Inside, every process of the plan is a member, started through the run's
launcher (locally side by side; on Slurm one `srun --overlap --nodelist=NODE` step per node) in its own process
group with its own log (`server_<role>_w<i>[_n<rank>].log`, `router.log`):

- **launch**: every worker node, then the router; a worker fingerprint capture beside each worker node;
- **ready**: every worker's leader answers `/health` with this launch's token, then the router's `/workers`
  lists the expected prefill/decode/aggregated workers, all healthy, then a one-token chat completion goes
  through the router;
- **running**: any member that exits ends the run (`server_crashed`, naming the member);
- **stop**: the router first, then every worker node (SIGTERM to each: its process group, or on Slurm its step's
  tasks; grace; SIGKILL); the fingerprints
  are written per worker and node (`fingerprint_<role>_w<i>[_n<rank>].json`) and each member's exit status goes
  to `status.json`.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.artifacts import write_command, write_foreign_json
from harness.point.fingerprints.fingerprint import BackgroundCapture, build_fingerprint, image_digest
from harness.point.servers import port_owner
from harness.point.servers.deployment_nodes import Node, fill, place, symbol_index
from harness.point.servers.load_progress import ServerLoadProgress
from harness.point.servers.node_power import NodePowerSamplers
from harness.point.servers.readiness import NotReady, server_info, wait_for_probe, wait_until_healthy
from harness.point.servers.serve import PointStopped, check_stop, new_launch_token, note_stop, with_launch_token
from harness.point.servers.server_auth import auth_headers
from harness.point.servers.server_logs import ROUTER, member_label, member_log_name
from harness.point.state.progress_line import last_log_line
from harness.point.state.status import PointStatus
from harness.point.state.watch import StopSignals
from harness.power import PowerSampler
from harness.recipe.multinode.deployment import DeploymentPlan
from harness.recipe.plan import PointPlan
from launchers import LaunchContext, get_launcher

if TYPE_CHECKING:
    from harness.power import PowerSampler
    from launchers import LaunchContext, Launcher, RunningServer

EXPECTED_COUNT = {"prefill": "prefill_count", "decode": "decode_count", "aggregated": "regular_count"}


@dataclass(frozen=True)
class Member:
    """One process of a deployment: a worker on one of its nodes, or the router."""

    label: str                  # prefill_w0, prefill_w0_n1, router
    role: str                   # prefill | decode | aggregated | router
    worker: int | None
    node_rank: int
    node: Node
    argv: list[str]
    env: dict[str, str]
    url: str | None             # where it serves HTTP: worker leaders and the router

    @property
    def log_name(self) -> str:
        return member_log_name(self.label)

    @property
    def fingerprint_name(self) -> str:
        return f"fingerprint_{self.label}.json"


def members(dep: DeploymentPlan, nodes: list[Node], token: str) -> list[Member]:
    """Every process of the deployment with its node's address filled in: workers in node order, then the router."""
    out: list[Member] = []
    for role in dep.roles:
        for w in role.worker_plans:
            for cmd in w.nodes:
                node = nodes[symbol_index(cmd.node)]
                label = member_label(role.role, w.index, cmd.node_rank)
                argv = with_launch_token([fill(t, nodes) for t in cmd.launch_argv()], token)
                out.append(Member(label, role.role, w.index, cmd.node_rank, node, argv, dict(role.env),
                                  fill(w.url, nodes) if cmd.node_rank == 0 else None))
    router_node = nodes[symbol_index(dep.router.node)]
    out.append(Member(ROUTER, ROUTER, None, 0, router_node, [fill(t, nodes) for t in dep.router.launch_argv()], {},
                      fill(dep.router.url, nodes)))
    return out


def expected_workers(dep: DeploymentPlan, dp_aware: bool) -> dict[str, int]:
    """What the router's `/workers` `stats` must show: workers per kind; a `--dp-aware` router lists each
    DP-attention rank of a worker as a worker of its own (`URL@rank`)."""
    return {EXPECTED_COUNT[r.role]: r.workers * ((r.parallelism.dp_attention or 1) if dp_aware else 1)
            for r in dep.roles}


def router_workers_problem(body: dict[str, Any], expected: dict[str, int]) -> str | None:
    """Why the router's `/workers` answer is not yet the deployment (None: every worker registered, healthy)."""
    stats = body.get("stats") if isinstance(body, dict) else None
    if not isinstance(stats, dict):
        return f"/workers gave no stats: {json.dumps(body)[:200]}"
    counts = {k: stats.get(k, 0) for k in EXPECTED_COUNT.values()}
    want = {k: expected.get(k, 0) for k in EXPECTED_COUNT.values()}
    if counts != want:
        return f"/workers counts {counts}, expected {want}"
    sick = [w.get("url") for w in body.get("workers", []) if isinstance(w, dict) and w.get("is_healthy") is False]
    return f"unhealthy workers: {', '.join(map(str, sick))}" if sick else None


def _get_json(url: str, api_key: str | None, timeout: float = 5.0) -> Any:
    req = urllib.request.Request(url, headers=auth_headers(api_key))
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode())


class DeploymentServer:
    """A plan's deployment, started once and then stopped as a whole whatever happened."""

    def __init__(self, plan: PointPlan, pdir: Path, launcher_kind: str, *, mounts: tuple[str, ...] = (),
                 image_path: str | None = None):
        dep = plan.deployment
        if dep is None:
            raise ValueError("DeploymentServer needs a plan with a deployment")
        self.dep = dep
        self.launcher_kind = launcher_kind
        self.launcher: Launcher = get_launcher(launcher_kind)
        self.nodes = place(dep.nodes, launcher_kind)
        self.token = new_launch_token()
        self.members = members(dep, self.nodes, self.token)
        self.router = self.members[-1]
        self.base_url = self.router.url or ""
        self.api_key = dep.api_key
        self.ctx: LaunchContext = LaunchContext(point_dir=pdir, image=plan.image, engine=plan.server.engine,
                                                mounts=mounts, image_path=image_path,
                                                container_name=f"harness-{plan.config_key}-c{plan.conc}-{self.token[-6:]}")
        self.running: dict[str, RunningServer] = {}
        self.captures: dict[str, BackgroundCapture] = {}
        self.ready: dict[str, Any] | None = None
        self.image = plan.image
        self.engine = plan.server.engine
        self.record_commands(pdir)

    def member_ctx(self, m: Member) -> LaunchContext:
        return replace(self.ctx, node=m.node.name, log_name=m.log_name,
                       container_name=f"{self.ctx.container_name}-{m.label}")

    def record_commands(self, pdir: Path) -> None:
        """`server_command.txt`: every member's exact launcher argv and env (secrets redacted), node by node."""
        write_command(pdir / "server_command.txt",
                      [(f"{m.label} on node {m.node.index} ({m.node.name or m.node.address})",
                        self.launcher.render(m.argv, m.env, self.member_ctx(m)), m.env) for m in self.members])

    @property
    def worker_urls(self) -> list[str]:
        """Every worker's HTTP address (its leader's)."""
        return [m.url for m in self.members if m.url and m.role != ROUTER]

    @property
    def on_slurm_nodes(self) -> bool:
        """Placed on the nodes of a Slurm allocation (each member an srun step)."""
        return all(n.name is not None for n in self.nodes)

    run_record = None   # started and stopped by this point alone
    logs_final = True

    def power_sampler(self, pdir: Path) -> PowerSampler | NodePowerSamplers:
        """A sampler on every node of an allocation; on this host, this process's own (every GPU it may use)."""
        if self.on_slurm_nodes:
            return NodePowerSamplers(self.nodes, pdir)

        return PowerSampler(None, pdir / "power.csv")

    @property
    def metrics_urls(self) -> list[str]:
        """Whose `/metrics` a point's counters sum: every worker's."""
        return self.worker_urls

    @property
    def generating_worker(self) -> Member:
        """The first worker that generates the replies (decode, else aggregated)."""
        return next(m for m in self.members if m.url and m.role in ("decode", "aggregated"))

    @property
    def watch_url(self) -> str:
        """What the stall watch follows: the first generating worker."""
        return self.generating_worker.url or ""

    def exited(self) -> tuple[Member, int] | None:
        """The first member that has exited, with its status."""
        for m in self.members:
            run = self.running.get(m.label)
            code = None if run is None else run.exit_code()
            if code is not None:
                return m, code
        return None

    def exit_code(self) -> int | None:
        gone = self.exited()
        return None if gone is None else gone[1]

    def start_ready(self, plan: PointPlan, status: PointStatus, sigs: StopSignals, ready_timeout_s: float,
                    progress_every_s: float = 30.0, on_poll: Callable[[], None] | None = None) -> None:
        """Launch every worker node, wait until each worker is healthy, then launch the router (a router
        registers workers when it starts: smg retries a worker that is not yet healthy only ~30 s later) and
        wait until it lists them all and a chat completion goes through it; progress names the member awaited
        and its log's last line. Raises NotReady or PointStopped."""

        status.phase("launching", f"{len(self.members) - 1} worker process(es) on {len(self.nodes)} node(s), "
                                  "then the router")
        if self.launcher_kind == "local":
            self.check_ports_free()
        deadline = time.monotonic() + ready_timeout_s
        pdir = Path(self.ctx.point_dir)
        loading = ServerLoadProgress(plan, status, pdir / self.members[0].log_name, ready_timeout_s,
                                     progress_every_s)

        def poll() -> None:
            if on_poll is not None:
                on_poll()
            loading.tick()

        def awaiting(m: Member) -> None:
            status.phase("loading", f"{m.label} at {m.url}")
            loading.server_log, loading.source = pdir / m.log_name, m.label

        self.launcher.clear_leftovers(pdir)
        try:
            for m in self.members[:-1]:
                self.launch(m, sigs, status)
            check_stop(sigs)
            for m in self.members[:-1]:
                if m.url is not None:
                    awaiting(m)
                    wait_until_healthy(m.url, self.exit_code, deadline, should_stop=sigs.reason, on_poll=poll,
                                       token=self.token, api_key=self.api_key, what=m.label)
            awaiting(self.router)
            self.launch(self.router, sigs, status)
            self.wait_router(deadline, sigs, poll)
            wait_for_probe(self.base_url, plan.client.served_model_name, self.exit_code, deadline, on_poll=poll,
                           api_key=self.api_key)
        except NotReady as exc:
            gone = self.exited() if exc.reason == "server_exited" else None
            if gone is None:
                raise
            member, code = gone   # the member that exited (not the one awaited), and why in its own words
            last = last_log_line(pdir / member.log_name)
            raise NotReady("server_exited", f"{member.label} exited with status {code} before the deployment was "
                                            "ready" + (f"; {member.log_name}: {last}" if last else "")) from None
        finally:
            loading.close()
        status.phase("ready")
        self.ready = {"server_info": {m.label: server_info(m.url, self.api_key) for m in self.members
                                      if m.url and m.role != ROUTER}}

    def launch(self, m: Member, sigs: StopSignals, status: PointStatus) -> None:
        """Start one member (a worker node's fingerprint capture beside it); its pid goes to status.json."""
        ctx = self.member_ctx(m)
        self.running[m.label] = self.launcher.start(m.argv, m.env, ctx)
        if m.role != ROUTER:
            self.captures[m.label] = BackgroundCapture(self.launcher, m.argv, m.env, ctx, should_stop=sigs.reason)
        status.data["server_pids"] = {label: r.process.pid for label, r in self.running.items()}
        status.save()

    def check_ports_free(self) -> None:
        for m in self.members:
            port = int(m.argv[m.argv.index("--port") + 1])
            if not port_owner.port_free(port):
                raise PointStopped("failed", f"port_in_use: port {port} of {m.label} is taken before launch: "
                                             f"{port_owner.holder(port)} "
                                             "(set deployment.ports.base to move the deployment's ports)")

    def wait_router(self, deadline: float, sigs: StopSignals, poll: Callable[[], None]) -> None:
        """Until the router's `/workers` lists every expected worker, healthy."""
        expected = expected_workers(self.dep, "--dp-aware" in self.router.argv)
        problem = "no answer"
        while True:
            gone = self.exited()
            if gone is not None:
                raise NotReady("server_exited", f"{gone[0].label} exited with status {gone[1]} before the "
                                                "deployment was ready")
            if sigs.reason():
                raise NotReady("stopped", sigs.reason() or "")
            try:
                problem = router_workers_problem(_get_json(f"{self.base_url}/workers", self.api_key), expected) or ""
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if not problem:
                return
            if time.monotonic() >= deadline:
                raise NotReady("ready_timeout", f"the router at {self.base_url} never listed the deployment's "
                                                f"workers: {problem}")
            poll()
            time.sleep(0.5)

    def stop_reason(self, sigs: StopSignals) -> str | None:
        if sigs.reason():
            return sigs.reason()
        gone = self.exited()
        if gone is None:
            return None
        member, code = gone
        return f"server_crashed: {member.label} on node {member.node.index} exited with status {code} during the run"

    def write_fingerprints(self, into: Path | None = None) -> None:
        """One fingerprint per worker node (srt-slurm's keys), once its capture has finished, in `into` (default:
        the point directory the deployment was started for)."""
        ready = self.ready
        if ready is None:
            return
        digest = image_digest(self.launcher_kind, self.image)
        for m in self.members:
            capture, run = self.captures.get(m.label), self.running.get(m.label)
            if capture is None or run is None:
                continue
            captured, info = capture.result()
            leader = f"{m.role}_w{m.worker}"
            fp = build_fingerprint(captured=captured, capture=info,
                                   server=ready["server_info"].get(leader, {"error": "no leader"}),
                                   image=self.image, digest=digest, engine=self.engine, server_argv=run.argv,
                                   server_env=m.env, launcher=self.launcher_kind)
            write_foreign_json(Path(into or self.ctx.point_dir) / m.fingerprint_name, fp)

    def stop(self, grace_s: float, status: PointStatus | None) -> None:
        """Fingerprints (a ready deployment), then the router, then every worker node; exit statuses to status."""
        try:
            try:
                self.write_fingerprints()
            finally:
                for capture in self.captures.values():
                    capture.abandon()
        finally:
            codes: dict[str, int | None] = {}
            for m in [self.router, *self.members[:-1]]:
                run = self.running.get(m.label)
                if run is None:
                    continue
                ours = run.exit_code() is None
                codes[m.label] = run.stop(grace_s)
                if ours:
                    note_stop(Path(self.ctx.point_dir) / m.log_name, codes[m.label], run.stopped_how)
            if codes and status is not None:
                status.data["server_exit_codes"] = codes
            self.running.clear()

