"""The point runner: one point on one fresh server, from launch to a result file with a verdict.

launching (the worker fingerprint captured beside it) → loading → ready → (power start) → warmup/profiling
(AIPerf) → draining → collecting → server stopped (the fingerprint written) → `bmk_agentic_<config_key>_conc<N>.json`
+ `status.json`.

Whatever happens (server crash, never ready, client failure, a stalled server, a full disk, SIGINT/SIGTERM,
Slurm's USR1 before the walltime), the server's whole process group is stopped, partial artifacts are kept and `status.json`
says which state the point ended in and why. Exit statuses: 0 completed and valid, 3 completed but
invalid, 1 failed, 128+signal when cancelled by a signal.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.artifacts import keep_out, scrub_logs, sync_tree, write_json, write_text
from harness.errors import UserError
from harness.point.record.judged import Judging
from harness.point.record.result import build_point_result, point_dir
from harness.point.replay import aiperf
from harness.point.replay.aiperf_check import check_aiperf
from harness.point.replay.aiperf_keyed import KEY_ENV, keyed_argv
from harness.point.replay.client_phase import NOT_TIMED, ClientProgress
from harness.point.replay.client_stall import ClientStallWatch
from harness.point.replay.corpus_input import aiperf_corpus
from harness.point.replay.progress import ClientLiveProgress
from harness.point.replay.stall import StallWatch, armed_line, default_stall_timeout_s
from harness.point.servers.deployment_server import DeploymentServer
from harness.point.servers.readiness import NotReady
from harness.point.servers.serve import FreshServer, PointStopped, ServerOptions, prepare_server, slurm_env
from harness.point.servers.server_metrics import scrape_all
from harness.point.state.attempt import ATTEMPTS_DIR, start_attempt
from harness.point.state.disk_full import FreeSpaceCheck, disk_full_error, disk_full_reason, run_guarded
from harness.point.state.ownership import PointLock
from harness.point.state.status import PointStatus
from harness.point.state.status_reserve import StatusReserve
from harness.point.state.unwritable import record_unwritable, unwritable_error
from harness.point.state.watch import StopSignals
from harness.power import PowerSampler
from harness.provenance import harness_commit
from harness.recipe.multinode.router import client_routing_env
from harness.recipe.plan import PointPlan
from harness.recipe.pricing import Price
from harness.recipe.request_slo import RequestSlo
from harness.recipe.thresholds import Thresholds
from harness.redact import add_secret_names
from harness.tokenizer import DEMO_TOKENIZER_DIR, DEMO_TOKENIZER_NAME, register_in_hf_cache

if TYPE_CHECKING:
    from harness.point.servers.deployment_reuse import ReusedDeployment, SharedDeployment
    from harness.point.servers.deployment_server import DeploymentServer
    from harness.point.servers.node_power import NodePowerSamplers

EXIT_VALID, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INVALID = 0, 1, 2, 3
CLIENT_OVERHEAD_S = 300.0   # AIPerf start-up, dataset build and teardown beyond warmup + duration + grace


@dataclass(frozen=True)
class PointOptions(ServerOptions):
    thresholds: Thresholds = field(default_factory=Thresholds)
    variant: str | None = None          # None: the recipe as written; else variants/<name>/ (harness.point.state.variant)
    tag: str | None = None              # --tag, recorded in the result
    note: str | None = None             # --note, recorded in the result
    slo: RequestSlo | None = None       # --slo (or the recipe's): the record's slo_attainment
    price: Price | None = None          # --gpu-hour-price (or the recipe's): the record's cost


@dataclass(frozen=True)
class PointOutcome:
    state: str
    reason: str | None
    exit_status: int
    point_dir: Path
    result_path: Path | None
    result: dict[str, Any] | None


def run_point(plan: PointPlan, options: PointOptions, shared: SharedDeployment | None = None) -> PointOutcome:
    """Run one point end to end; never leaves a process of the point running (but for `shared`, a deployment
    the sweep keeps up for its points and stops itself).

    A full disk (ENOSPC or EDQUOT, raised by any write of the run) ends the point here, after the run has
    stopped the server and AIPerf: `failed: disk_full` in `status.json` (written through the reserve kept
    for it) and one line on stderr naming the file and the filesystem; a disk too full for the point's lock ends
    the point before anything starts, with that one line only. A results directory that cannot be written any
    more (a filesystem turned read-only or failed, the directory gone: `harness.point.state.unwritable`) ends the
    point `failed: results_unwritable` the same way, in `status.json` where it can still be written."""
    add_secret_names(plan.secret_names)
    keep_out({"env": plan.server.env, "argv": plan.server.launch_argv()})  # kept out of every file
    if plan.deployment is not None:
        keep_out(plan.deployment.public())
    pdir = point_dir(options.out_dir, plan, options.variant)
    lock = PointLock(pdir)
    try:
        lock.acquire()   # one writer per point: a second one is refused here, naming the holder
    except OSError as exc:
        err = disk_full_error(exc)
        if err is None:
            raise
        return _full_before_lock(err, pdir)
    status = PointStatus(pdir, plan.conc, plan.config_key)
    try:
        return run_guarded(pdir, status, EXIT_FAILED,
                           lambda reserve: _run_point(plan, options, pdir, status, reserve, shared),
                           lambda reason: PointOutcome("failed", reason, EXIT_FAILED, pdir, None, None))
    except Exception as exc:
        err = unwritable_error(exc, Path(options.out_dir))
        if err is None:
            raise
        return PointOutcome("failed", record_unwritable(err, pdir, status, EXIT_FAILED), EXIT_FAILED, pdir,
                            None, None)
    finally:
        lock.release()


def _full_before_lock(err: OSError, pdir: Path) -> PointOutcome:
    """A disk too full for the point's lock: nothing started and nothing can be recorded in the point's directory,
    so the one line on stderr is the record (`disk_full`, the file, the filesystem and what it has free)."""
    reason = disk_full_reason(err, pdir)
    print(f"error: {reason}; the point is not started: its lock and status could not be written",
          file=sys.stderr, flush=True)
    return PointOutcome("failed", reason, EXIT_FAILED, pdir, None, None)


def _run_point(plan: PointPlan, options: PointOptions, pdir: Path, status: PointStatus,
               reserve: StatusReserve, shared: SharedDeployment | None) -> PointOutcome:
    cache_dir = options.cache_dir or (Path(options.out_dir) / ".cache")
    replayed, corpus = aiperf_corpus(plan.client, cache_dir)  # bad input fails before launch
    client_tool = check_aiperf(aiperf.aiperf_executable())  # so does a missing or broken client
    tokenizer_used = client_tokenizer(plan)
    labels = {**run_labels(options), "attempt": start_attempt(pdir)}   # the earlier attempt is set aside
    reserve.make()
    status.data.update(fingerprint=plan.fingerprint, launcher=options.launcher, overrides=list(options.overrides),
                       engine=plan.server.engine, simulated=plan.server.engine == "sim", image=plan.image,
                       **labels)
    slurm = slurm_env()
    if slurm:
        status.data["slurm"] = slurm
    server = point_server(plan, pdir, options, shared)
    base_url = server.base_url
    artifact_dir = pdir / "aiperf"
    tokenizer = _prepare_tokenizer(tokenizer_used, cache_dir)
    client_plan = plan.client.model_copy(update={"traces": replayed})
    client_argv = aiperf.build_argv(client_plan, base_url, artifact_dir, tokenizer,
                                    worker_urls=server.metrics_urls if plan.deployment is not None else ())
    client_tmp = aiperf.short_tmp_dir()
    client_env = aiperf.build_env(cache_dir, cache_dir / "hf", client_tmp, corpus.get("staged_cache"),
                                  client_plan.scenario)
    if plan.deployment is not None:
        client_env.update(client_routing_env(plan.deployment.router.kind, plan.deployment.router.policy))
    api_key = server.api_key
    if api_key is not None:   # AIPerf takes the key from its environment, never from its command line
        client_argv, client_env = keyed_argv(client_argv), {**client_env, KEY_ENV: api_key}
    write_text(pdir / "client_command.txt", shlex.join(client_argv) + "\n"
               + "".join(f"{k}={v}\n" for k, v in sorted(client_env.items())))
    write_json(pdir / "plan.json", plan.model_dump())
    status.data["corpus"] = corpus
    status.data["tokenizer"] = tokenizer_used

    power: PowerSampler | NodePowerSamplers | None = None
    client: aiperf.AiperfProcess | None = None
    client_run = None
    profiling = NOT_TIMED   # the profiling phase on the monotonic clock (`ClientProgress.clock`)
    metrics_before = metrics_after = None
    state, reason = "failed", None
    with StopSignals(status) as sigs:
        try:
            server.start_ready(plan, status, sigs, options.ready_timeout_s, options.progress_every_s,
                               on_poll=FreeSpaceCheck(pdir))
            metrics_before = scrape_all(server.metrics_urls)
            power = server.power_sampler(pdir)
            power.start()
            status.phase("warmup", "(AIPerf starting; agentic warmup of every lane)")
            client = aiperf.AiperfProcess(client_argv, client_env, pdir / "client.log")
            status.data["client_pid"] = client.pid
            status.save()
            timeout = plan.client.warmup_s + plan.client.duration_s + plan.client.grace_s + CLIENT_OVERHEAD_S

            stall_s = options.stall_timeout_s or default_stall_timeout_s(plan.client.duration_s)
            status.note(armed_line(stall_s))

            client_watch = ClientStallWatch(client.group.pgid, stall_s, aiperf.RecordCounter(artifact_dir).update,
                                            (artifact_dir / aiperf.LOG_FILE, pdir / "client.log"))
            with StallWatch(server.watch_url, stall_s, aiperf.RecordCounter(artifact_dir).update) as stall:
                def should_stop() -> str | None:   # a frozen client stops the server's streams too: it goes first
                    return server.stop_reason(sigs) or client_watch.check() or stall.check()

                phases = ClientProgress(artifact_dir, status)
                live = ClientLiveProgress(plan, artifact_dir, status, options.progress_every_s,
                                          waiting=client_watch.waiting)

                disk_left = FreeSpaceCheck(pdir)

                def on_tick() -> None:
                    disk_left()
                    phases.tick()
                    live.tick()

                try:
                    client_run = client.wait(timeout, should_stop=should_stop, on_tick=on_tick)
                finally:
                    live.close()
                    profiling = phases.clock()
            status.phase("draining")
            metrics_after = scrape_all(server.metrics_urls) if server.exit_code() is None else None
            power.stop()
            stop_reason = server.stop_reason(sigs) or client_watch.reason or stall.reason
            if stop_reason:
                raise PointStopped("cancelled" if sigs.reason() else "failed", stop_reason)
            if client_run.stopped == "timeout":
                raise PointStopped("failed", f"client_timeout: AIPerf ran past {timeout:.0f} s")
            if aiperf.read_summary(artifact_dir) is None:
                raise PointStopped("failed", aiperf.failure_reason(client_run.exit_code, artifact_dir,
                                                                   pdir / "client.log"))
            state = "completed"
        except NotReady as exc:
            state, reason = ("cancelled", sigs.reason()) if sigs.reason() else ("failed", f"{exc.reason}: {exc}")
        except PointStopped as exc:
            state, reason = exc.state, exc.reason
        except Exception as exc:  # unexpected: still tear down and record
            if disk_full_error(exc) or unwritable_error(exc, Path(options.out_dir)):
                raise       # after the teardown below: run_point records it
            state, reason = "failed", f"harness_error: {type(exc).__name__}: {exc}"
        finally:
            if client is not None:
                client.stop(grace_s=5.0)  # idempotent; covers an error raised while waiting for it
            if power is not None:
                power.stop()   # idempotent; covers the paths that never reached "draining"
            server.stop(options.server_stop_grace_s, status)
            if server.logs_final:
                scrub_logs(pdir)  # a server may echo its arguments (SGLang logs its api_key)
            shutil.rmtree(client_tmp, ignore_errors=True)
        # what the record is built from (AIPerf's outputs, the power samples) on disk before the record says it
        sync_tree(pdir, skip=lambda name: name.endswith(".log") or name == ATTEMPTS_DIR)
        status.phase("collecting")
        result, result_path = build_point_result(
            plan, overrides=options.overrides, labels=labels, thresholds=options.thresholds, pdir=pdir,
            artifact_dir=artifact_dir,
            client_run=client_run, profiling=profiling, metrics_before=metrics_before,
            metrics_after=metrics_after, state=state,
            reason=reason, corpus=corpus, tokenizer=tokenizer_used, client_tool=client_tool,
            deployment_run=server.run_record, judging=Judging(options.slo, options.price))
        if result is not None:  # strict power can turn a completed point into a failed one
            state, reason = result["state"], result["state_reason"]
        exit_status = _exit_status(state, result, sigs.received)
        status.finish(state, reason, exit_status,
                      valid=None if result is None else result["validity"]["valid"],
                      publishable=None if result is None else result["publishable"]["label"],
                      result=None if result_path is None else result_path.name)
    return PointOutcome(state, reason, exit_status, pdir, result_path, result)


def point_server(plan: PointPlan, pdir: Path, options: PointOptions,
                 shared: SharedDeployment | None) -> FreshServer | DeploymentServer | ReusedDeployment:
    """What the point runs against: one fresh server, a fresh deployment, or the sweep's shared deployment."""
    if plan.deployment is None:
        return FreshServer(prepare_server(plan, pdir, options.launcher, mounts=options.mounts, gpus=options.gpus,
                                          image_path=options.image_path))
    if shared is not None:
        return shared.for_point(plan, pdir, options.launcher, options.mounts, options.image_path)

    return DeploymentServer(plan, pdir, options.launcher, mounts=options.mounts, image_path=options.image_path)


