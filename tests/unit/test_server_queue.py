"""The point record's queue/retraction block from AIPerf's server-metrics export."""

from __future__ import annotations

from harness.point.record.server_queue import server_queue


def _series(**stats: float) -> dict[str, object]:
    return {"series": [{"labels": {"tp_rank": "0"}, "stats": stats}]}


def test_queue_and_retractions_come_from_sglangs_series() -> None:
    export = {"metrics": {
        "sglang:num_queue_reqs": _series(avg=1.5, max=6.0),
        "sglang:num_running_reqs": _series(avg=2.0, max=4.0),
        "sglang:token_usage": _series(avg=0.5, max=0.97),
        "sglang:num_retracted_requests": _series(total=3.0),
        "sglang:num_retracted_input_tokens": _series(total=12000.0),
    }}
    assert server_queue(export) == {"queue_reqs_avg": 1.5, "queue_reqs_max": 6.0, "running_reqs_avg": 2.0,
                                    "token_usage_max": 0.97, "retracted_requests": 3,
                                    "retracted_input_tokens": 12000}


def test_missing_figures_are_none_and_no_export_is_none() -> None:
    assert server_queue(None) is None
    assert server_queue({"metrics": {}}) == dict.fromkeys(
        ("queue_reqs_avg", "queue_reqs_max", "running_reqs_avg", "token_usage_max", "retracted_requests",
         "retracted_input_tokens"))
