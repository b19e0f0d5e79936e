"""A fresh server for one plan: where it listens, launching it, waiting until it is ready, its fingerprint.

Shared by the point runner (`harness run`) and the eval runner (`harness eval`): both start the plan's
server in its own process group (its output in `server.log`), record the exact launch command, wait with
a finite budget until it is really ready (liveness on every poll, `/health`, a one-token chat completion),
capture the worker fingerprint beside the start-up (the server's own interpreter through the same launcher;
`fingerprint_agg_w0.json` is written when the server is stopped, for a server that became ready), and stop
the whole process group whatever ends the run.
"""

from __future__ import annotations

import os
import secrets
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.artifacts import append_text, write_command, write_foreign_json, write_json
from harness.point.fingerprints.fingerprint import (
    BackgroundCapture,
    build_fingerprint,
    image_digest,
    recorded_capture_argv,
)
from harness.point.servers import port_owner, server_env
from harness.point.servers.load_progress import ServerLoadProgress
from harness.point.servers.readiness import NotReady, server_info, wait_until_ready
from harness.point.servers.server_crash import CrashWatch, crash_reason, runtime_gone_reason
from harness.point.servers.server_failure import key_line
from harness.point.servers.server_logs import SIM_TRUTH_LOG
from harness.point.state.status import PointStatus
from harness.point.state.watch import StopSignals
from harness.power import PowerSampler
from harness.recipe.plan import PointPlan
from launchers import LaunchContext, get_launcher
from launchers.docker import container_name

if TYPE_CHECKING:
    from harness.power import PowerSampler
    from launchers import LaunchContext, Launcher, RunningServer

SLURM_ENV = ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURMD_NODENAME", "SLURM_JOB_GPUS",
             "SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")


@dataclass(frozen=True)
class ServerOptions:
    """How a run starts, watches and stops its fresh server: the options a point (`PointOptions`) and an
    eval (`EvalOptions`) share."""

    out_dir: Path
    launcher: str = "local"
    ready_timeout_s: float = 1800.0
    server_stop_grace_s: float = 15.0
    mounts: tuple[str, ...] = ()
    gpus: tuple[str, ...] | None = None
    image_path: str | None = None
    cache_dir: Path | None = None
    overrides: tuple[str, ...] = ()     # the --set KEY=VALUE changes, recorded in the result
    progress_every_s: float = 30.0      # 0 turns the progress lines off
    stall_timeout_s: float | None = None  # None: derived from the run's length (harness.point.replay.stall)


def server_options(options: ServerOptions) -> dict[str, Any]:
    """The shared fields of `options` (a `PointOptions` or an `EvalOptions`), to build another run's options."""
    return {f.name: getattr(options, f.name) for f in fields(ServerOptions)}


class PointStopped(Exception):
    """A run ended early: `state` is failed or cancelled, `reason` starts with a reason code."""

    def __init__(self, state: str, reason: str):
        super().__init__(reason)
        self.state = state
        self.reason = reason


def slurm_env() -> dict[str, str]:
    """Where a Slurm array task runs: its ids, node and the GPU indices Slurm gave it (need not start at 0)."""
    if "SLURM_JOB_ID" not in os.environ:
        return {}
    return {k: os.environ[k] for k in SLURM_ENV if k in os.environ}


def with_port(argv: list[str], port: int) -> list[str]:
    out = list(argv)
    out[out.index("--port") + 1] = str(port)
    return out


LAUNCH_TOKEN_FLAG = "--weight-version"  # a label SGLang echoes in /server_info and /model_info, nothing more


def new_launch_token() -> str:
    return f"harness-launch-{secrets.token_hex(8)}"


def with_launch_token(argv: list[str], token: str) -> list[str]:
    """`argv` with this launch's token as `--weight-version` (replaced where already given)."""
    out = list(argv)
    if LAUNCH_TOKEN_FLAG in out[:-1]:
        out[out.index(LAUNCH_TOKEN_FLAG) + 1] = token
        return out
    return [*out, LAUNCH_TOKEN_FLAG, token]


def listen_at(argv: list[str], port: int) -> tuple[list[str], str]:
    """The server argv on `port` and the URL that reaches what it binds (`--host`) from this node.

    Every launcher shares the host's network (docker --network host, enroot, apptainer, a pyxis step), so the
    server listens on this node and the probe connects to exactly the address `--host` binds."""
    bind = argv[argv.index("--host") + 1] if "--host" in argv[:-1] else "127.0.0.1"
    probe = "127.0.0.1" if bind in ("0.0.0.0", "", "::", "localhost", "127.0.0.1") else bind
    return with_port(argv, port), f"http://{probe}:{port}"


PORT_IN_USE_MARKERS = ("address already in use", "is not available", "only one usage of each socket address")


def port_in_use_cause(server_log: Path) -> str | None:
    """The line of `server.log` that says the server could not bind its port, if any."""
    try:
        lines = server_log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    return next((ln.strip() for ln in reversed(lines) if any(m in ln.lower() for m in PORT_IN_USE_MARKERS)), None)


