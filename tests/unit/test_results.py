"""Result building from per-request records: exact values on hand-built inputs."""

import pytest

from harness.point.record.result_fields import (
    RequestRecord,
    parse_record,
    request_accounting,
    request_metrics,
    stats,
    throughput_block,
)


def rec(start_s, end_s, ok=True, phase="profiling", isl=1000, osl=100, ttft=0.1, itl=0.01, err=None):
    return RequestRecord(phase=phase, start_ns=int(start_s * 1e9), end_ns=int(end_s * 1e9), ok=ok,
                         error_type=err, ttft_s=ttft if ok else None, e2el_s=(end_s - start_s) if ok else None,
                         itl_s=itl if ok else None, input_tokens=isl if ok else None,
                         output_tokens=osl if ok else None)


def test_parse_record_success_and_error():
    ok = parse_record({"metadata": {"benchmark_phase": "profiling", "request_start_ns": 10, "request_end_ns": 20,
                                    "x_request_id": "r1"},
                       "metrics": {"request_latency": {"value": 1500.0, "unit": "ms"},
                                   "time_to_first_token": {"value": 250.0, "unit": "ms"},
                                   "inter_token_latency": {"value": 12.5, "unit": "ms"},
                                   "input_sequence_length": {"value": 4096, "unit": "tokens"},
                                   "output_sequence_length": {"value": 101, "unit": "tokens"}}})
    assert ok == RequestRecord("profiling", 10, 20, True, None, 0.25, 1.5, 0.0125, 4096, 101, "r1")
    bad = parse_record({"metadata": {"benchmark_phase": "warmup"}, "metrics": {},
                        "error": {"code": 500, "type": "Internal Server Error", "message": "x"}})
    assert (bad.ok, bad.error_type, bad.phase) == (False, "Internal Server Error", "warmup")


def test_stats_linear_interpolation():
    s = stats([1.0, 2.0, 3.0, 4.0])
    assert s["mean"] == 2.5
    assert s["p50"] == 2.5
    assert s["p75"] == pytest.approx(3.25)
    assert s["p90"] == pytest.approx(3.7)
    assert s["p99"] == pytest.approx(3.97)
    assert stats([]) is None


def test_throughput_window_is_first_start_to_last_end_of_successful_records():
    ok = [rec(0, 2), rec(1, 4), rec(3, 10)]
    t = throughput_block(ok, num_gpus=4)
    assert t["duration_seconds"] == 10
    assert t["input"]["tokens_per_second"] == 300.0
    assert t["output"]["tokens_per_second"] == 30.0
    assert t["per_gpu"]["total_tput_tps"] == pytest.approx(330.0 / 4)


def test_request_metrics_ignore_warmup_and_errors():
    records = [rec(0, 1, phase="warmup"), rec(5, 6), rec(6, 8), rec(6, 7, ok=False, err="Timeout")]
    m = request_metrics(records, num_gpus=1)
    assert m["throughput"]["duration_seconds"] == 3
    assert m["latency"]["e2el"]["p50"] == 1.5
    assert m["latency"]["intvty"]["p50"] == pytest.approx(100.0)
    assert m["latency"]["e2e_norm_intvty"]["p50"] == pytest.approx(1 / 0.015)


def test_accounting_counts_cancelled_and_error_categories():
    records = [rec(0, 1, phase="warmup"), rec(1, 2), rec(1, 2, ok=False, err="Timeout"),
               rec(1, 2, ok=False, err="Timeout"), rec(1, 2, ok=False, err="Internal Server Error")]
    a = request_accounting(records, cancelled_at_cutoff=4)
    assert a["records_total"] == 5 and a["records_profiled"] == 4 and a["records_warmup"] == 1
    assert a["successful"] == 1 and a["errors"] == 3 and a["cancelled_at_cutoff"] == 4
    assert a["error_categories"] == {"Internal Server Error": 1, "Timeout": 2}
    assert request_accounting(records, None)["cancelled_at_cutoff_source"].startswith("unavailable")


def test_achieved_concurrency_counts_live_session_trees_including_think_time():
    from dataclasses import replace

    from harness.point.record.result_fields import achieved_concurrency

    a1 = replace(rec(0, 1), tree_id="a")
    a2 = replace(rec(3, 4), tree_id="a")      # tree a lives 0..4 (think time 1..3 counts)
    b1 = replace(rec(2, 4), tree_id="b")      # tree b lives 2..4
    c = achieved_concurrency([a1, a2, b1])
    assert c["sessions"] == pytest.approx((4 + 2) / 4)
    assert c["requests"] == pytest.approx((1 + 1 + 2) / 4)
    assert achieved_concurrency([]) is None
