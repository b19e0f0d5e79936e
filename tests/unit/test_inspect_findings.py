"""The inspect findings: each named rule against facts whose cause is known, at and beside its threshold, and the
facts computed from timeslices and records by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.inspect import facts as facts_mod
from harness.inspect.clock import Window
from harness.inspect.findings import contrast, findings
from harness.inspect.point_files import PointFiles
from harness.inspect.svg_chart import _downsample


def _rules(facts: dict[str, Any]) -> dict[str, Any]:
    return {f.rule: f for f in findings(facts)}


def _server(usage: list[float], queued: list[float], evicted: list[float], prompt: list[float],
            cached: list[float], t0: float = 0.0) -> dict[str, Any]:
    n = len(usage)
    return {"t": [t0 + i for i in range(n)], "source": "test",
            "token_usage": [{"avg": u, "max": u} for u in usage],
            "max_total_num_tokens": [{"avg": 1000.0, "max": 1000.0}] * n,
            "num_queue_reqs": [{"avg": q, "max": q} for q in queued],
            "num_running_reqs": [{"avg": 2.0, "max": 2.0}] * n,
            "evicted_tokens": evicted, "prompt_tokens": prompt, "cached_tokens_device": cached,
            "cached_tokens_host": [0.0] * n}


def test_pool_too_small_for_the_load_fires_pool_evictions_hit_rate_and_queue() -> None:
    # 10 slices in the window: the pool peaks >= 0.95 in 7 (70 %), 3 queue (30 %), 500 tokens evicted, and the
    # server served 200 of 1000 prompt tokens from cache (20 %) where the trace could reuse 90 %
    server = _server(usage=[0.5, 0.96, 1.0, 1.0, 0.97, 0.99, 0.95, 1.0, 0.6, 0.7],
                     queued=[0, 0, 2, 3, 1, 0, 0, 0, 0, 0], evicted=[0, 0, 100, 200, 0, 0, 200, 0, 0, 0],
                     prompt=[100.0] * 10, cached=[20.0] * 10)
    facts = facts_mod.server_facts(server, Window(0, 10_000_000_000, "test"), {})
    facts["theoretical_hit_rate"] = {"value": 0.9, "n": 40, "source": "trace"}
    fired = _rules(facts)
    assert fired["kv_pool_full"].value == 0.7 and fired["kv_pool_full"].n == 10
    assert "7 of 10 slices" in fired["kv_pool_full"].text and "of 1,000 tokens" in fired["kv_pool_full"].text
    assert fired["evictions"].value == 500
    assert fired["hit_rate_below_trace"].value == 0.2
    assert "about 700 of 1,000 prompt tokens were prefilled again" in fired["hit_rate_below_trace"].text
    assert fired["server_queue"].value == 0.3 and "up to 3 waiting" in fired["server_queue"].text
    assert [f.kind for f in findings(facts)][:4] == ["cause"] * 4


def test_slices_outside_the_window_do_not_count() -> None:
    # two warm-up slices before the window (t < 0) are full; inside it the pool is never full
    server = _server(usage=[1.0, 1.0, 0.2, 0.3], queued=[5, 5, 0, 0], evicted=[9, 9, 0, 0], prompt=[10.0] * 4,
                     cached=[9.0] * 4, t0=-2.0)
    facts = facts_mod.server_facts(server, Window(0, 2_000_000_000, "test"), {})
    assert facts["pool_full_share"]["n"] == 2 and facts["pool_full_share"]["value"] == 0.0
    assert _rules(facts) == {}


@pytest.mark.parametrize(("achieved", "fires"), [(3.59, True), (3.6, False)])
def test_idle_lanes_fire_below_ninety_percent_of_the_target(achieved: float, fires: bool) -> None:
    facts = {"achieved_concurrency": {"value": achieved, "target": 4, "n": 30, "source": "record"}}
    assert ("lanes_idle" in _rules(facts)) is fires


def test_hit_rate_within_ten_points_of_the_trace_is_no_finding() -> None:
    base = {"theoretical_hit_rate": {"value": 0.9, "n": 5, "source": "t"}}
    near = {**base, "hit_rate": {"value": 0.81, "prompt_tokens": 10, "n": 3, "source": "s"}}
    far = {**base, "hit_rate": {"value": 0.79, "prompt_tokens": 10, "n": 3, "source": "s"}}
    assert "hit_rate_below_trace" not in _rules(near)
    assert "hit_rate_below_trace" in _rules(far)


def _request(phase: str, start_s: float, end_s: float, ok: bool = True) -> dict[str, Any]:
    return {"phase": phase, "start_s": start_s, "end_s": end_s, "ok": ok, "isl": 100.0, "cached_tokens": 50.0}


def test_warmup_overlap_counts_warmup_requests_ending_after_the_window_opened(tmp_path: Path) -> None:
    pf = PointFiles(point_dir=tmp_path, record={"conc": 2})
    requests = [_request("warmup", -5.0, -1.0), _request("warmup", -4.0, 3.5), _request("profiling", 0.5, 4.0)]
    facts = facts_mod.client_facts(pf, requests, Window(0, None, "test"))
    fired = _rules(facts)
    assert fired["warmup_overlap"].value == 1 and fired["warmup_overlap"].n == 2
    assert "until 3.5 s" in fired["warmup_overlap"].text
    assert facts["client_hit_rate"]["value"] == 0.5


def test_cancellations_errors_and_a_thin_p90(tmp_path: Path) -> None:
    pf = PointFiles(point_dir=tmp_path, record={"conc": 4, "request_accounting": {"cancelled_at_cutoff": 79}})
    requests = [_request("profiling", i, i + 1, ok=i % 10 != 0) for i in range(99)]
    fired = _rules(facts_mod.client_facts(pf, requests, Window(0, None, "test")))
    assert fired["cutoff_cancellations"].value == 79
    assert fired["request_errors"].value == 10 and fired["request_errors"].n == 99
    assert fired["few_requests_p90"].value == 89 and "needs 100" in fired["few_requests_p90"].text


def test_contrast_names_both_points_with_their_sample_sizes_and_sources() -> None:
    a = {"hit_rate": {"value": 0.0, "n": 64, "source": "sglang:cached_tokens (metrics)"},
         "throughput_per_gpu": {"value": 2507.0, "n": 22, "source": "point_result.json"}}
    b = {"hit_rate": {"value": 0.876, "n": 45, "source": "sglang:cached_tokens (metrics)"},
         "throughput_per_gpu": {"value": 4372.5, "n": 28, "source": "report row"}}
    assert contrast("c8", a, "c4", b) == [
        "throughput: c8 2,507 total tok/s/GPU (n=22) vs c4 4,372 total tok/s/GPU (n=28) [point_result.json; report row]",
        "prefix-cache hit rate: c8 0 % (n=64) vs c4 88 % (n=45) [sglang:cached_tokens (metrics)]"]


def test_drawing_keeps_every_peak_of_a_long_series() -> None:
    t = [i * 0.1 for i in range(100_000)]
    y: list[float | None] = [1.0] * len(t)
    y[54_321] = 99.0
    y[77_777] = -5.0
    dt, dy = _downsample(t, y, 0.0, 10_000.0, 1000)
    assert len(dt) <= 2 * 1000 + 2
    assert 99.0 in dy and -5.0 in dy
