"""The simulator held to real SGLang's surface: the tiny recipe's server command (with `--api-key`) is served by the
simulator and by real SGLang 0.5.23, and what a client or the harness can observe is compared: the lifecycle
(`/health` from launch to ready: port closed, 503 while warming up, 200), endpoint status codes with and without the key, the `/server_info` and
`/model_info` keys the harness reads, chat response and stream chunk shapes, `/metrics` names and labels, the 401
body. Every difference is either fixed in the simulator or listed in `ALLOWED` with its reason (docs/simulator.md's
real-SGLang section carries the same list); an entry that no longer differs fails too, so the list stays true."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.point.servers.port_owner import free_port
from tests.sglang.conftest import RECIPE, ROOT, Tier

KEY = "sk-differential-0123456789"
ENDPOINTS = ("/health", "/health_generate", "/ready", "/metrics", "/v1/models", "/model_info", "/get_model_info",
             "/server_info", "/get_server_info")
# /server_info keys the harness reads (fingerprint, readiness, fingerprint diff, result fields)
SERVER_INFO_KEYS = ("version", "weight_version", "model_path", "served_model_name", "tp_size", "max_running_requests",
                    "chunked_prefill_size", "max_total_tokens", "context_length", "stream_interval", "random_seed",
                    "internal_states")
INTERNAL_STATE_KEYS = ("effective_max_running_requests_per_dp", "last_gen_throughput")
MODEL_INFO_KEYS = ("model_path", "tokenizer_path", "is_generation")
# /metrics names the harness reads (server metrics, stall watch, accept length, InferenceX server metrics)
METRICS = ("sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:prompt_tokens_total",
           "sglang:generation_tokens_total", "sglang:num_requests_total", "sglang:cached_tokens_total",
           "sglang:max_total_num_tokens", "sglang:token_usage", "sglang:num_used_tokens", "sglang:cache_hit_rate",
           "sglang:gen_throughput", "sglang:realtime_tokens_total")

# Differences between the simulator and real SGLang that stay, each with its reason.
ALLOWED: dict[str, str] = {
    "metrics labels: sglang:prompt_tokens_total: sim=engine_type,model_name,moe_ep_rank,pp_rank,tp_rank, "
    "real=engine_type,is_streaming,model_name":
        "the simulator labels every counter like SGLang's scheduler collectors; the harness sums over label sets",
}


def server_argv() -> list[str]:
    """The tiny recipe's c2 server argv after `python3 -m sglang.launch_server`, with an API key."""
    from harness.recipe.points import load_plans
    from harness.recipe.server_flags.secret_args import joined

    _, plans = load_plans(RECIPE, None, [f"args.api-key={KEY}"])
    argv = plans[0].server.argv[3:]
    return joined(argv[: argv.index("--port")], plans[0].server.secret_args)   # the key, as the launch joins it


class Server:
    """One server process on a free port, its own process group, log in `log`."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.first_health: list[int] = []   # statuses /health gave before it turned 200 (0: port closed)
        with open(log, "w") as fh:
            self.proc = subprocess.Popen([*argv, "--port", str(self.port)], cwd=ROOT, env=env, stdout=fh,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, within_s: float) -> None:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"server exited {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            code = status(self.base, "/health")
            if not self.first_health or self.first_health[-1] != code:
                self.first_health.append(code)
            if code == 200:
                return
            time.sleep(0.25)
        pytest.fail(f"server not ready in {within_s} s: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _request(base: str, path: str, key: str | None = None, body: dict[str, Any] | None = None
             ) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as resp:
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


def status(base: str, path: str, key: str | None = None) -> int:
    return _request(base, path, key)[0]


def _shape(value: Any) -> Any:
    """Keys (recursively) and value types: what a client's parser depends on."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__ if value is not None else "null"


def _chat(base: str, stream: bool) -> Any:
    body = {"model": "tiny-llama", "messages": [{"role": "user", "content": "hello there"}], "max_tokens": 4,
            "stream": stream, "ignore_eos": True, **({"stream_options": {"include_usage": True}} if stream else {})}
    code, raw = _request(base, "/v1/chat/completions", KEY, body)
    assert code == 200, raw[:300]
    if not stream:
        return json.loads(raw)
    events = [block[len("data: "):] for block in raw.decode().split("\n\n") if block.startswith("data: ")]
    assert events[-1] == "[DONE]"
    return [json.loads(e) for e in events[:-1]]


def _metric_labels(text: str) -> dict[str, str]:
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        m = re.match(r"^(sglang:[a-z_]+)(?:\{([^}]*)\})? ", line)
        if m:
            labels = {kv.split("=", 1)[0] for kv in re.findall(r'[a-z_]+="[^"]*"', m.group(2) or "")}
            out.setdefault(m.group(1), set()).update(labels)
    return {k: ",".join(sorted(v)) for k, v in out.items()}


