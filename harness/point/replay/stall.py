"""Is the server still making progress while the client (AIPerf for a point, lm-eval for an eval) runs? A
stalled server (streams open, nothing produced) ends the run within a bound with `server_stalled`, instead of
at the client's timeout.

Progress is a new client record (an AIPerf record, an lm-eval answer) or any change of the server's progress counters on `/metrics`
(`PROGRESS_METRICS`: SGLang counts prompt and generated tokens when a request finishes, but re-reads its KV
usage every few decode steps and on every prefill batch, and newer versions count `realtime_tokens_total` on
every decode step, so a long generation still moves them). The server is stalled when:

- it reports requests in flight (`sglang:num_running_reqs` + `sglang:num_queue_reqs` > 0) and nothing has
  progressed for `bound_s` (an idle server is not stalled: the clock restarts while nothing is in flight), or
- `/health` answers 503 on two probes in a row with no progress in between. SGLang's `/health` runs a
  one-token generation and answers 503 when no output arrived within its own check (20 s), or while it
  shuts down. It is probed only while the counters stand still, so a busy server is never probed, or
- it answers neither `/metrics` nor `/health` for `bound_s`, whether or not requests are in flight (a frozen
  or hung process between two requests owes no tokens, but it does owe an answer).

Without those metrics (a server started without `--enable-metrics`) only `/health` is watched: AIPerf's
records alone cannot tell a long generation from a stall. The server is sampled by a background thread,
so a slow `/health` never delays the runner's loop.
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from harness.point.servers.server_metrics import scrape

PROGRESS_METRICS = ("sglang:generation_tokens_total", "sglang:prompt_tokens_total", "sglang:num_requests_total",
                    "sglang:num_used_tokens", "sglang:realtime_tokens_total")
IN_FLIGHT_METRICS = ("sglang:num_running_reqs", "sglang:num_queue_reqs")
HEALTH_TIMEOUT_S = 30.0       # SGLang answers 503 after its own 20 s health check
HEALTH_503_IN_A_ROW = 2


def default_stall_timeout_s(duration_s: float) -> float:
    """A tenth of the profiling window, at least 60 s (well past SGLang's metric refresh, a long prefill and
    AgentX's 10 s idle-gap cap), at most 300 s."""
    return min(300.0, max(60.0, duration_s / 10))


@dataclass(frozen=True)
class ServerSample:
    """One look at the server: its progress counters and in-flight requests (None: not exported), and the
    status `/health` answered (None: not probed, or no answer)."""

    progress: tuple[float, ...] | None
    in_flight: float | None
    health: int | None = None

    @property
    def answered(self) -> bool:
        return self.progress is not None or self.health is not None


class StallJudge:
    """The pure decision, fed with what was seen and when (monotonic seconds). `record` names what the
    client counts as done (an AIPerf record, an lm-eval answer)."""

    def __init__(self, bound_s: float, now: float, record: str = "AIPerf record"):
        self.bound_s = bound_s
        self.record = record
        self.last_progress = now
        self.last_answer = now
        self.unanswered = False      # the latest look at the server got no answer
        self.records = 0
        self.progress: tuple[float, ...] | None = None
        self.in_flight: float | None = None
        self.health_503 = 0

    def _moved(self, now: float) -> None:
        self.last_progress = now
        self.health_503 = 0

    def saw_records(self, count: int, now: float) -> None:
        if count != self.records:
            self.records = count
            self._moved(now)

    def saw_server(self, sample: ServerSample, now: float) -> None:
        self.unanswered = not sample.answered
        if sample.answered:
            self.last_answer = now
        if sample.progress is not None:     # a scrape that got no answer keeps what was seen last
            if self.progress is not None and sample.progress != self.progress:
                self._moved(now)
            self.progress, self.in_flight = sample.progress, sample.in_flight
            if self.in_flight is not None and self.in_flight <= 0:
                self.last_progress = now    # idle: nothing is owed
        if sample.health == 503:
            self.health_503 += 1
        elif sample.health is not None:
            self.health_503 = 0

    def stalled_reason(self, now: float) -> str | None:
        silent, mute = now - self.last_progress, now - self.last_answer
        if self.unanswered and mute >= self.bound_s:
            return (f"server_stalled: the server answered neither /metrics nor /health for {mute:.0f} s "
                    f"(bound {self.bound_s:g} s) ({self._seen()})")
        if self.health_503 >= HEALTH_503_IN_A_ROW:
            return (f"server_stalled: /health answered 503 {self.health_503} times in a row, no progress for "
                    f"{silent:.0f} s ({self._seen()})")
        if self.in_flight is not None and self.in_flight > 0 and silent >= self.bound_s:
            return (f"server_stalled: no new {self.record} and no token progress on /metrics for {silent:.0f} s "
                    f"(bound {self.bound_s:g} s) with {self.in_flight:.0f} requests in flight ({self._seen()})")
        return None

    def _seen(self) -> str:
        tokens = "unknown" if self.progress is None else f"{self.progress[0]:.0f}"
        return f"{self.records} {self.record}s, sglang:generation_tokens_total {tokens}"


def server_sample(counters: dict[str, float] | None) -> ServerSample:
    """The progress counters and in-flight requests in a `/metrics` scrape."""
    if counters is None or PROGRESS_METRICS[0] not in counters:
        return ServerSample(None, None)
    progress = tuple(counters.get(name, 0.0) for name in PROGRESS_METRICS)
    known = [counters[name] for name in IN_FLIGHT_METRICS if name in counters]
    return ServerSample(progress, sum(known) if known else None)


def health_status(base_url: str, timeout_s: float = HEALTH_TIMEOUT_S) -> int | None:
    """The HTTP status `/health` answers, or None when it does not answer."""
    try:
        with urllib.request.urlopen(f"{base_url}/health", timeout=timeout_s) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (OSError, ValueError):
        return None


class StallWatch:
    """The judge fed by a thread that samples the server every `poll_s` and by the runner's loop (`check`),
    which counts the client's finished requests (`count`: AIPerf's records, lm-eval's answers). `check`
    returns the stall reason once there is one (and keeps it)."""

    def __init__(self, base_url: str, bound_s: float, count: Callable[[], int], record: str = "AIPerf record"):
        self.base_url = base_url
        self.bound_s = bound_s
        self.poll_s = max(0.5, min(2.0, bound_s / 5))
        self.count = count
        self.judge = StallJudge(bound_s, time.monotonic(), record)
        self.reason: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample_server, name="stall-watch", daemon=True)

    def __enter__(self) -> StallWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)

    def _sample_server(self) -> None:
        previous: tuple[float, ...] | None = None
        while not self._stop.wait(self.poll_s):
            sample = server_sample(scrape(self.base_url, timeout=max(1.0, self.poll_s)))
            if sample.progress is None or sample.progress == previous:
                sample = ServerSample(sample.progress, sample.in_flight, health_status(self.base_url))
            previous = sample.progress
            with self._lock:
                self.judge.saw_server(sample, time.monotonic())

    def check(self) -> str | None:
        if self.reason is None:
            count = self.count()
            with self._lock:
                now = time.monotonic()
                self.judge.saw_records(count, now)
                self.reason = self.judge.stalled_reason(now)
        return self.reason


def armed_line(stall_s: float) -> str:
    """The line that says the watch is on, worded as a condition (it is not a failure)."""
    return (f"[watch] stall watch armed: stops the run as server_stalled only if requests in flight make no "
            f"progress for {stall_s:g} s, /health answers 503 twice in a row, or the server answers neither "
            f"/metrics nor /health for {stall_s:g} s")
