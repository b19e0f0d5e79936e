"""The point runner: one point on one fresh server, from launch to a result file with a verdict.

launching → loading → ready → (fingerprint, power start) → warmup/profiling (AIPerf) → draining →
collecting → server stopped → `bmk_agentic_<config_key>_conc<N>.json` + `status.json`.

Whatever happens (server crash, never ready, client failure, SIGINT/SIGTERM, Slurm's USR1 before the
walltime), the server's whole process group is stopped, partial artifacts are kept and `status.json`
says which state the point ended in and why. Exit statuses: 0 completed and valid, 3 completed but
invalid, 1 failed, 128+signal when cancelled by a signal.
"""

from __future__ import annotations

import shlex
import shutil
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from harness import aiperf, results
from harness.artifacts import write_json, write_text
from harness.corpus_input import aiperf_corpus_dir
from harness.fingerprint import build_fingerprint, host_fingerprint, redact_argv, server_info
from harness.plan import PointPlan
from harness.readiness import NotReady, wait_until_ready
from harness.server_metrics import achieved_accept_length, scrape
from harness.status import PointStatus
from harness.validity import Thresholds, verdict

EXIT_VALID, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INVALID = 0, 1, 2, 3
CLIENT_OVERHEAD_S = 300.0   # AIPerf start-up, dataset build and teardown beyond warmup + duration + grace


@dataclass(frozen=True)
class PointOptions:
    out_dir: Path
    launcher: str = "local"
    thresholds: Thresholds = field(default_factory=Thresholds)
    ready_timeout_s: float = 1800.0
    server_stop_grace_s: float = 15.0
    mounts: tuple[str, ...] = ()
    gpus: tuple[str, ...] | None = None
    cache_dir: Path | None = None
    overrides: tuple[str, ...] = ()     # the --set KEY=VALUE changes, recorded in the result
    image_path: str | None = None
    progress_every_s: float = 30.0   # 0 turns the progress lines off


