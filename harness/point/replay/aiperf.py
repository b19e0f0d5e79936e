"""The AgentX client: the exact `aiperf profile` command of a point, running it, and reading its output.

The client is `agentx-harness`, SemiAnalysis's AIPerf fork that InferenceX's AgentX runs use (it installs the
`aiperf` package and command). A point replays under the scenario its recipe names (`client.scenario`):

- `agentx` (the default): InferenceX's standalone command, and the preset supplies the rest: agentic-replay
  timing (a lane is a whole session tree), the first-turn-prefix cache bust, `ignore_eos`, streaming chat,
  trajectory starts between 25 % and 75 % of each trace, ten warm-up requests per lane, a 300 s idle cap per
  trace, seed 42, server-side token counts, a live abort above 10 % failed requests, a 95 % latency-coverage
  gate and its own timeouts.
- `inferencex-agentx-mvp`: the earlier scenario, for comparing with rows measured under it; the harness then
  passes what InferenceX's launcher passed on top of it (start ratios, server token counts, seed, timeouts).

The corpus is the pinned one (`--public-dataset ALIAS` or `--hf-weka-dataset REPO`, read offline from the staged
datasets cache) or, for smoke runs only, a local `weka_trace` directory. `--unsafe-override` is passed only for
a run marked unofficial (`harness.recipe.scenario`); AIPerf then records `submission_valid: false`.

AIPerf behaviours handled here: the harness reads the artifacts, not the exit code, to know what happened;
SIGTERM loses the summary, so it is stopped with SIGINT; requests cancelled at the duration cutoff appear in no
artifact, only in the log's `Phase ... complete | ... cancelled=N` line.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.recipe.client_plan import ClientPlan
from harness.recipe.scenario import AGENTX, AGENTX_PRESET, MVP_TIMEOUT_ENV
from harness.traces.pinned import is_pinned_spec, parse_spec
from harness.user_cache import user_cache_or
from launchers.process_group import ProcessGroup

SUMMARY_FILE = "profile_export_aiperf.json"
RECORDS_FILE = "profile_export.jsonl"
SERVER_METRICS_FILE = "server_metrics_export.json"
LOG_FILE = "logs/aiperf.log"
CHAT_ENDPOINT = "/v1/chat/completions"
_PHASE_COMPLETE = re.compile(
    r"Phase (?P<name>\S+) \((?P<kind>\w+)\) complete \| completed=(?P<completed>[\d,]+), "
    r"cancelled=(?P<cancelled>[\d,]+), errors=(?P<errors>[\d,]+)")


def aiperf_executable() -> str:
    """The `aiperf` next to this interpreter (the pinned one installed with the harness)."""
    candidate = Path(sys.executable).parent / "aiperf"
    return str(candidate) if candidate.exists() else "aiperf"


def build_argv(client: ClientPlan, url: str, artifact_dir: Path, tokenizer_name: str,
               executable: str | None = None, worker_urls: Sequence[str] = ()) -> list[str]:
    """The exact `aiperf profile` argv for one point (`client.traces`: the pinned corpus, or a local directory).

    Under `agentx` it is InferenceX's standalone AgentX command (`--scenario agentx --url --endpoint --model
    --tokenizer --concurrency --public-dataset --output-artifact-dir`, `--server-metrics`) with the point's window,
    grace and seed where they differ from the preset's; the preset supplies the rest. Under
    `inferencex-agentx-mvp` the harness passes what InferenceX's launcher passed before the preset existed.
    `worker_urls`: a deployment's workers behind the router at `url`; AIPerf scrapes each one's `/metrics` too, as
    InferenceX's multi-node AgentX runs pass every worker's (`AIPERF_SERVER_METRICS_URLS`), since the router's
    page holds no engine metric."""
    dataset = parse_spec(client.traces).aiperf_args() if is_pinned_spec(client.traces) else \
        ["--custom-dataset-type", "weka_trace", "--input-file", client.traces]
    argv = [
        executable or aiperf_executable(), "profile",
        "--scenario", client.scenario,
        "--url", url,
        "--endpoint", CHAT_ENDPOINT,
        "--model", client.served_model_name,
        "--tokenizer", tokenizer_name,
        "--concurrency", str(client.conc),
        *dataset,
        "--benchmark-duration", _num(client.duration_s),
        "--benchmark-grace-period", _num(client.grace_s),
        *scenario_flags(client),
        "--allow-dataset-wrap",
        # the server's Prometheus page (a deployment's workers' pages), scraped through the run
        "--server-metrics", *(f"{u.rstrip('/')}/metrics" for u in (url, *worker_urls)),
        "--ui", "none",
        "--output-artifact-dir", str(artifact_dir),
    ]
    if client.warmup_s > 0:
        argv += ["--agentic-cache-warmup-duration", _num(client.warmup_s)]
    if client.warmup_requests_per_lane is not None:
        argv += ["--warmup-requests-per-lane", str(client.warmup_requests_per_lane)]
    if client.burst_phase_starts:
        argv.append("--burst-phase-starts")
    if client.workers is not None:
        argv += ["--workers-max", str(client.workers)]
    if client.record_processors is not None:
        argv += ["--record-processors", str(client.record_processors)]
    if client.max_sessions is not None:
        argv += ["--num-sessions", str(client.max_sessions)]
    if client.unofficial:
        argv.append("--unsafe-override")
    return argv


def scenario_flags(client: ClientPlan) -> list[str]:
    """The flags a point needs beyond what its scenario sets itself: under `agentx` only a seed other than the
    preset's; under `inferencex-agentx-mvp` the AgentX settings that scenario leaves open."""
    if client.scenario == AGENTX:
        return [] if client.seed == AGENTX_PRESET.seed else ["--random-seed", str(client.seed)]
    return ["--endpoint-type", "chat", "--streaming",
            "--trajectory-start-min-ratio", "0.25", "--trajectory-start-max-ratio", "0.75",
            "--use-server-token-count", "--extra-inputs", "ignore_eos:true",
            "--random-seed", str(client.seed), "--no-gpu-telemetry"]


def short_tmp_dir() -> Path:
    """A fresh private temp directory with a short path.

    AIPerf puts its ZMQ IPC sockets under `$TMPDIR`, and a Unix socket path must stay under 108 bytes,
    so a deep run directory cannot serve as `TMPDIR`. The caller removes the directory after the run.
    """
    import tempfile

    base = "/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir()
    return Path(tempfile.mkdtemp(prefix="hx-", dir=base))


def build_env(cache_dir: Path, hf_home: Path, tmp_dir: Path, corpus_cache: str | None = None,
              scenario: str = AGENTX) -> dict[str, str]:
    """Environment for AIPerf: offline tokenizer and dataset resolution, caches under `cache_dir`, IPC under
    `tmp_dir`; the pinned corpus is read from the staged datasets cache `corpus_cache`. The dataset cache (keyed by
    content and settings) is the user's, as AIPerf keeps it, so a corpus is converted once, not once per run; it
    falls back to `cache_dir` where the user's cannot be written. Under
    `inferencex-agentx-mvp` the timeouts InferenceX sets (the `agentx` preset sets them itself)."""
    env = {
        "HF_HOME": str(hf_home),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "AIPERF_DATASET_MMAP_CACHE_DIR": str(user_cache_or("aiperf-dataset-mmap", cache_dir / "dataset_mmap")),
        "TMPDIR": str(tmp_dir),
        "MPLCONFIGDIR": str(cache_dir / "matplotlib"),
        # a client killed by a signal (a crash in a C extension) leaves its Python stacks in the client log
        "PYTHONFAULTHANDLER": "1",
    }
    if scenario != AGENTX:
        env.update(MVP_TIMEOUT_ENV)
    if corpus_cache is not None:
        env["HF_DATASETS_CACHE"] = corpus_cache
    return env


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def stop_grace_s(reason: str) -> float:
    """How long AIPerf gets to write its summary after SIGINT. With the server gone there is nothing
    left to drain, and a SIGINT during AIPerf's start-up can be lost, so that case is short; a stalled client
    (stopped, or hung) cannot answer it at all."""
    if reason.startswith(("server_crashed", "server_exited", "container_runtime_gone", "server_stalled",
                          "client_stalled")):
        return 10.0
    if reason == "timeout":
        return 60.0
    return 30.0


@dataclass(frozen=True)
class ClientRun:
    exit_code: int | None
    stopped: str | None          # why the harness stopped it (a reason, or "timeout"); None if it ended itself
    started_ns: int
    ended_ns: int


class AiperfProcess:
    """`aiperf profile` in its own process group; stopped with SIGINT, then SIGKILL after a grace."""

    def __init__(self, argv: list[str], env: dict[str, str], log_path: Path):
        for key in ("TMPDIR", "MPLCONFIGDIR"):
            if key in env:
                Path(env[key]).mkdir(parents=True, exist_ok=True)
        self.group = ProcessGroup(argv, {**os.environ, **env}, log_path)
        self.stopped: str | None = None

    @property
    def pid(self) -> int:
        return self.group.pid

    def interrupt(self, why: str) -> None:
        """Ask AIPerf to stop and write its summary (SIGINT to the whole group)."""
        self.stopped = self.stopped or why
        self.group.signal_group(signal.SIGINT)

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGINT to the group, SIGKILL of what is left after `grace_s` (nothing to do once it has ended)."""
        self.group.stop(grace_s, first_signal=signal.SIGINT)

    def wait(self, timeout_s: float, should_stop: Callable[[], str | None] | None = None,
             on_tick: Callable[[], None] | None = None) -> ClientRun:
        """Wait for AIPerf. At `timeout_s`, or when `should_stop()` gives a reason, send SIGINT so AIPerf
        writes its summary; SIGKILL the group if it has not exited after the grace for that reason.
        `on_tick` is called on every poll (progress reporting)."""
        deadline = time.monotonic() + timeout_s
        kill_at: float | None = None
        while self.group.exit_code() is None:
            now = time.monotonic()
            if on_tick is not None:
                on_tick()
            if kill_at is None:
                reason = should_stop() if should_stop else None
                if reason or now >= deadline:
                    self.interrupt(reason or "timeout")
                    kill_at = now + stop_grace_s(reason or "timeout")
            elif now >= kill_at:
                break
            time.sleep(0.2)
        # leftover worker processes (or AIPerf itself past its grace) are killed; the group is reaped
        code = self.group.stop(grace_s=0, first_signal=signal.SIGKILL)
        return ClientRun(exit_code=code, stopped=self.stopped, started_ns=self.group.started_ns,
                         ended_ns=time.time_ns())


def last_error(log_path: Path) -> str:
    """The last ERROR line of AIPerf's console log, for a one-line failure reason."""
    try:
        lines = log_path.read_text(errors="replace").splitlines()
    except OSError:
        return "no client log"
    errors = [ln for ln in lines if " ERROR " in ln]
    if errors:
        return errors[-1].split(" ERROR ", 1)[1].strip()[:300]
    fatal = [i for i, ln in enumerate(lines) if ln.startswith("Fatal Python error")]
    if fatal:   # faulthandler's report of a crash: its first line and the innermost frame of the crashing thread
        frame = next((ln.strip() for ln in lines[fatal[-1]:] if ln.strip().startswith("File ")), "no frame")
        return f"{lines[fatal[-1]].strip()}; innermost frame: {frame}"[:400]
    tail = [ln.strip() for ln in lines if ln.strip()][-3:]
    return ("no ERROR line in the client log; its last lines: " + " | ".join(tail))[:400] if tail else \
        "the client log is empty"


def _abort_line(log_path: Path) -> str | None:
    """AIPerf's own words when it ends a run early (e.g. `Terminal warmup failure for trace X; aborting ...`)."""
    try:
        lines = log_path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    found = [ln.split(" WARNING ", 1)[1] for ln in lines if " WARNING " in ln and "aborting" in ln]
    return found[0].split("; aborting", 1)[0].split(" (", 1)[0].strip()[:200] if found else None


_RUN_ABORTED = re.compile(r"Run aborted \((?P<kind>[^)]+)\): (?P<detail>[^.]+)")


def _abort_detail(log_path: Path) -> str | None:
    """The client's explanation of an early abort (`Run aborted (warmup_failure): A root AgentX warmup request
    failed, so profiling was not started`), which says more than the errors its teardown logs after it."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return None
    m = _RUN_ABORTED.search(text)
    return f"{m.group('detail').strip()} ({m.group('kind')})"[:300] if m else None


def _error_label(error: dict[str, Any]) -> str:
    code = error.get("code")
    return f"HTTP {code}" if isinstance(code, int) else str(error.get("type") or "no response")


def _error_message(error: dict[str, Any]) -> str:
    """The server's own message: the `message` of an OpenAI-style error body when AIPerf kept the body."""
    text = str(error.get("message") or "")
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        inner = body["error"] if isinstance(body.get("error"), dict) else body
        text = str(inner.get("message") or text)
    return " ".join(text.split())[:120]


def request_errors(records: list[dict[str, Any]]) -> str | None:
    """The failed requests among AIPerf's records, every phase: count, status codes and the first message,
    e.g. `1 of 2 requests failed, in warmup (HTTP 500: 1; first: "injected server error")`."""
    failed = [r for r in records if isinstance(r.get("error"), dict)]
    if not failed:
        return None
    labels: dict[str, int] = {}
    phases: dict[str, int] = {}
    for r in failed:
        label = _error_label(r["error"])
        labels[label] = labels.get(label, 0) + 1
        phase = str((r.get("metadata") or {}).get("benchmark_phase") or "unknown phase")
        phases[phase] = phases.get(phase, 0) + 1
    tally = ", ".join(f"{k}: {v}" for k, v in sorted(labels.items(), key=lambda kv: (-kv[1], kv[0])))
    first = _error_message(failed[0]["error"])
    return (f"{len(failed)} of {len(records)} requests failed, in {', '.join(sorted(phases))} "
            f"({tally}{f'; first: {first!r}' if first else ''})")


def failure_reason(exit_code: int | None, artifact_dir: Path, log_path: Path) -> str:
    """Why AIPerf ended without a summary, in one line. When the server answered requests with errors, the
    reason is `server_errors` and names how many and with which status codes (AIPerf itself only says
    `No profile results to export`); otherwise `client_failed` with the client's own explanation of its abort, or
    else its last error."""
    errors = request_errors(read_records(artifact_dir))
    abort = _abort_line(log_path)
    tail = (f"AIPerf {'stopped early (' + abort + ') and ' if abort else ''}{_exit_words(exit_code)} without a summary: "
            f"{_abort_detail(log_path) or last_error(log_path)}")
    if errors is None:
        return f"client_failed: {tail}"
    code = "server_errors" if "HTTP " in errors else "client_failed"
    return f"{code}: {errors}; {tail}"


def _exit_words(exit_code: int | None) -> str:
    """`exited 1`, or `was killed by SIGSEGV` for a signal (a negative code, or a shell's 128 + N)."""
    import signal

    number = -exit_code if exit_code is not None and exit_code < 0 else \
        exit_code - 128 if exit_code is not None and 128 < exit_code < 160 else None
    if number is not None:
        try:
            return f"was killed by {signal.Signals(number).name} (exit {exit_code})"
        except ValueError:
            pass
    return f"exited {exit_code}"


_PHASE_STARTED = re.compile(r"Phase \S+ \((?P<kind>\w+)\) started")
_PHASE_ENDED = re.compile(r"Phase \S+ \((?P<kind>\w+)\) complete")   # not "sending complete": every request back


class NewLines:
    """The complete lines appended to a file since the last call (a file being written by AIPerf)."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0

    def read(self) -> list[bytes]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read()
        except FileNotFoundError:
            return []
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        return complete.splitlines()


class PhaseWatcher:
    """Follows AIPerf's log and reports the kind of the phase that started last (`warmup`, `profiling`); `ended`
    holds the kinds of the phases whose every request has come back."""

    def __init__(self, artifact_dir: Path):
        self.lines = NewLines(artifact_dir / LOG_FILE)
        self.kind: str | None = None
        self.ended: set[str] = set()

    def update(self) -> str | None:
        for line in self.lines.read():
            text = line.decode(errors="replace")
            m = _PHASE_STARTED.search(text)
            if m:
                self.kind = m.group("kind")
            m = _PHASE_ENDED.search(text)
            if m:
                self.ended.add(m.group("kind"))
        return self.kind


class RecordCounter:
    """Counts the per-request records AIPerf has written so far, reading only what is new each time."""

    def __init__(self, artifact_dir: Path):
        self.lines = NewLines(artifact_dir / RECORDS_FILE)
        self.records = 0
        self.errors = 0

    def update(self) -> int:
        for line in self.lines.read():
            self.records += 1
            self.errors += b'"error":{' in line or b'"error": {' in line
        return self.records


def read_summary(artifact_dir: Path) -> dict[str, Any] | None:
    path = artifact_dir / SUMMARY_FILE
    if not path.exists():
        return None
    with open(path) as fh:
        summary: dict[str, Any] = json.load(fh)
    return summary


def read_server_metrics(artifact_dir: Path) -> dict[str, Any] | None:
    """AIPerf's `server_metrics_export.json` (the server's /metrics over the run); None when absent or unreadable."""
    path = artifact_dir / SERVER_METRICS_FILE
    try:
        with open(path) as fh:
            export = json.load(fh)
    except (OSError, ValueError):
        return None
    return export if isinstance(export, dict) else None


def has_sglang_series(export: dict[str, Any]) -> bool:
    """Whether AIPerf's server-metrics export holds an SGLang series (a `sglang:` name), as InferenceX requires."""
    metrics = export.get("metrics")
    return isinstance(metrics, dict) and any(str(name).startswith("sglang:") for name in metrics)


def read_records(artifact_dir: Path) -> list[dict[str, Any]]:
    """Per-request records; a truncated last line (killed client) is skipped."""
    path = artifact_dir / RECORDS_FILE
    if not path.exists():
        return []
    records = []
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records


def phase_counts(log_text: str, kind: str = "profiling") -> dict[str, int] | None:
    """The `completed/cancelled/errors` counts AIPerf logs when a phase of `kind` completes."""
    found = None
    for m in _PHASE_COMPLETE.finditer(log_text):
        if m.group("kind") == kind:
            found = {k: int(m.group(k).replace(",", "")) for k in ("completed", "cancelled", "errors")}
    return found


def read_phase_counts(artifact_dir: Path) -> dict[str, int] | None:
    path = artifact_dir / LOG_FILE
    if not path.exists():
        return None
    return phase_counts(path.read_text(errors="replace"))
