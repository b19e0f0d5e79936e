"""The simulator under a short burst prints SGLang's scheduler lines to its log (its stdout, the point's
`server.log`), at SGLang's interval and with values from its state, and `harness.inspect.batch_log` reads them;
the per-request routed lines stay out at the default log level. Bounded work: ten requests of 30 tokens through
four slots; the checks are counts and bounds, not durations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.inspect.batch_log import parse_batch_log
from harness.point.servers.port_owner import free_port

from .conftest import stop_process

REQUESTS, SLOTS, TOKENS, INTERVAL = 10, 4, 30, 5


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as exc:
        return int(exc.code), b""
    except OSError:
        return 0, b""


def _chat(base: str, i: int) -> dict[str, Any]:
    body = {"model": "sim-model", "max_tokens": TOKENS, "ignore_eos": True, "stream": False,
            "messages": [{"role": "user", "content": f"session {i} " + f"file{i}.py line " * 200}]}
    req = urllib.request.Request(f"{base}/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "X-SMG-Routing-Key": f"s{i}"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        out: dict[str, Any] = json.loads(resp.read())
        return out


def test_a_burst_logs_prefill_and_decode_lines_that_parse(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.sim", "--model-path", "m", "--served-model-name", "sim-model",
             "--host", "127.0.0.1", "--port", str(port), "--sim-startup-seconds", "0.1",
             "--max-running-requests", str(SLOTS), "--decode-log-interval", str(INTERVAL)],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while _get(f"{base}/health")[0] != 200:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.05)
        with ThreadPoolExecutor(REQUESTS) as pool:
            replies = list(pool.map(lambda i: _chat(base, i), range(REQUESTS)))
        info = json.loads(_get(f"{base}/server_info")[1])
    finally:
        stop_process(proc)
    text = log.read_text()
    assert "[sim] routed" not in text                        # only at --log-level debug
    warmup, served = text.split("The server is fired up and ready to roll!", 1)
    assert [x.kind for x in parse_batch_log(warmup)][0] == "prefill"   # the warmup request's, as in SGLang's log
    lines = parse_batch_log(served)
    prefill = [x for x in lines if x.kind == "prefill"]
    decode = [x for x in lines if x.kind == "decode"]
    every_decode = [x for x in parse_batch_log(text) if x.kind == "decode"]
    # one prefill line per prefill batch: every prompt token computed once (distinct prompts, nothing retracted)
    assert sum(x.new_token or 0 for x in prefill) == sum(r["usage"]["prompt_tokens"] for r in replies)
    assert sum(x.new_seq or 0 for x in prefill) >= REQUESTS
    # one decode line per INTERVAL decode batches since start (the warmup's included, as SGLang counts them)
    assert len(every_decode) == info["internal_states"][0]["sim"]["decode_steps"] // INTERVAL and decode
    for x in lines:
        assert x.running_req is not None and 0 <= x.running_req <= SLOTS
        assert x.queue_req is not None and 0 <= x.queue_req < REQUESTS
        assert x.token_usage is not None and 0.0 <= x.token_usage <= 1.0
    assert any(x.queue_req for x in lines)                   # ten requests through four slots: some waited
    assert all(x.running_req and x.num_token is not None and x.gen_throughput and x.accept_len is None for x in decode)
    assert all(x.time_ns // 10**9 <= time.time() + 1 for x in lines)