class SweepPlanFile(BaseModel):
    """A planned sweep on disk: the options every point runs with and each point's plan."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int | None = None   # written by harness.artifacts.write_json
    out_dir: str
    launcher: str = "local"
    ready_timeout_s: float = 1800.0
    thresholds: Thresholds = Thresholds()
    mounts: list[str] = []
    image_path: str | None = None
    gpus: list[str] | None = None
    overrides: list[str] = []
    points: list[PointPlan]

    def options(self) -> PointOptions:
        return PointOptions(out_dir=Path(self.out_dir), launcher=self.launcher, ready_timeout_s=self.ready_timeout_s,
                            thresholds=self.thresholds, mounts=tuple(self.mounts),
                            gpus=None if self.gpus is None else tuple(self.gpus), overrides=tuple(self.overrides),
                            image_path=self.image_path)


def load_sweep_plan(path: Path) -> SweepPlanFile:
    from harness.artifacts import read_json
    from harness.errors import UserError, pydantic_error_line

    try:
        return SweepPlanFile.model_validate(read_json(path))
    except FileNotFoundError:
        raise UserError(f"{path}: no such sweep plan file") from None
    except ValidationError as exc:
        raise UserError(pydantic_error_line(str(path), exc)) from None


@dataclass(frozen=True)
class PointOutcome:
    state: str
    reason: str | None
    exit_status: int
    point_dir: Path
    result_path: Path | None
    result: dict[str, Any] | None


def point_dir(out_dir: Path, plan: PointPlan) -> Path:
    return Path(out_dir) / plan.config_key / f"conc{plan.conc}"


def result_name(plan: PointPlan) -> str:
    return f"bmk_agentic_{plan.config_key}_conc{plan.conc}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SLURM_ENV = ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURMD_NODENAME", "SLURM_JOB_GPUS",
             "SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")


def slurm_env() -> dict[str, str]:
    """Where a Slurm array task runs: its ids, node and the GPU indices Slurm gave it (need not start at 0)."""
    import os

    if "SLURM_JOB_ID" not in os.environ:
        return {}
    return {k: os.environ[k] for k in SLURM_ENV if k in os.environ}


def with_port(argv: list[str], port: int) -> list[str]:
    out = list(argv)
    out[out.index("--port") + 1] = str(port)
    return out


class _Signals:
    """SIGINT/SIGTERM/SIGUSR1 become a stop request the runner acts on between steps."""

    NAMES: ClassVar[dict[int, str]] = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM",
                                       signal.SIGUSR1: "SIGUSR1"}

    def __init__(self) -> None:
        self.received: int | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self) -> _Signals:
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


class _Progress:
    """A progress line every `every_s` seconds while AIPerf runs (stdout and the point's harness.log)."""

    def __init__(self, plan: PointPlan, artifact_dir: Path, status: PointStatus, every_s: float):
        self.plan, self.status, self.every_s = plan, status, every_s
        self.counter = aiperf.RecordCounter(artifact_dir)
        self.phases = aiperf.PhaseWatcher(artifact_dir)
        self.start = self.last = self.last_phase_check = time.monotonic()

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last_phase_check >= 1.0:  # AIPerf's warmup → profiling switch, as a phase marker
            self.last_phase_check = now
            kind = self.phases.update()
            if kind in ("warmup", "profiling") and kind != self.status.data["phase"]:
                self.status.phase(kind, "(AIPerf)")
        if self.every_s <= 0 or now - self.last < self.every_s:
            return
        self.last = now
        records = self.counter.update()
        c = self.plan.client
        line = (f"c{self.plan.conc}: client running {now - self.start:.0f} s (window {c.duration_s:.0f} s + warmup "
                f"{c.warmup_s:.0f} s + grace {c.grace_s:.0f} s); {records} requests recorded, "
                f"{self.counter.errors} errors")
        print(line, flush=True)
        self.status.note(f"[progress] {line}")


class PointStopped(Exception):
    def __init__(self, state: str, reason: str):
        super().__init__(reason)
        self.state = state
        self.reason = reason


def run_point(plan: PointPlan, options: PointOptions) -> PointOutcome:
    """Run one point end to end; never leaves a process of the point running."""
    from launchers import LaunchContext, get_launcher

    pdir = point_dir(options.out_dir, plan)
    cache_dir = options.cache_dir or (Path(options.out_dir) / ".cache")
    corpus_dir, corpus_note = aiperf_corpus_dir(plan.client.traces, cache_dir)  # bad input fails before launch
    corpus = {"spec": plan.client.traces, "replayed": str(corpus_dir), "conversion": corpus_note}
    pdir.mkdir(parents=True, exist_ok=True)
    status = PointStatus(pdir, plan.conc, plan.config_key)
    status.data.update(fingerprint=plan.fingerprint, launcher=options.launcher, overrides=list(options.overrides))
    if slurm_env():
        status.data["slurm"] = slurm_env()
    launcher = get_launcher(options.launcher)
    # local and pyxis servers run on this node (a pyxis step shares the host network): a free local port
    on_node = options.launcher in ("local", "pyxis")
    port = free_port() if on_node else plan.server.port
    host = plan.server.host if on_node else socket.gethostname()
    base_url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}"
    server_argv = with_port(plan.server.argv, port)
    ctx = LaunchContext(point_dir=pdir, image=plan.image, engine=plan.server.engine, mounts=options.mounts,
                        gpus=options.gpus, container_name=f"harness-{plan.config_key}-c{plan.conc}-{port}",
                        image_path=options.image_path)
    artifact_dir = pdir / "aiperf"
    tokenizer = _prepare_tokenizer(plan, cache_dir)
    client_plan = plan.client.model_copy(update={"traces": str(corpus_dir)})
    client_argv = aiperf.build_argv(client_plan, base_url, artifact_dir, tokenizer)
    client_tmp = aiperf.short_tmp_dir()
    client_env = aiperf.build_env(cache_dir, cache_dir / "hf", client_tmp)
    write_text(pdir / "server_command.txt", shlex.join(redact_argv(launcher.render(server_argv, plan.server.env, ctx)))
               + "\n" + "".join(f"{k}={v}\n" for k, v in sorted(_redacted(plan.server.env).items())))
    write_text(pdir / "client_command.txt", shlex.join(client_argv) + "\n"
               + "".join(f"{k}={v}\n" for k, v in sorted(client_env.items())))
    write_json(pdir / "plan.json", plan.model_dump())
    status.data["corpus"] = corpus

    server = None
    client_run = None
    metrics_before = metrics_after = None
    state, reason = "failed", None
    with _Signals() as sigs:
        try:
            status.phase("launching", shlex.join(server_argv[:4]) + " ...")
            server = launcher.start(server_argv, plan.server.env, ctx)
            status.data["server_pid"] = server.process.pid
            status.save()
            _check_stop(sigs)
            wait_until_ready(base_url, plan.client.served_model_name, server.exit_code,
                             budget_s=options.ready_timeout_s, on_loading=lambda: status.phase("loading"),
                             should_stop=sigs.reason)
            status.phase("ready")
            fp = build_fingerprint(host=host_fingerprint(), server=server_info(base_url), image=plan.image,
                                   image_digest=None, engine=plan.server.engine, server_argv=server.argv,
                                   server_env=plan.server.env, launcher=options.launcher)
            write_json(pdir / "fingerprint_agg_w0.json", fp)
            metrics_before = scrape(base_url)
            power = _start_power(pdir, options)
            status.phase("warmup", "(AIPerf starting; agentic warmup of every lane)")
            client = aiperf.AiperfProcess(client_argv, client_env, pdir / "client.log")
            status.data["client_pid"] = client.popen.pid
            status.save()
            timeout = plan.client.warmup_s + plan.client.duration_s + plan.client.grace_s + CLIENT_OVERHEAD_S

            def should_stop() -> str | None:
                # a signal names the cause even when it also reached the server first (scancel, walltime)
                if sigs.reason():
                    return sigs.reason()
                if server.exit_code() is not None:
                    return f"server_exited: status {server.exit_code()} during the run"
                return None

            progress = _Progress(plan, artifact_dir, status, options.progress_every_s)
            client_run = client.wait(timeout, should_stop=should_stop, on_tick=progress.tick)
            status.phase("draining")
            metrics_after = scrape(base_url) if server.exit_code() is None else None
            _stop_power(power)
            stop_reason = should_stop()
            if stop_reason:
                raise PointStopped("cancelled" if sigs.reason() else "failed", stop_reason)
            if client_run.stopped == "timeout":
                raise PointStopped("failed", f"client_timeout: AIPerf ran past {timeout:.0f} s")
            if aiperf.read_summary(artifact_dir) is None:
                raise PointStopped("failed", f"client_failed: AIPerf exited {client_run.exit_code} without a "
                                   f"summary; {aiperf.last_error(pdir / 'client.log')}")
            state = "completed"
        except NotReady as exc:
            state, reason = ("cancelled", sigs.reason()) if sigs.reason() else ("failed", f"{exc.reason}: {exc}")
        except PointStopped as exc:
            state, reason = exc.state, exc.reason
        except Exception as exc:  # unexpected: still tear down and record
            state, reason = "failed", f"harness_error: {type(exc).__name__}: {exc}"
        finally:
            if server is not None:
                code = server.stop(options.server_stop_grace_s)
                status.data["server_exit_code"] = code
            shutil.rmtree(client_tmp, ignore_errors=True)
        status.phase("collecting")
        result, result_path = _collect(plan, options, pdir, artifact_dir, client_run, metrics_before,
                                       metrics_after, state, reason, corpus)
        if result is not None:  # strict power can turn a completed point into a failed one
            state, reason = result["state"], result["state_reason"]
        exit_status = _exit_status(state, result, sigs.received)
        status.finish(state, reason, exit_status,
                      valid=None if result is None else result["validity"]["valid"],
                      result=None if result_path is None else result_path.name)
    return PointOutcome(state, reason, exit_status, pdir, result_path, result)


