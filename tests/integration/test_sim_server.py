"""The simulator as a real process over real sockets: SGLang's HTTP surface, truth log, faults."""

from __future__ import annotations

import asyncio
import http.client
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

import aiohttp
import pytest

from harness.point.servers.port_owner import free_port
from harness.sim.batching.prompt import count_tokens, render_chat

# Metric names SGLang exposes (the sglang:* collectors of 0.5.23, sglang/srt/observability/metrics_collector.py).
SGLANG_METRIC_NAMES = {
    "sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:num_grammar_queue_reqs",
    "sglang:num_retracted_reqs", "sglang:num_retracted_requests_total", "sglang:num_retracted_input_tokens_total",
    "sglang:num_paused_reqs", "sglang:utilization", "sglang:gen_throughput",
    "sglang:prompt_tokens_total", "sglang:generation_tokens_total", "sglang:num_requests_total",
    "sglang:num_aborted_requests_total", "sglang:realtime_tokens_total", "sglang:token_usage",
    "sglang:full_token_usage", "sglang:swa_token_usage", "sglang:num_used_tokens", "sglang:kv_available_tokens",
    "sglang:kv_evictable_tokens", "sglang:kv_used_tokens", "sglang:max_total_num_tokens",
    "sglang:kv_cache_memory_usage_gb", "sglang:graph_memory_usage_gb", "sglang:weight_memory_usage_gb",
    "sglang:context_len", "sglang:page_size", "sglang:cache_hit_rate", "sglang:cached_tokens_total",
    "sglang:hicache_host_used_tokens", "sglang:hicache_host_total_tokens", "sglang:evicted_tokens_total",
    "sglang:load_back_tokens_total", "sglang:load_back_duration_seconds", "sglang:hicache_backup_tokens_total",
    "sglang:hicache_backup_duration_seconds", "sglang:prefetched_tokens_total", "sglang:backuped_tokens_total",
    "sglang:spec_accept_length", "sglang:spec_accept_rate", "sglang:spec_num_steps",
    "sglang:spec_num_draft_tokens", "sglang:spec_verify_calls_total", "sglang:time_to_first_token_seconds",
    "sglang:inter_token_latency_seconds", "sglang:request_time_per_output_token_seconds",
    "sglang:e2e_request_latency_seconds", "sglang:queue_time_seconds", "sglang:per_stage_req_latency_seconds",
}


class Sim:
    def __init__(self, args: list[str], env: dict[str, str] | None = None, module: str = "harness.sim"):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", module] + (["sim"] if module == "harness" else [])
        cmd += ["--model-path", "m", "--served-model-name", "sim-model", "--port", str(self.port), *args]
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_SIMULATE")}
        full_env.update(env or {})
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=full_env, start_new_session=True)

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.base + path, timeout=5) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def wait_health(self, timeout: float = 15.0) -> list[int]:
        seen: list[int] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"simulator exited {self.proc.returncode}: {self.proc.stderr.read()}")  # type: ignore[union-attr]
            try:
                code, _ = self.get("/health")
                seen.append(code)
                if code == 200:
                    return seen
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.05)
        raise TimeoutError("simulator not healthy")

    def post(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        req = urllib.request.Request(self.base + "/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def sse_events(raw: bytes) -> list[Any]:
    out: list[Any] = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        assert block.startswith("data: "), block
        payload = block[len("data: "):]
        out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


MSGS = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Count to a hundred, please."}]
PROMPT_TOKENS = count_tokens(render_chat(MSGS))


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sim, Path]]:
    truth = tmp_path_factory.mktemp("sim") / "truth.jsonl"
    s = Sim(["--stream-interval", "4", "--enable-metrics", "--enable-cache-report", "--sim-startup-seconds", "0.4",
             "--sim-truth-log", str(truth), "--enable-hierarchical-cache", "--hicache-write-policy", "write_back"])
    try:
        codes = s.wait_health()
        assert codes[0] == 503 or len(codes) == 1
        yield s, truth
    finally:
        s.stop()


def test_health_models_ready_and_server_info(sim: tuple[Sim, Path]) -> None:
    s, _ = sim
    assert s.get("/health")[0] == 200 and s.get("/health_generate")[0] == 200 and s.get("/ready")[0] == 200
    models = json.loads(s.get("/v1/models")[1])
    assert models["data"][0]["id"] == "sim-model" == models["data"][0]["root"]
    info = json.loads(s.get("/server_info")[1])
    assert info["served_model_name"] == "sim-model" and info["stream_interval"] == 4
    assert info["hicache_write_policy"] == "write_back" and info["simulator"]["calibrated"] is False
    assert json.loads(s.get("/get_server_info")[1])["port"] == s.port