def check_stop(sigs: StopSignals) -> None:
    if sigs.reason():
        raise PointStopped("cancelled", sigs.reason() or "")


@dataclass(frozen=True)
class Endpoint:
    """Where the plan's server will listen and exactly how it is launched."""

    launcher_kind: str
    launcher: Launcher
    ctx: LaunchContext
    host: str
    base_url: str
    argv: list[str]
    env: dict[str, str]
    token: str  # this launch's --weight-version, echoed by the launched server's /server_info
    api_key: str | None  # the server's --api-key, from the plan (held apart from its command): the clients send it


def prepare_server(plan: PointPlan, pdir: Path, launcher_kind: str, *, mounts: tuple[str, ...] = (),
                   gpus: tuple[str, ...] | None = None, image_path: str | None = None) -> Endpoint:
    """Choose the port and write `server_command.txt` (exact launcher argv + env, secrets redacted)."""

    launcher = get_launcher(launcher_kind)
    argv, base_url = listen_at(plan.server.launch_argv(), port_owner.free_port())   # the secret flags joined here
    if plan.server.engine == "sim" and "--sim-truth-log" not in argv:   # the simulator's ground truth, per point
        argv += ["--sim-truth-log", str(Path(pdir).resolve() / SIM_TRUTH_LOG)]
    token = new_launch_token()
    argv = with_launch_token(argv, token)
    host = base_url.split("//", 1)[1].rsplit(":", 1)[0]
    ctx = LaunchContext(point_dir=pdir, image=plan.image, engine=plan.server.engine, mounts=mounts, gpus=gpus,
                        container_name=container_name(plan.config_key, plan.conc, pdir, token[-6:]), image_path=image_path)
    write_command(pdir / "server_command.txt", [(None, launcher.render(argv, plan.server.env, ctx), plan.server.env)])
    write_command(pdir / "fingerprint_command.txt",
                  [(None, recorded_capture_argv(launcher, argv, plan.server.env, ctx), {})])
    return Endpoint(launcher_kind, launcher, ctx, host, base_url, argv, dict(plan.server.env), token,
                    plan.server.api_key)