def _check_stop(sigs: _Signals) -> None:
    if sigs.reason():
        raise PointStopped("cancelled", sigs.reason() or "")


def _exit_status(state: str, result: dict[str, Any] | None, signum: int | None) -> int:
    if state == "cancelled":
        return 128 + int(signum) if signum else EXIT_FAILED
    if state == "failed":
        return EXIT_FAILED
    return EXIT_VALID if result and result["validity"]["valid"] else EXIT_INVALID


def _redacted(env: dict[str, str]) -> dict[str, str]:
    from harness.fingerprint import redact_env

    return redact_env(env)


def _prepare_tokenizer(plan: PointPlan, cache_dir: Path) -> str:
    from harness.tokenizer import DEMO_TOKENIZER_DIR, DEMO_TOKENIZER_NAME, register_in_hf_cache

    source = Path(plan.client.tokenizer) if plan.client.tokenizer else DEMO_TOKENIZER_DIR
    name = DEMO_TOKENIZER_NAME if source == DEMO_TOKENIZER_DIR else f"local/{source.name or 'tokenizer'}"
    return register_in_hf_cache(source, name, cache_dir / "hf")


def _start_power(pdir: Path, options: PointOptions) -> Any:
    from harness.power import PowerSampler

    sampler = PowerSampler(None, pdir / "power.csv")
    sampler.start()
    return sampler