def test_streaming_format_and_exact_token_accounting(sim: tuple[Sim, Path]) -> None:
    s, truth = sim
    body = {"model": "sim-model", "messages": MSGS, "max_tokens": 37, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True}}
    code, raw = s.post(body, {"X-Request-ID": "req-exact-1"})
    assert code == 200
    ev = sse_events(raw)
    assert ev[-1] == "[DONE]"
    assert ev[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "reasoning_content": None}
    assert all("usage" not in e for e in ev[:-2])   # SGLang 0.5.23's chunks carry no usage key
    content = [e["choices"][0]["delta"]["content"] for e in ev[1:-3]]
    assert [len(c.split()) for c in content] == [1, 4, 4, 4, 4, 4, 4, 4, 4, 4]
    assert ev[-3]["choices"][0]["finish_reason"] == "length"
    assert ev[-3]["choices"][0]["delta"] == {"reasoning_content": None}
    usage = ev[-2]["usage"]
    assert ev[-2]["choices"] == []
    assert usage["prompt_tokens"] == PROMPT_TOKENS and usage["completion_tokens"] == 37
    assert usage["total_tokens"] == PROMPT_TOKENS + 37 and "cached_tokens" in usage["prompt_tokens_details"]
    assert all(e["id"] == "req-exact-1" and e["model"] == "sim-model" for e in ev[:-1])
    rec = next(json.loads(line) for line in truth.read_text().splitlines() if "req-exact-1" in line)
    assert rec["status"] == "ok" and rec["completion_tokens"] == 37 and rec["prompt_tokens"] == PROMPT_TOKENS
    assert rec["arrival_ns"] <= rec["admitted_ns"] <= rec["first_token_sent_ns"] <= rec["last_token_sent_ns"]


def test_non_streaming_and_max_completion_tokens(sim: tuple[Sim, Path]) -> None:
    s, _ = sim
    code, raw = s.post({"messages": MSGS, "max_completion_tokens": 12, "ignore_eos": True})
    body = json.loads(raw)
    assert code == 200 and body["object"] == "chat.completion"
    assert body["metadata"] == {"weight_version": "default",
                                "weight_versions": [{"version": "default", "start": 0, "end": 12}]}
    assert body["usage"]["reasoning_tokens"] == 0 and "tool_calls" not in body["choices"][0]["message"]
    assert body["usage"]["completion_tokens"] == 12 and len(body["choices"][0]["message"]["content"].split()) == 12
    # without ignore_eos the model stops on its own, deterministically
    a = json.loads(s.post({"messages": MSGS, "max_tokens": 4000})[1])
    b = json.loads(s.post({"messages": MSGS, "max_tokens": 4000})[1])
    assert a["usage"]["completion_tokens"] == b["usage"]["completion_tokens"] < 4000
    assert a["choices"][0]["finish_reason"] == "stop"
    assert s.post({"messages": []})[0] == 400


def test_prefix_cache_reported_across_turns(sim: tuple[Sim, Path]) -> None:
    s, _ = sim
    history = [{"role": "system", "content": "agent instructions " * 200}]
    cached = []
    for turn in range(3):
        history.append({"role": "user", "content": f"turn {turn} " + "tool output " * 150})
        raw = s.post({"messages": history, "max_tokens": 4, "ignore_eos": True})[1]
        cached.append(json.loads(raw)["usage"]["prompt_tokens_details"]["cached_tokens"])
        history.append({"role": "assistant", "content": "ok"})
    assert cached[0] == 0 and cached[0] < cached[1] < cached[2]


def test_metric_names_are_sglangs(sim: tuple[Sim, Path]) -> None:
    s, _ = sim
    code, raw = s.get("/metrics")
    assert code == 200
    samples = {line.split("{")[0] for line in raw.decode().splitlines() if line and not line.startswith("#")}
    names = {re.sub(r"_(bucket|sum|count)$", "", n) if "_seconds_" in n else n for n in samples}
    assert names <= SGLANG_METRIC_NAMES, names - SGLANG_METRIC_NAMES
    for must in ("sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "sglang:cache_hit_rate",
                 "sglang:gen_throughput", "sglang:prompt_tokens_total", "sglang:generation_tokens_total",
                 "sglang:cached_tokens_total", "sglang:time_to_first_token_seconds",
                 "sglang:inter_token_latency_seconds", "sglang:e2e_request_latency_seconds",
                 "sglang:hicache_host_used_tokens"):
        assert must in names
    text = raw.decode()
    assert 'cache_source="host"' in text and 'model_name="sim-model"' in text
    # prometheus_client's parser (AIPerf's) reads the counters as SGLang's prometheus_client serves them
    from prometheus_client.parser import text_string_to_metric_families

    kinds = {f.name: f.type for f in text_string_to_metric_families(text)}
    for name in ("sglang:prompt_tokens", "sglang:generation_tokens", "sglang:cached_tokens",
                 "sglang:realtime_tokens", "sglang:num_requests"):
        assert kinds[name] == "counter", name
    assert "# TYPE sglang:prompt_tokens_total counter" in text