def observe(server: Server) -> dict[str, Any]:
    """What a client or the harness can observe of one ready server."""
    first, second = _chat(server.base, False), _chat(server.base, True)
    obs: dict[str, Any] = {
        "lifecycle: /health from launch to ready": " -> ".join("closed" if c == 0 else str(c)
                                                              for c in server.first_health),
        "status without key": {p: status(server.base, p) for p in ENDPOINTS},
        "status with key": {p: status(server.base, p, KEY) for p in ENDPOINTS},
        "status with a wrong key": {p: status(server.base, p, "wrong") for p in ("/server_info", "/v1/models")},
        "401 body": json.loads(_request(server.base, "/server_info")[1] or b"null"),
        "chat response shape": _shape({k: v for k, v in first.items() if k not in ("sglext",)}),
        "chat metadata.weight_version": type((first.get("metadata") or {}).get("weight_version")).__name__,
        "stream first chunk shape": _shape(second[0]),
        "stream content chunk shape": _shape(second[1]),
        "stream finish chunk shape": _shape(second[-2]),
        "stream finish_reason": second[-2]["choices"][0]["finish_reason"],
        "stream usage chunk shape": _shape(second[-1]),
        "stream usage chunk has no choices": second[-1].get("choices") == [],
    }
    info = json.loads(_request(server.base, "/server_info", KEY)[1])
    obs["server_info keys"] = sorted(k for k in SERVER_INFO_KEYS if k in info)
    states = info.get("internal_states") or [{}]
    obs["internal_states keys"] = sorted(k for k in INTERNAL_STATE_KEYS if k in states[0])
    model_info = json.loads(_request(server.base, "/model_info", KEY)[1])
    obs["model_info keys"] = sorted(k for k in MODEL_INFO_KEYS if k in model_info)
    from harness.point.replay.stall import server_sample
    from harness.point.servers.server_metrics import scrape

    sample = server_sample(scrape(server.base))   # what the stall watch reads, after the requests above
    obs["stall watch sees"] = {"progress": sample.progress is not None and sample.progress[0] > 0,
                               "in_flight": sample.in_flight is not None}
    labels = _metric_labels(_request(server.base, "/metrics")[1].decode())
    obs["metrics present"] = sorted(m for m in METRICS if m in labels)
    obs["metrics labels"] = {m: labels.get(m) for m in ("sglang:prompt_tokens_total", "sglang:num_running_reqs")}
    return obs


def differences(sim: dict[str, Any], real: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for what in sorted(real):
        if isinstance(real[what], dict) and isinstance(sim.get(what), dict) and what != "chat response shape" \
                and not what.startswith("stream"):
            for key in sorted(set(real[what]) | set(sim[what])):
                if sim[what].get(key) != real[what].get(key):
                    out.append(f"{what}: {key}: sim={sim[what].get(key)}, real={real[what].get(key)}")
        elif sim.get(what) != real[what]:
            out.append(f"{what}: sim={sim.get(what)}, real={real[what]}")
    return out


@pytest.fixture(scope="module")
def both(sglang_tier: Tier, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any],
                                                                                     dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("differential")
    argv = server_argv()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_SIMULATE")}
    real = Server([str(sglang_tier.python), "-m", "sglang.launch_server", *argv],
                  {**env, "SGLANG_USE_CPU_ENGINE": "1", "PYTHONUNBUFFERED": "1"}, tmp / "real.log")
    # the simulator simulates the same tiny model, so the same flags size its pool as they size real SGLang's
    sim = Server([sys.executable, "-m", "harness.sim", *argv, "--sim-profile", "tiny-llama-cpu",
                  "--sim-startup-seconds", "2"], env, tmp / "sim.log")
    try:
        sim.wait_ready(60)
        real.wait_ready(600)
        yield observe(sim), observe(real)
    finally:
        sim.stop()
        real.stop()


def test_every_difference_is_fixed_or_allowed(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    sim, real = both
    found = differences(sim, real)
    unexplained = [d for d in found if d not in ALLOWED]
    assert unexplained == [], "\n".join(unexplained)
    stale = [d for d in ALLOWED if d not in found]
    assert stale == [], f"allow-list entries that no longer differ: {stale}"


def test_the_surface_the_harness_relies_on_is_real(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, real = both
    assert real["status without key"]["/health"] == 200 and real["status without key"]["/metrics"] == 200
    assert real["status without key"]["/server_info"] == 401 and real["status with key"]["/server_info"] == 200
    assert real["lifecycle: /health from launch to ready"] == "closed -> 503 -> 200"   # port closed, warm-up 503
    assert real["stall watch sees"] == {"progress": True, "in_flight": True}   # real counters drive the stall watch
    assert set(METRICS) <= set(real["metrics present"]) | {"sglang:realtime_tokens_total", "sglang:cache_hit_rate"}