def _stop_power(sampler: Any) -> None:
    if sampler is not None:
        sampler.stop()


def _collect(plan: PointPlan, options: PointOptions, pdir: Path, artifact_dir: Path, client_run: Any,
             metrics_before: dict[str, float] | None, metrics_after: dict[str, float] | None,
             state: str, reason: str | None, corpus: dict[str, Any]) -> tuple[dict[str, Any] | None, Path | None]:
    """Build and write the result from whatever the client left (also for failed/cancelled points)."""
    summary = aiperf.read_summary(artifact_dir)
    raw_records = aiperf.read_records(artifact_dir)
    if summary is None and not raw_records:
        return None, None
    records = [results.parse_record(r) for r in raw_records]
    counts = aiperf.read_phase_counts(artifact_dir)
    cancelled = None if counts is None else counts["cancelled"]
    accounting = results.request_accounting(records, cancelled)
    metrics = results.request_metrics(records, plan.resources.num_gpus)
    settings = plan.settings
    args = settings["args"]
    target = _target_accept_length(plan)
    achieved, al_reason = achieved_accept_length(metrics_before, metrics_after) if target else (None, None)
    result: dict[str, Any] = {
        "config_key": plan.config_key,
        "name": result_name(plan),
        "engine": plan.server.engine,
        "simulated": plan.server.engine == "sim",
        "conc": plan.conc,
        "image": plan.image,
        "model": args.get("model-path"),
        "served_model_name": plan.client.served_model_name,
        "framework": "sglang",
        "precision": settings.get("precision"),
        "spec_decoding": str(args.get("speculative-algorithm", "none")).lower(),
        "tp": int(args.get("tp-size", 1)),
        "ep": int(args.get("ep-size", 1)),
        "pp": int(args.get("pp-size", 1)),
        "kv_offloading": "dram" if args.get("enable-hierarchical-cache") else "none",
        "num_gpus": plan.resources.num_gpus,
        "hw": plan.resources.gpu,
        "recipe_fingerprint": plan.fingerprint,
        "scenario_type": "agentic-coding",
        "state": state,
        "state_reason": reason,
        "overrides": list(options.overrides),
        "num_requests_total": accounting["records_profiled"] + (cancelled or 0),
        "num_requests_successful": accounting["successful"],
        "request_accounting": accounting,
        "request_metrics": metrics,
        "achieved_concurrency": results.achieved_concurrency(records),
        "context_overflow_count": int((summary or {}).get("context_overflow_count", {}).get("avg", 0) or 0)
        if isinstance((summary or {}).get("context_overflow_count"), dict) else 0,
        "speculative_acceptance": {"target": target, "achieved": achieved, "reason": al_reason}
        if target else None,
        "client": {"aiperf_exit_code": None if client_run is None else client_run.exit_code,
                   "aiperf_stopped": None if client_run is None else client_run.stopped,
                   "aiperf_was_cancelled": (summary or {}).get("was_cancelled"),
                   "aiperf_benchmark_duration_s": ((summary or {}).get("benchmark_duration") or {}).get("avg"),
                   "aiperf_scenario_override": plan.client.duration_s < aiperf.SCENARIO_MIN_DURATION_S,
                   "requested_duration_s": plan.client.duration_s,
                   "corpus": corpus},
        "fingerprint": _fingerprint_summary(pdir),
    }
    expected = None if plan.server.engine == "sim" else plan.resources.num_gpus
    result.update(_power_fields(pdir, metrics, accounting, expected,
                                result["client"]["aiperf_benchmark_duration_s"]))
    thresholds = options.thresholds
    if state == "completed" and thresholds.require_power and not result.get("power_valid"):
        # strict mode: the power audit files are written by now; the point itself fails
        result["state"] = "failed"
        result["state_reason"] = "power_invalid: " + ", ".join(result.get("power_invalid_reasons") or ["unknown"])
    result["validity"] = verdict(result, plan.client.duration_s, thresholds)
    if result["state"] != "completed":
        result["validity"]["valid"] = False
        result["validity"]["reasons"].insert(0, {"code": f"point_{result['state']}",
                                                 "message": result["state_reason"] or result["state"]})
    path = write_json(pdir / f"{result_name(plan)}.json", result)
    return result, path