def test_flush_cache_when_idle(sim: tuple[Sim, Path]) -> None:
    s, _ = sim
    assert s.get("/flush_cache")[0] == 200


def test_64_concurrent_streams_and_client_disconnect(sim: tuple[Sim, Path]) -> None:
    s, truth = sim

    async def one(session: aiohttp.ClientSession, i: int) -> int:
        body = {"messages": [{"role": "user", "content": f"stream {i} " * 20}], "max_tokens": 50,
                "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
        async with session.post(s.base + "/v1/chat/completions", json=body) as r:
            raw = await r.read()
        ev = sse_events(raw)
        return int(ev[-2]["usage"]["completion_tokens"])

    async def disconnect(session: aiohttp.ClientSession) -> None:
        body = {"messages": [{"role": "user", "content": "long one"}], "max_tokens": 100_000, "ignore_eos": True,
                "stream": True}
        async with session.post(s.base + "/v1/chat/completions", json=body,
                                headers={"X-Request-ID": "gone-away"}) as r:
            n = 0
            async for _ in r.content:
                n += 1
                if n > 6:
                    break

    async def main() -> list[int]:
        async with aiohttp.ClientSession() as session:
            counts = await asyncio.gather(*(one(session, i) for i in range(64)))
            await disconnect(session)
        return list(counts)

    assert asyncio.run(main()) == [50] * 64
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "gone-away" not in truth.read_text():
        time.sleep(0.05)
    rec = next(json.loads(line) for line in truth.read_text().splitlines() if "gone-away" in line)
    assert rec["status"] == "client_disconnected" and 0 < rec["completion_tokens"] < 100_000
    running = [ln for ln in s.get("/metrics")[1].decode().splitlines() if ln.startswith("sglang:num_running_reqs{")]
    assert running[0].endswith(" 0.0")


def test_recipe_argv_starts_unchanged_with_dflash_and_reports_accept_length() -> None:
    from tests.unit.test_sim_flags import RECIPE_ARGV

    argv = list(RECIPE_ARGV)
    argv[argv.index("--host") + 1] = "127.0.0.1"
    i = argv.index("--port")
    del argv[i : i + 2]
    i = argv.index("--model-path")
    del argv[i : i + 4]  # Sim passes its own model path and name
    env = {"SGLANG_SIMULATE_ACC_LEN": "4.05", "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
           "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token"}
    s = Sim([*argv, "--sim-startup-seconds", "0", "--max-running-requests", "8"], env)
    try:
        s.wait_health()
        for _ in range(4):
            assert s.post({"messages": MSGS, "max_tokens": 800, "ignore_eos": True})[0] == 200
        info = json.loads(s.get("/server_info")[1])
        state = info["internal_states"][0]
        assert info["speculative_algorithm"] == "DFLASH" and info["speculative_num_draft_tokens"] == 8
        assert abs(state["avg_spec_accept_length"] - 4.05) < 0.15
    finally:
        s.stop()


@pytest.mark.parametrize(
    ("env", "message", "algo"),
    [
        ({"SGLANG_SIMULATE_ACC_LEN": "3", "SGLANG_SIMULATE_ACC_METHOD": "bogus"},
         "ValueError: Invalid simulate_acc_method: bogus", ["--speculative-algorithm", "EAGLE"]),
        ({"SGLANG_SIMULATE_ACC_LEN": "3", "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real"},
         "ValueError: Invalid SGLANG_SIMULATE_ACC_TOKEN_MODE 'real'; expected 'fixed' or 'real-draft-token'.",
         ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "org/draft"]),
    ],
)
def test_bad_simulate_env_crashes_like_sglang(env: dict[str, str], message: str, algo: list[str]) -> None:
    s = Sim([*algo, "--sim-startup-seconds", "0"], env)
    try:
        rc = s.proc.wait(timeout=15)
        assert rc != 0
        assert message in s.proc.stderr.read()  # type: ignore[union-attr]
    finally:
        s.stop()


