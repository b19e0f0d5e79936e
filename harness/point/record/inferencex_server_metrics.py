"""The row's `server_metrics` and `kv_cache_pool_tokens`, built as InferenceX's agentic aggregator builds them.

Input: AIPerf's `server_metrics_export.json` (the server's Prometheus `/metrics`, scraped by AIPerf through
the run and reduced per series to statistics over the profiling phase), the successful profiled records and
the server log (a deployment's: every worker node's log, their pools summed as InferenceX sums a multi-node
run's worker logs). The SGLang adapter (`utils/agentic/aggregation/backends/sglang.py` at
SemiAnalysisAI/InferenceX 843c6254) takes, per metric, the first of a preference list of statistics of every
series and sums (or, for gauges, takes the max or mean of) the series:

- prompt/generation tokens: `sglang:prompt_tokens` / `sglang:generation_tokens` (counter `total`, i.e. the
  increase over the profiling phase); cache hits per source from `sglang:cached_tokens{cache_source}`; GPU
  (`device`), CPU (`host`, also "external") and overall hit rates are those hits over the prompt tokens, the
  overall one falling back to the mean of the `sglang:cache_hit_rate` gauge;
- KV usage: the max of `sglang:token_usage` as a fraction (InferenceX's `gpu_usage_pct` holds 0..1), the pool
  from `sglang:max_total_num_tokens`, overridden by the server log's `max_total_num_tokens=` lines; HiCache
  host usage from `sglang:hicache_host_{used,total}_tokens`; computed prefill from
  `sglang:realtime_tokens{mode="prefill_compute"}`.

Without an export the block keeps adapter `none`, totals from the records, the pool from the log and the
warning InferenceX writes; this harness then also fills the GPU hit rate and KV usage from its own
`/metrics` scrape after the run and says so. Floats are rounded as InferenceX rounds its rows (5 places).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

COUNTER_KEYS = ("total", "sum", "max", "avg")
GAUGE_KEYS = ("max", "avg", "total")
MISSING_EXPORT = "server_metrics_export.json missing or empty"
ROW_DECIMALS = 5   # InferenceX rounds its rows' floats to this many places
_RANK = re.compile(r"\b(?P<tag>DP\d+\s+TP\d+\s+EP\d+)\b")
_POOL = re.compile(r"\bmax_total_num_tokens=(?P<tokens>\d+)\b")
_DP_SIZE = re.compile(r"\bdp_size=(?P<dp_size>\d+)\b")

Metrics = Mapping[str, Any]
Series = Mapping[str, Any]


def empty_block(present: bool, metric_count: int) -> dict[str, Any]:
    """InferenceX's `server_metrics` skeleton (every value unknown)."""
    return {
        "present": present, "adapter": "none", "metric_count": metric_count,
        "cache": {"gpu_cache_hit_rate": None, "cpu_cache_hit_rate": None, "external_cache_hit_rate": None,
                  "overall_cache_hit_rate": None, "prefix_cache_hits": None, "prefix_cache_queries": None,
                  "external_prefix_cache_hits": None, "external_prefix_cache_queries": None,
                  "cached_tokens_by_source": {}, "frontend_cache_hit_rate": None, "router_kv_hit_rate": None,
                  "router_shared_cache_hit_rate": None, "frontend_cached_tokens": None,
                  "frontend_input_tokens": None},
        "kv_cache": {"gpu_usage_pct": None, "gpu_total_tokens": None, "cpu_usage_pct": None,
                     "cpu_used_tokens": None, "cpu_total_tokens": None},
        "kv_offload": {"bytes_gpu_to_cpu": None, "bytes_cpu_to_gpu": None, "time_gpu_to_cpu": None,
                       "time_cpu_to_gpu": None, "bandwidth_gpu_to_cpu_bytes_per_second": None,
                       "bandwidth_cpu_to_gpu_bytes_per_second": None},
        "tokens": {"prompt_total": None, "generation_total": None, "requests_completed": None,
                   "prompt_by_source": {"gpu_cache_hit": None, "cpu_or_external_cache_hit": None,
                                        "computed": None, "raw": {}}},
        "sources": [],
    }


