"""benchmarks/timing_error.py: each request's TTFT error splits exactly into the part before the server's receive
stamp and the part after its first-token write, and the tail is attributed to the part that carries it."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MS = 1_000_000


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("timing_error", ROOT / "benchmarks" / "timing_error.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pair(start_ns: int, worker: str, *, up_ms: float, down_ms: float, server_ttft_ms: float = 200.0,
          send_ms: float = 0.25) -> tuple[dict[str, Any], dict[str, Any]]:
    """An AIPerf record and the simulator's truth for one request whose client view is late by up_ms before the
    server's receive stamp and down_ms after its first-token write."""
    arrival = start_ns + int(up_ms * MS)
    first = arrival + int(server_ttft_ms * MS)
    last = first + 500 * MS
    ttft = (first - start_ns) / MS + down_ms
    record = {"metadata": {"request_start_ns": start_ns, "worker_id": worker, "benchmark_phase": "profiling"},
              "metrics": {"time_to_first_token": {"value": ttft},
                          "request_latency": {"value": (last - start_ns) / MS + down_ms},
                          "http_req_waiting": {"value": ttft - send_ms}}}
    truth = {"arrival_ns": arrival, "first_token_sent_ns": first, "last_token_sent_ns": last, "prompt_tokens": 4000}
    return record, truth


def test_the_error_is_the_sum_of_its_two_parts() -> None:
    m = _bench()
    record, truth = _pair(10**18, "w1", up_ms=0.7, down_ms=0.2)
    row = m.request_error(record, truth)
    assert row["to_server_ms"] == pytest.approx(0.7)
    assert row["from_server_ms"] == pytest.approx(0.2)
    assert row["ttft_err_ms"] == pytest.approx(row["to_server_ms"] + row["from_server_ms"])
    assert row["e2el_err_ms"] == pytest.approx(0.9)
    assert row["send_ms"] == pytest.approx(0.25)
    assert row["server_in_ms"] == pytest.approx(0.45)   # the rest of the way in: the kernel and the server's loop


def test_the_tail_is_attributed_to_the_part_that_carries_it() -> None:
    m = _bench()
    rows = []
    for i in range(200):   # 2 slow requests in 200, both late on the way back, on one worker, 1 s apart
        slow = i in (50, 51)
        record, truth = _pair(10**18 + i * 2 * 10**9 + (i == 51) * 10**9, "w7" if slow else f"w{i % 8}",
                              up_ms=0.6, down_ms=9.0 if slow else 0.2)
        rows.append(m.request_error(record, truth))
    tail = m.tail_attribution(rows)
    assert tail["requests"] == 2
    assert tail["tail_mean_ms"]["from_server_ms"] == pytest.approx(9.0)
    assert tail["tail_mean_ms"]["to_server_ms"] == pytest.approx(0.6)
    assert tail["all_median_ms"]["from_server_ms"] == pytest.approx(0.2)
    assert tail["parts_ms"]["from_server_ms"]["p50"] == pytest.approx(0.2)
    assert tail["parts_ms"]["from_server_ms"]["p99.9"] == pytest.approx(9.0)
    assert (tail["workers"], tail["workers_all"]) == (1, 8)
    assert tail["share_in_busiest_10s"] == 1.0


def test_the_host_is_named_and_its_cpu_counted_so_runs_compare_only_on_like_hosts() -> None:
    bench = _bench()
    assert bench.host_description().endswith(f", {os.cpu_count()} cores")
    before = bench._host_ticks()
    sum(range(5_000_000))   # some CPU on this host
    after = bench._host_ticks()
    assert set(before) == {"host:busy", "host:steal"}
    assert after["host:busy"] > before["host:busy"] and after["host:steal"] >= before["host:steal"]


def test_memory_growth_compares_the_first_and_last_tenth_of_the_run() -> None:
    m = _bench()
    flat = m.rss_drift([500.0 + (i % 3) for i in range(900)])
    assert flat["growth_mib"] == 0.0 and flat["peak_mib"] == 502.0
    rising = m.rss_drift([500.0 + i / 10 for i in range(900)])   # 0.1 MiB a second over 900 s
    assert rising["first_mib"] == pytest.approx(504.45, abs=0.1) and rising["last_mib"] == pytest.approx(585.45, abs=0.1)
    assert rising["growth_mib"] == pytest.approx(81.0, abs=0.2)


def test_memory_in_the_window_leaves_start_up_and_export_out_and_shows_each_minute() -> None:
    m = _bench()
    # start-up climbs to 2,000 MiB in the first 100 s, the window (100-400 s) is flat, the export peaks after it
    samples = [(float(t), 2000.0 * min(t, 100) / 100 + (1500.0 if t > 400 else 0.0)) for t in range(500)]
    w = m.window_memory(samples, 100.0, 400.0, 3000)
    assert (w["first_mib"], w["last_mib"], w["growth_mib"], w["peak_mib"]) == (2000.0, 2000.0, 0.0, 2000.0)
    assert w["per_minute_mib"] == [2000.0] * 6   # 301 samples: five whole minutes and the window's last second
    assert w["growth_kib_per_request"] == 0.0
    assert m.rss_drift([mib for _, mib in samples])["growth_mib"] > 3000   # the whole run reads as growth
    assert m.window_memory(samples, 600.0, 700.0, 0) == {}


def test_memory_that_follows_the_load_reads_as_kib_per_request() -> None:
    m = _bench()
    # 0.1 MiB a second over a 900 s window that started 9,000 requests: the tenths' medians are 810 s apart
    samples = [(float(t), 3000.0 + t / 10) for t in range(900)]
    w = m.window_memory(samples, 0.0, 899.0, 9000)
    assert w["growth_mib"] == pytest.approx(81.0, abs=0.2)
    assert w["growth_kib_per_request"] == pytest.approx(81.0 * 1024 / 9000, abs=0.05)
    assert w["per_minute_mib"][:2] == [3002.9, 3008.9]   # each minute's median climbs 6 MiB
