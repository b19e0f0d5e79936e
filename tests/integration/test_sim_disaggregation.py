"""A prefill and a decode simulator behind SGLang's real router (`sglang-router`, PD mode)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from harness.point.servers.port_owner import free_port

from .conftest import stop_process

pytest.importorskip("sglang_router", reason="sglang-router is a dev extra (pip install -e .[dev])")


def _get(url: str, timeout: float = 2.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _counter(metrics: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)}\{{[^}}]*\}} ([0-9.e+]+)$", metrics, re.M)
    assert m, f"{name} missing from /metrics"
    return float(m.group(1))


def _chat(base: str, content: str, timeout: float) -> tuple[int, str]:
    body = {"model": "sim-model", "messages": [{"role": "user", "content": content}], "stream": True,
            "max_tokens": 6, "ignore_eos": True, "stream_options": {"include_usage": True}}
    req = urllib.request.Request(f"{base}/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _start(cmd: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


@pytest.fixture
def pd() -> Iterator[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    env["SGLANG_DISAGGREGATION_WAITING_TIMEOUT"] = "5"
    ports = {name: free_port() for name in ("prefill", "bootstrap", "decode", "router")}
    sim = [sys.executable, "-m", "harness.sim", "--model-path", "m", "--served-model-name", "sim-model",
           "--host", "127.0.0.1", "--enable-metrics", "--sim-startup-seconds", "0.2"]
    procs = {
        "prefill": _start([*sim, "--port", str(ports["prefill"]), "--disaggregation-mode", "prefill",
                           "--disaggregation-bootstrap-port", str(ports["bootstrap"])], env),
        "decode": _start([*sim, "--port", str(ports["decode"]), "--disaggregation-mode", "decode"], env),
    }
    urls = {name: f"http://127.0.0.1:{ports[name]}" for name in ("prefill", "decode", "router")}
    procs["router"] = _start([sys.executable, "-m", "sglang_router.launch_router", "--pd-disaggregation",
                              "--prefill", urls["prefill"], str(ports["bootstrap"]), "--decode", urls["decode"],
                              "--host", "127.0.0.1", "--port", str(ports["router"])], env)
    try:
        yield {"urls": urls, "procs": procs}
    finally:
        for proc in procs.values():
            stop_process(proc)


def _wait_for_workers(router: str, procs: dict[str, subprocess.Popen[str]], within_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        for name, proc in procs.items():
            if proc.poll() is not None:
                out = proc.stdout.read() if proc.stdout else ""
                pytest.fail(f"{name} exited with {proc.returncode}: {out[-2000:]}")
        try:
            status, text = _get(f"{router}/workers")
        except OSError:
            status, text = 0, ""
        if status == 200:
            workers: dict[str, Any] = json.loads(text)
            stats = workers.get("stats", {})
            if stats.get("prefill_count") == 1 and stats.get("decode_count") == 1:
                return workers
        time.sleep(0.3)
    pytest.fail("the router never listed one prefill and one decode worker")


def test_router_streams_decode_after_prefill_handover_and_fails_cleanly_without_prefill(
        pd: dict[str, Any]) -> None:
    urls, procs = pd["urls"], pd["procs"]
    workers = _wait_for_workers(urls["router"], procs, within_s=60)
    by_type = {w["worker_type"]: w for w in workers["workers"]}
    assert by_type["prefill"]["metadata"]["disaggregation_mode"] == "prefill"   # read from our /server_info
    assert by_type["decode"]["metadata"]["disaggregation_mode"] == "decode"
    for role in ("prefill", "decode"):
        info = json.loads(_get(f"{urls[role]}/server_info")[1])
        assert info["disaggregation_mode"] == role
    before = {role: _get(f"{urls[role]}/metrics")[1] for role in ("prefill", "decode")}

    status, text = _chat(urls["router"], "tell me about disaggregated serving", timeout=30)
    assert status == 200, text
    events = [line[len("data: "):] for line in text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    usage = chunks[-1]["usage"]
    assert content and usage["completion_tokens"] == 6           # the whole answer: decode's stream

    after = {role: _get(f"{urls[role]}/metrics")[1] for role in ("prefill", "decode")}

    def delta(role: str, name: str) -> float:
        return _counter(after[role], name) - _counter(before[role], name)

    prompt = usage["prompt_tokens"]
    assert delta("prefill", "sglang:prompt_tokens_total") == prompt     # prefill computed the prompt...
    assert delta("prefill", "sglang:generation_tokens_total") == 1       # ...and the first token only
    assert delta("decode", "sglang:generation_tokens_total") == 6        # decode produced the reply
    assert delta("decode", "sglang:num_requests_total") == 1

    stop_process(procs["prefill"])
    start = time.monotonic()
    status, text = _chat(urls["router"], "is anyone there", timeout=30)
    elapsed = time.monotonic() - start
    assert status >= 500, text
    assert "KV transfer" in text or "timed out" in text or "Prefill" in text
    assert elapsed < 15, f"a request without a prefill worker took {elapsed:.1f}s to fail"
    assert procs["decode"].poll() is None                                # the decode worker is still up