def as_float(value: Any) -> float | None:
    """A number as float; None for None, booleans and what does not parse."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _series(metrics: Metrics, name: str) -> list[Series]:
    entry = metrics.get(name)
    found = entry.get("series") if isinstance(entry, Mapping) else None
    return [s for s in found if isinstance(s, Mapping)] if isinstance(found, list) else []


def _stat(series: Series, keys: tuple[str, ...]) -> float | None:
    stats = series.get("stats")
    if not isinstance(stats, Mapping):
        return None
    for key in keys:
        value = as_float(stats.get(key))
        if value is not None:
            return value
    return None


def _label(series: Series, key: str) -> str | None:
    labels = series.get("labels")
    value = labels.get(key) if isinstance(labels, Mapping) else None
    return None if value is None else str(value)


def sum_stat(metrics: Metrics, name: str, keys: tuple[str, ...] = COUNTER_KEYS,
             keep: Callable[[Series], bool] | None = None) -> float | None:
    values = [v for s in _series(metrics, name) if keep is None or keep(s) if (v := _stat(s, keys)) is not None]
    return sum(values) if values else None


def gauge_stat(metrics: Metrics, name: str, keys: tuple[str, ...] = GAUGE_KEYS, combine: str = "max") -> float | None:
    values = [v for s in _series(metrics, name) if (v := _stat(s, keys)) is not None]
    if not values:
        return None
    return statistics.mean(values) if combine == "avg" else max(values)


def sum_by_label(metrics: Metrics, name: str, label: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in _series(metrics, name):
        key, value = _label(s, label), _stat(s, COUNTER_KEYS)
        if key is not None and value is not None:
            out[key] = out.get(key, 0.0) + value
    return out


def rate(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def fraction(value: float | None) -> float | None:
    """A gauge exported as 0..1 or 0..100, as 0..1."""
    return None if value is None else value / 100.0 if value > 1.5 else value


def _count(value: float | None) -> int | None:
    return None if value is None else int(round(value))


def kv_pool_tokens(server_log: str | None) -> int | None:
    """The KV pool from SGLang's `max_total_num_tokens=` start-up lines: one per `DPn TPn EPn` rank tag summed,
    bare lines summed; a single line times the log's `dp_size=` when that is above 1 (InferenceX's reading)."""
    if not server_log:
        return None
    per_rank: dict[str, int] = {}
    bare_total = bare_count = 0
    found = _DP_SIZE.search(server_log)
    dp_size = int(found.group("dp_size")) if found and int(found.group("dp_size")) > 0 else None
    for line in server_log.splitlines():
        match = _POOL.search(line) if "max_total_num_tokens" in line else None
        if match is None or int(match.group("tokens")) <= 0:
            continue
        tokens = int(match.group("tokens"))
        tag = _RANK.search(line)
        if tag:
            per_rank[tag.group("tag")] = tokens
        else:
            bare_total += tokens
            bare_count += 1
    if per_rank:
        if dp_size is not None and dp_size > 1 and len(per_rank) == 1:
            return next(iter(per_rank.values())) * dp_size
        return sum(per_rank.values())
    if bare_count == 1 and dp_size is not None and dp_size > 1:
        return bare_total * dp_size
    return bare_total if bare_count else None


def kv_pool_tokens_summed(server_logs: Sequence[str | None]) -> int | None:
    """The pools of several logs summed (logs without one skipped; None when none has one): InferenceX's
    `sum_server_log_capacities`, which sums a multi-node run's worker logs, prefill and decode alike."""
    pools = [pool for pool in map(kv_pool_tokens, server_logs) if pool is not None]
    return sum(pools) if pools else None


def _record_sum(records: Sequence[Mapping[str, Any]], name: str) -> int | None:
    total, found = 0, False
    for record in records:
        metric = (record.get("metrics") or {}).get(name)
        value = metric.get("value") if isinstance(metric, Mapping) else metric
        if value is None:
            continue
        try:
            total += int(value)
        except (TypeError, ValueError):
            continue
        found = True
    return total if found else None


