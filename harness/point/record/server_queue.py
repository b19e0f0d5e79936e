"""The point record's `server_queue`: how much the server queued and retracted over the profiling phase.

From AIPerf's `server_metrics_export.json` (SGLang's /metrics scraped through the run): the waiting queue
(`sglang:num_queue_reqs`, its mean and max over the scrapes, ranks summed per statistic), the running batch
(`sglang:num_running_reqs`), the KV pool's peak use (`sglang:token_usage`), and the retractions the scheduler made
when the pool could not hold a decode step (`sglang:num_retracted_requests` and
`sglang:num_retracted_input_tokens`, counter increases). A figure the export lacks is None; without an export
the whole block is None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.point.record.inferencex_server_metrics import fraction, gauge_stat, sum_stat


def server_queue(export: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The queue/retraction block of a point record (see the module docstring)."""
    metrics = export.get("metrics") if isinstance(export, Mapping) else None
    if not isinstance(metrics, Mapping):
        return None

    def count(name: str) -> int | None:
        value = sum_stat(metrics, name)
        return None if value is None else int(round(value))

    return {
        "queue_reqs_avg": sum_stat(metrics, "sglang:num_queue_reqs", ("avg",)),
        "queue_reqs_max": sum_stat(metrics, "sglang:num_queue_reqs", ("max",)),
        "running_reqs_avg": sum_stat(metrics, "sglang:num_running_reqs", ("avg",)),
        "token_usage_max": fraction(gauge_stat(metrics, "sglang:token_usage", ("max",))),
        "retracted_requests": count("sglang:num_retracted_requests"),
        "retracted_input_tokens": count("sglang:num_retracted_input_tokens"),
    }