def _target_accept_length(plan: PointPlan) -> float | None:
    value = plan.server.env.get("SGLANG_SIMULATE_ACC_LEN")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _fingerprint_summary(pdir: Path) -> dict[str, Any] | None:
    from harness.artifacts import read_json

    path = pdir / "fingerprint_agg_w0.json"
    if not path.exists():
        return None
    fp = read_json(path)
    host = fp.get("host", {})
    info = fp.get("server", {}).get("server_info", {})
    return {"path": path.name, "host": host.get("host"), "arch": host.get("arch"),
            "gpus": [g.get("name") for g in host.get("gpu", {}).get("gpus", [])],
            "gpu_reason": host.get("gpu", {}).get("reason"),
            "server_version": info.get("version") if isinstance(info, dict) else None,
            "image": fp.get("image", {}).get("reference")}


def _power_fields(pdir: Path, metrics: dict[str, Any], accounting: dict[str, Any],
                 expected_gpus: int | None, client_duration_s: float | None) -> dict[str, Any]:
    """Power over the client window, or `power_valid: false` with the reasons."""
    from harness.power import integrate_power

    tput = metrics.get("throughput")
    csv = pdir / "power.csv"
    if tput is None or not csv.exists():
        reason = "window_invalid" if tput is None else "telemetry_file_missing"
        return {"power_valid": False, "power_invalid_reasons": [reason]}
    reference = None if client_duration_s is None else int(client_duration_s * 1e9)
    report = integrate_power(csv, tput["window_start_ns"], tput["window_end_ns"], expected_gpus=expected_gpus,
                             reference_duration_ns=reference)
    write_json(pdir / "power_validation.json", report.validation_json())
    tokens = tput["tokens"]
    return report.result_fields(tokens["output"], tokens["input"] + tokens["output"], accounting["successful"])