def _sglang(metrics: Metrics, block: dict[str, Any]) -> None:
    prompt = sum_stat(metrics, "sglang:prompt_tokens")
    generation = sum_stat(metrics, "sglang:generation_tokens")
    by_source = sum_by_label(metrics, "sglang:cached_tokens", "cache_source")
    device, host = by_source.get("device"), by_source.get("host")
    overall = rate(sum(by_source.values()) if by_source else None, prompt)
    if overall is None:
        overall = fraction(gauge_stat(metrics, "sglang:cache_hit_rate", ("avg", "max", "total"), "avg"))
    host_used = gauge_stat(metrics, "sglang:hicache_host_used_tokens")
    host_total = gauge_stat(metrics, "sglang:hicache_host_total_tokens")
    block["adapter"] = "sglang"
    block["cache"].update({"gpu_cache_hit_rate": rate(device, prompt), "cpu_cache_hit_rate": rate(host, prompt),
                           "external_cache_hit_rate": rate(host, prompt), "overall_cache_hit_rate": overall,
                           "cached_tokens_by_source": by_source})
    block["kv_cache"].update({
        "gpu_usage_pct": fraction(gauge_stat(metrics, "sglang:token_usage")),
        "gpu_total_tokens": _count(sum_stat(metrics, "sglang:max_total_num_tokens", ("max", "avg", "total", "sum"))),
        "cpu_usage_pct": rate(host_used, host_total), "cpu_used_tokens": host_used, "cpu_total_tokens": host_total})
    block["tokens"].update({
        "prompt_total": _count(prompt), "generation_total": _count(generation),
        "prompt_by_source": {"gpu_cache_hit": device, "cpu_or_external_cache_hit": host,
                             "computed": sum_stat(metrics, "sglang:realtime_tokens",
                                                  keep=lambda s: _label(s, "mode") == "prefill_compute"),
                             "raw": by_source}})


def server_metrics(export: Mapping[str, Any] | None, records: Sequence[Mapping[str, Any]],
                   server_log: str | Sequence[str | None] | None, scraped: Mapping[str, float] | None = None,
                   ) -> tuple[dict[str, Any], list[str]]:
    """(`server_metrics`, warnings). `server_log`: the server log's text, or every worker log's of a deployment
    (their pools summed). `scraped`: this harness's `/metrics` counters after the run, used only when the export
    is absent."""
    found = export.get("metrics") if isinstance(export, Mapping) else None
    metrics: Metrics = found if isinstance(found, Mapping) else {}
    block = empty_block(bool(metrics), len(metrics))
    warnings: list[str] = []
    if metrics and any(name.startswith("sglang:") for name in metrics):
        _sglang(metrics, block)
    elif metrics:  # InferenceX refuses such an export; the row keeps the record-based totals
        warnings.append("server_metrics_export.json holds no sglang: metric; not read")
    else:
        warnings.append(MISSING_EXPORT)
        if scraped:
            usage = scraped.get("sglang:token_usage")
            block["cache"]["gpu_cache_hit_rate"] = scraped.get("sglang:cache_hit_rate")
            block["kv_cache"]["gpu_usage_pct"] = fraction(usage)
            warnings.append("server_metrics: cache hit rate and KV usage from one /metrics scrape after the run "
                            "(since server start), not from AIPerf's export")
    pool = kv_pool_tokens_summed([server_log] if server_log is None or isinstance(server_log, str) else server_log)
    if pool is not None:
        block["kv_cache"]["gpu_total_tokens"] = pool
    tokens = block["tokens"]
    if tokens["prompt_total"] is None:
        tokens["prompt_total"] = _record_sum(records, "input_sequence_length")
    if tokens["generation_total"] is None:
        tokens["generation_total"] = _record_sum(records, "output_sequence_length")
    tokens["requests_completed"] = len(records)
    return round_floats(block), warnings


def round_floats(obj: Any, places: int = ROW_DECIMALS) -> Any:
    """Every finite float in a JSON-like value rounded to `places` decimals, as InferenceX's aggregator rounds
    its rows (`aggregation_common.round_floats`); a rounded value of magnitude 1 or more with nothing after the
    point becomes an int, as there."""
    if isinstance(obj, float):
        if not math.isfinite(obj):
            return obj
        rounded = round(obj, places)
        return int(rounded) if abs(rounded) >= 1 and rounded.is_integer() else rounded
    if isinstance(obj, dict):
        return {key: round_floats(value, places) for key, value in obj.items()}
    if isinstance(obj, list):
        return [round_floats(value, places) for value in obj]
    return obj
