"""The simulator's KV pool over real sockets: the start-up log's `max_total_num_tokens=` line follows
`--mem-fraction-static` and `--max-total-tokens`, and a pool too small for the load queues admissions (SGLang's
rule) instead of admitting everyone and retracting. Bounded work: eight requests per server, ~3k-token prompts,
100 output tokens each; the checks are orderings and counters, not durations."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.integration.test_sim_server import Sim

POOL = re.compile(r"max_total_num_tokens=(\d+),")


def _pool_from_log(args: list[str]) -> tuple[int, float]:
    s = Sim(["--enable-metrics", "--sim-startup-seconds", "0.2", *args])
    try:
        s.wait_health()
        metrics = s.get("/metrics")[1].decode()
    finally:
        s.stop()
    out = (s.proc.stdout.read() if s.proc.stdout else "") + (s.proc.stderr.read() if s.proc.stderr else "")
    found = POOL.findall(out)
    assert len(found) == 1, out[-2000:]
    gauge = next(float(line.split()[-1]) for line in metrics.splitlines()
                 if line.startswith("sglang:max_total_num_tokens"))
    return int(found[0]), gauge


def test_the_log_line_follows_mem_fraction_and_max_total_tokens() -> None:
    default, gauge = _pool_from_log([])
    assert default == gauge == 33111   # the demo model: (24e9 x 0.85 - 16.06e9) // 128 KiB
    assert _pool_from_log(["--mem-fraction-static", "0.8"])[0] < default
    assert _pool_from_log(["--max-total-tokens", "16384"]) == (16384, 16384.0)


def _burst(args: list[str], truth: Path) -> tuple[list[dict[str, int]], str]:
    s = Sim(["--enable-metrics", "--sim-startup-seconds", "0.2", "--sim-truth-log", str(truth), *args])
    try:
        s.wait_health()
        bodies = [{"model": "sim-model", "max_tokens": 100, "ignore_eos": True,
                   "messages": [{"role": "user", "content": f"session {i} " + f"file{i}.py line " * 800}]}
                  for i in range(8)]
        with ThreadPoolExecutor(8) as pool:
            codes = [code for code, _ in pool.map(s.post, bodies)]
        assert codes == [200] * 8
        metrics = s.get("/metrics")[1].decode()
    finally:
        s.stop()
    return [json.loads(line) for line in truth.read_text().splitlines()], metrics


def _counter(metrics: str, name: str) -> float:
    return next(float(line.split()[-1]) for line in metrics.splitlines() if line.startswith(name))


@pytest.mark.parametrize("pool", [None, 16384])
def test_a_small_pool_queues_admissions_instead_of_retracting(pool: int | None, tmp_path: Path) -> None:
    rows, metrics = _burst([] if pool is None else ["--max-total-tokens", str(pool)], tmp_path / "truth.jsonl")
    rows = [r for r in rows if r["status"] == "ok" and r["prompt_tokens"] > 1000]
    assert len(rows) == 8 and all(r["completion_tokens"] == 100 for r in rows)
    first_done = min(r["last_token_sent_ns"] for r in rows)
    # requests that were there before the first one finished and were admitted only after it (one arriving late
    # on a busy machine waited for nothing)
    admitted_after_a_finish = sum(r["arrival_ns"] < first_done < r["admitted_ns"] for r in rows)
    assert _counter(metrics, "sglang:num_retracted_requests_total") == 0
    if pool is None:
        assert admitted_after_a_finish == 0   # 8 x ~2.9k tokens fit the default 33k pool: nobody waits
    else:
        assert admitted_after_a_finish >= 3   # 5 fit beside each other's reserved output; the rest wait
