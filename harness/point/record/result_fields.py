"""Result building: parsed client output → the `bmk_agentic_*.json` fields of DOMAIN §4. Pure functions.

Throughput is computed over the profiling window measured from the per-request records (first profiled
request start → last profiled successful request end), not from AIPerf's `benchmark_duration`, which
shrinks when requests are cancelled at the cutoff. Latencies are in seconds; interactivity in tokens/s
per user. Percentiles use linear interpolation.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

PERCENTILES = (50, 75, 90, 95, 99)


@dataclass(frozen=True)
class RequestRecord:
    """One request as the client saw it (times in wall-clock ns, lengths in server tokens)."""

    phase: str
    start_ns: int
    end_ns: int
    ok: bool
    error_type: str | None
    ttft_s: float | None
    e2el_s: float | None
    itl_s: float | None
    input_tokens: int | None
    output_tokens: int | None
    request_id: str | None = None
    tree_id: str | None = None


def _metric(metrics: dict[str, Any], tag: str) -> float | None:
    entry = metrics.get(tag)
    if isinstance(entry, dict) and isinstance(entry.get("value"), (int, float)):
        return float(entry["value"])
    return None


def parse_record(raw: dict[str, Any]) -> RequestRecord:
    """An AIPerf `profile_export.jsonl` line → RequestRecord (ms → s)."""
    meta = raw.get("metadata", {})
    metrics = raw.get("metrics") or {}
    error = raw.get("error")
    error_type = None
    if error:
        if isinstance(error, dict):
            error_type = str(error.get("type") or error.get("code") or "error")
        else:
            error_type = str(error)[:80]
    ms = {tag: _metric(metrics, tag) for tag in ("time_to_first_token", "request_latency", "inter_token_latency")}
    isl = _metric(metrics, "input_sequence_length")
    osl = _metric(metrics, "output_sequence_length")
    ok = error is None and ms["request_latency"] is not None
    return RequestRecord(
        phase=str(meta.get("benchmark_phase", "profiling")),
        start_ns=int(meta.get("request_start_ns") or 0),
        end_ns=int(meta.get("request_end_ns") or 0),
        ok=ok, error_type=error_type,
        ttft_s=None if ms["time_to_first_token"] is None else ms["time_to_first_token"] / 1e3,
        e2el_s=None if ms["request_latency"] is None else ms["request_latency"] / 1e3,
        itl_s=None if ms["inter_token_latency"] is None else ms["inter_token_latency"] / 1e3,
        input_tokens=None if isl is None else int(isl),
        output_tokens=None if osl is None else int(osl),
        request_id=meta.get("x_request_id"),
        tree_id=meta.get("root_correlation_id") or meta.get("x_correlation_id"),
    )


def stats(values: list[float]) -> dict[str, float] | None:
    """mean, p50..p99 (linear interpolation) and std of `values`; None when empty."""
    if not values:
        return None
    arr = np.asarray(values, dtype=float)
    out = {"mean": float(arr.mean())}
    for p in PERCENTILES:
        out[f"p{p}"] = float(np.percentile(arr, p))
    out["std"] = float(arr.std())
    return out


def _inverse(block: dict[str, float] | None) -> dict[str, float] | None:
    """Interactivity from an ITL block: each statistic inverted (std of the per-request inverses kept apart)."""
    if block is None:
        return None
    return {k: (1.0 / v if v > 0 else float("inf")) for k, v in block.items() if k != "std"}


def latency_blocks(ok: list[RequestRecord]) -> dict[str, dict[str, float]]:
    itl = [r.itl_s for r in ok if r.itl_s is not None and r.itl_s > 0]
    blocks: dict[str, dict[str, float] | None] = {
        "ttft": stats([r.ttft_s for r in ok if r.ttft_s is not None]),
        "e2el": stats([r.e2el_s for r in ok if r.e2el_s is not None]),
        "itl": stats(itl),
        "tpot": stats(itl),
    }
    intvty = _inverse(blocks["itl"])
    if intvty is not None:
        intvty["std"] = float(np.std([1.0 / v for v in itl]))
    blocks["intvty"] = intvty
    norm = [r.e2el_s / r.output_tokens for r in ok if r.e2el_s is not None and r.output_tokens]
    blocks["e2e_norm_intvty"] = _inverse(stats(norm))
    if blocks["e2e_norm_intvty"] is not None:
        blocks["e2e_norm_intvty"]["std"] = float(np.std([1.0 / v for v in norm if v > 0]))
    return {k: v for k, v in blocks.items() if v is not None}


def throughput_block(ok: list[RequestRecord], num_gpus: int) -> dict[str, Any] | None:
    """Tokens per second over the window first profiled start → last profiled successful end."""
    if not ok:
        return None
    start = min(r.start_ns for r in ok)
    end = max(r.end_ns for r in ok)
    duration = (end - start) / 1e9
    if duration <= 0:
        return None
    tin = sum(r.input_tokens or 0 for r in ok)
    tout = sum(r.output_tokens or 0 for r in ok)
    return {
        "input": {"tokens_per_second": tin / duration},
        "output": {"tokens_per_second": tout / duration},
        "total": {"tokens_per_second": (tin + tout) / duration},
        "duration_seconds": duration,
        "tokens": {"input": tin, "output": tout},
        "window_start_ns": start,
        "window_end_ns": end,
        "per_gpu": {"total_tput_tps": (tin + tout) / duration / num_gpus,
                    "output_tput_tps": tout / duration / num_gpus,
                    "input_tput_tps": tin / duration / num_gpus},
    }


def achieved_concurrency(records: list[RequestRecord]) -> dict[str, float] | None:
    """Mean concurrency over the throughput window, two ways.

    `sessions`: live session trees (a tree is live from its first to its last request, clipped to the window;
    think time between its requests counts, as it holds its lane, and so does the wait of a tree carried over
    from the warm-up for its next turn) — comparable to the target concurrency.
    `requests`: requests in flight (sum of request durations / window) — lower, by the think time.
    """
    ok = [r for r in records if r.phase == "profiling" and r.ok]
    if not ok:
        return None
    start, end = min(r.start_ns for r in ok), max(r.end_ns for r in ok)
    window = end - start
    if window <= 0:
        return None
    profiled = [r for r in records if r.phase == "profiling" and r.end_ns > 0]
    spans: dict[str, list[int]] = {}
    for r in (r for r in records if r.end_ns > 0):
        key = r.tree_id or r.request_id or str(id(r))
        lo, hi = spans.get(key, [r.start_ns, r.end_ns])
        spans[key] = [min(lo, r.start_ns), max(hi, r.end_ns)]
    live = sum(max(0, min(hi, end) - max(lo, start)) for lo, hi in spans.values())
    busy = sum(max(0, min(r.end_ns, end) - max(r.start_ns, start)) for r in profiled)
    return {"sessions": live / window, "requests": busy / window}


def request_accounting(records: list[RequestRecord], cancelled_at_cutoff: int | None) -> dict[str, Any]:
    profiled = [r for r in records if r.phase == "profiling"]
    errors = [r for r in profiled if not r.ok]
    categories = Counter(r.error_type or "unknown" for r in errors)
    return {
        "records_total": len(records),
        "records_profiled": len(profiled),
        "records_warmup": len(records) - len(profiled),
        "successful": len(profiled) - len(errors),
        "errors": len(errors),
        "cancelled_at_cutoff": cancelled_at_cutoff,
        "cancelled_at_cutoff_source": "aiperf log (Phase profiling complete line)"
        if cancelled_at_cutoff is not None else "unavailable: no phase-complete line in the AIPerf log",
        "error_categories": dict(sorted(categories.items())),
    }


def request_metrics(records: list[RequestRecord], num_gpus: int) -> dict[str, Any]:
    ok = [r for r in records if r.phase == "profiling" and r.ok]
    out: dict[str, Any] = {"latency": latency_blocks(ok)}
    tput = throughput_block(ok, num_gpus)
    if tput is not None:
        out["throughput"] = tput
    return out