class FreshServer:
    """The plan's server for one run: started once, then stopped as a whole whatever happened."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.running: RunningServer | None = None
        self.capture: BackgroundCapture | None = None
        self.ready: dict[str, Any] | None = None   # what the fingerprint needs, once the server is ready
        self.crash_watch: CrashWatch | None = None   # SGLang's own processes, once the server is ready
        self.ended: str | None = None   # why the ready server ended, once it has

    def start_ready(self, plan: PointPlan, status: PointStatus, sigs: StopSignals, ready_timeout_s: float,
                    progress_every_s: float = 30.0, on_poll: Callable[[], None] | None = None) -> None:
        """Launch (the fingerprint capture beside it), wait until ready. Raises NotReady or PointStopped (or
        what `on_poll`, called on every readiness poll, raises)."""
        ep = self.endpoint
        status.phase("launching", shlex.join(ep.argv[:4]) + " ...")
        port = int(ep.argv[ep.argv.index("--port") + 1])
        if not port_owner.port_free(port):
            raise PointStopped("failed", f"port_in_use: port {port} is taken before launch: "
                                         f"{port_owner.holder(port)}")
        ep.launcher.clear_leftovers(ep.ctx.point_dir)
        launched_ns = time.time_ns()
        self.running = ep.launcher.start(ep.argv, ep.env, ep.ctx)
        # the worker fingerprint, captured inside the server's environment while the server loads
        self.capture = BackgroundCapture(ep.launcher, ep.argv, ep.env, ep.ctx, should_stop=sigs.reason)
        status.data["server_pid"] = self.running.process.pid
        status.save()
        check_stop(sigs)

        def poll() -> None:
            if on_poll is not None:
                on_poll()
            loading.tick()

        loading = ServerLoadProgress(plan, status, Path(ep.ctx.point_dir) / "server.log", ready_timeout_s,
                                     progress_every_s)
        try:
            wait_until_ready(ep.base_url, plan.client.served_model_name, self.running.exit_code,
                             budget_s=ready_timeout_s, on_loading=lambda: status.phase("loading"),
                             should_stop=sigs.reason, foreign=lambda: port_owner.foreign_listener(port, launched_ns),
                             on_poll=poll, token=ep.token, api_key=ep.api_key)
        except NotReady as exc:
            log = Path(ep.ctx.point_dir) / "server.log"
            gone = ep.launcher.runtime_gone(log) if exc.reason == "server_exited" else None
            if gone:   # the container runtime went away (or never answered): its name, in its own words
                raise NotReady("container_runtime_gone", f"the {ep.launcher.kind} daemon stopped answering before "
                                                         f"the server was ready ({ep.launcher.kind}: {gone}); {exc}") from None
            refused = ep.launcher.start_failure(log) if exc.reason == "server_exited" else None
            if refused:   # the runtime never started the container: its reason, in its own words
                raise NotReady(refused[0], f"{exc}; {refused[1]}") from None
            cause = port_in_use_cause(log) if exc.reason == "server_exited" else None
            if cause:  # the server died because it could not bind: say so, in its own words
                raise NotReady("port_in_use", f"{exc}; server.log: {cause}") from None
            said = key_line(log) if exc.reason == "server_exited" else None
            if said:   # why it ended, in its own words (the console prints more of the log)
                raise NotReady(exc.reason, f"{exc}; server.log: {said}") from None
            raise
        finally:
            loading.close()
        status.phase("ready")
        self.crash_watch = CrashWatch.of_group(self.running.process.pid)
        effective, source, error = server_env.read_effective(ep.launcher_kind, ep.ctx.container_name,
                                                             self.running.process.pid, port)
        env_record = server_env.check(ep.env, effective, source, error)
        write_json(Path(ep.ctx.point_dir) / server_env.SERVER_ENV_FILE, env_record)
        self.ready = {"server_info": server_info(ep.base_url, ep.api_key), "image": plan.image,
                      "engine": plan.server.engine, "env": dict(plan.server.env), "effective_env": env_record}

    @property
    def base_url(self) -> str:
        return self.endpoint.base_url

    @property
    def metrics_urls(self) -> list[str]:
        return [self.endpoint.base_url]

    @property
    def watch_url(self) -> str:
        return self.endpoint.base_url

    @property
    def api_key(self) -> str | None:
        return self.endpoint.api_key

    run_record = None   # a fresh server serves this point only
    logs_final = True   # stopped with the point: its logs can be scrubbed

    def power_sampler(self, pdir: Path) -> PowerSampler:
        """This process samples the GPUs it may use."""

        return PowerSampler(None, pdir / "power.csv")

    def write_fingerprint(self) -> dict[str, Any] | None:
        """`fingerprint_agg_w0.json` once the capture (started beside the server's start-up) has finished:
        it never holds up readiness or the workload. Only for a server that became ready; returns what it wrote."""
        ep, ready = self.endpoint, self.ready
        if self.capture is None or self.running is None or ready is None:
            return None
        captured, capture = self.capture.result()
        fp = build_fingerprint(captured=captured, capture=capture, server=ready["server_info"],
                               image=ready["image"], digest=image_digest(ep.launcher_kind, ready["image"]),
                               engine=ready["engine"], server_argv=self.running.argv, server_env=ready["env"],
                               launcher=ep.launcher_kind, effective_env=ready["effective_env"])
        write_foreign_json(Path(ep.ctx.point_dir) / "fingerprint_agg_w0.json", fp)  # srt-slurm's key order
        return fp

    def exit_code(self) -> int | None:
        return None if self.running is None else self.running.exit_code()

    def stop_reason(self, sigs: StopSignals) -> str | None:
        """Why a run must stop now: a signal (named even when it also reached the server, as scancel and
        the walltime do), or the server gone."""
        if sigs.reason():
            return sigs.reason()
        if self.ended is None:
            self.ended = self.ended_reason()
        return self.ended

    def ended_reason(self) -> str | None:
        """Why the ready server ended: its container runtime gone (the runtime asked once, when the server's
        process has ended), a crash, or None while it runs."""
        log = Path(self.endpoint.ctx.point_dir) / "server.log"
        code = self.exit_code()
        crashed = crash_reason(code, self.crash_watch, log)
        if code is None or crashed is None:
            return crashed
        gone = self.endpoint.launcher.runtime_gone(log)
        return crashed if gone is None else runtime_gone_reason(self.endpoint.launcher.kind, gone, code)

    def stop(self, grace_s: float, status: PointStatus) -> None:
        """Write the fingerprint (a ready server) or abandon its capture, then stop the server's whole process
        group (if it was started); the server's exit code goes to status.json."""
        try:
            if self.capture is not None:
                try:
                    fp = self.write_fingerprint()   # a stop signal cuts the capture short; the file then says so
                    if fp and fp.get("packages_error"):   # the point's record says its packages are not captured
                        status.data["fingerprint_packages_error"] = fp["packages_error"]
                finally:
                    self.capture.abandon()
        finally:   # the server is stopped even when the fingerprint cannot be written (a full disk)
            if self.running is not None:
                ours = self.running.exit_code() is None
                status.data["server_exit_code"] = code = self.running.stop(grace_s)
                if ours:
                    note_stop(Path(self.endpoint.ctx.point_dir) / "server.log", code, self.running.stopped_how)


def note_stop(server_log: Path, exit_code: int | None, how: str) -> None:
    """Say at the end of `server.log` that the harness stopped the server (`how`), so that the lines about it
    being terminated (or its Slurm step CANCELLED) do not read as a failure."""
    try:
        append_text(server_log, f"[harness] the harness stopped the server when the point ended ({how}; "
                                f"exit status {exit_code}): the lines above about it being "
                                "terminated, or its Slurm step CANCELLED, are that stop, not a failure\n")
    except OSError:
        pass   # a full disk or a removed directory: the note is a courtesy