def test_server_info_never_echoes_an_api_key() -> None:
    """SGLang echoes its ServerArgs (api_key included) at /get_server_info; the simulator does not."""
    s = Sim(["--sim-startup-seconds", "0", "--api-key", "sk-sim-http-planted", "--admin-api-key=sk-sim-http-admin"],
            env={"SGLANG_EXPOSE_OWN_ENV_VARS": "1", "SGLANG_HF_TOKEN": "hf_sim_env_planted", "SGLANG_MAX_TOKENS": "9"})
    try:
        s.wait_health()
        for path in ("/server_info", "/get_server_info"):
            assert s.get(path)[0] == 401   # the key is checked as SGLang checks it
            request = urllib.request.Request(s.base + path, headers={"Authorization": "Bearer sk-sim-http-planted"})
            with urllib.request.urlopen(request, timeout=5) as r:
                code, body = r.status, r.read()
            assert code == 200 and b"planted" not in body and b"sk-sim-http-admin" not in body
            info = json.loads(body)
            assert info["api_key"] == "<redacted>" and "--api-key <redacted>" in info["launch_command"]
            assert info["internal_states"][0]["env_vars"]["SGLANG_MAX_TOKENS"] == "9"
    finally:
        s.stop()


def test_metrics_disabled_without_flag_and_subcommand_entry_point() -> None:
    s = Sim(["--sim-startup-seconds", "0"], module="harness")
    try:
        s.wait_health()
        assert s.get("/metrics")[0] == 404
    finally:
        s.stop()
    assert s.proc.returncode == 0


def test_faults_error_rate_and_crash() -> None:
    s = Sim(["--sim-startup-seconds", "0", "--sim-error-rate", "1", "--sim-crash-after", "0.5"])
    try:
        s.wait_health()
        assert s.post({"messages": MSGS, "max_tokens": 3})[0] == 500
        assert s.proc.wait(timeout=10) != 0
    finally:
        s.stop()


def test_faults_stall_and_drop() -> None:
    s = Sim(["--sim-startup-seconds", "0", "--sim-drop-rate", "1", "--sim-stall-after", "1.0"])
    try:
        s.wait_health()
        ready_at = time.monotonic()
        with pytest.raises(http.client.IncompleteRead):
            s.post({"messages": MSGS, "max_tokens": 30, "ignore_eos": True, "stream": True})
        time.sleep(max(0.0, ready_at + 1.1 - time.monotonic()))
        assert s.get("/health")[0] == 503

        async def stalled() -> None:
            async with aiohttp.ClientSession() as session:
                body = {"messages": MSGS, "max_tokens": 5, "stream": True}
                async with session.post(s.base + "/v1/chat/completions", json=body) as r:
                    assert r.status == 200
                    with pytest.raises(asyncio.TimeoutError):
                        await asyncio.wait_for(r.content.read(1), timeout=0.5)

        asyncio.run(stalled())
    finally:
        s.stop()


def test_stall_with_liveness_only_health_keeps_health_200_but_not_health_generate() -> None:
    # SGLang with SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=false: /health only says the process is alive
    s = Sim(["--sim-startup-seconds", "0", "--sim-stall-after", "0.2"],
            {"SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "false"})
    try:
        s.wait_health()
        time.sleep(0.5)
        assert s.get("/health")[0] == 200
        assert s.get("/health_generate")[0] == 503
    finally:
        s.stop()


def test_requests_beyond_the_context_length_get_sglangs_400_not_a_clamp() -> None:
    s = Sim(["--sim-startup-seconds", "0", "--context-length", "4Ki"])
    try:
        s.wait_health()
        status, body = s.post({"messages": MSGS, "max_tokens": 5000, "ignore_eos": True})
        assert status == 400
        message = json.loads(body)["message"]
        assert message.startswith("Requested token count exceeds the model's maximum context length of 4096 tokens")
        status, body = s.post({"messages": MSGS, "max_tokens": 50, "ignore_eos": True})
        assert status == 200 and json.loads(body)["usage"]["completion_tokens"] == 50
    finally:
        s.stop()
    # a 1Ki window keeps the clamped request's decode short (about a thousand steps of the demo model)
    clamp = Sim(["--sim-startup-seconds", "0", "--context-length", "1Ki", "--allow-auto-truncate"])
    try:
        clamp.wait_health()
        status, body = clamp.post({"messages": MSGS, "max_tokens": 5000, "ignore_eos": True})
        usage = json.loads(body)["usage"]
        assert status == 200 and usage["prompt_tokens"] + usage["completion_tokens"] == 1024
    finally:
        clamp.stop()