def run_labels(options: PointOptions) -> dict[str, Any]:
    """What names this run in our record: variant, tag, note and the harness's own git commit."""

    return {"variant": options.variant, "tag": options.tag, "note": options.note,
            "harness_commit": harness_commit()}


def _exit_status(state: str, result: dict[str, Any] | None, signum: int | None) -> int:
    if state == "cancelled":
        return 128 + int(signum) if signum else EXIT_FAILED
    if state == "failed":
        return EXIT_FAILED
    return EXIT_VALID if result and result["validity"]["valid"] else EXIT_INVALID


def client_tokenizer(plan: PointPlan) -> dict[str, str]:
    """Which tokenizer AIPerf builds prompts with: the plan's (the served model's, resolved by preflight), or
    the harness's demo tokenizer for the simulator only. A real SGLang point never falls back to the demo one."""

    if plan.client.tokenizer:
        source = Path(plan.client.tokenizer)
        return {"source": str(source), "name": f"local/{source.name or 'tokenizer'}", "kind": "model"}
    if plan.server.engine != "sim":
        raise UserError(f"points.{plan.name}: no client tokenizer: with engine sglang AIPerf must use the served "
                        "model's tokenizer (client.tokenizer, or a checkpoint preflight can find)")
    return {"source": str(DEMO_TOKENIZER_DIR), "name": DEMO_TOKENIZER_NAME, "kind": "demo (simulator only)"}


def _prepare_tokenizer(tokenizer: dict[str, str], cache_dir: Path) -> str:
    return register_in_hf_cache(Path(tokenizer["source"]), tokenizer["name"], cache_dir / "hf")


