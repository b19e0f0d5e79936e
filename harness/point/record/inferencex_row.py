"""The published row: one InferenceX AgentX single-node row (`bmk_agentic_<config_key>_conc<N>.json`).

The row follows InferenceX's result contract (`AgentXSingleNodeRow` in `infx/results/schema/models.py`)
exactly: its fields, types and semantics, no extra key except InferenceX's power-metric keys. Its
`request_metrics` and `server_metrics` are built as InferenceX's agentic aggregator builds them from the
same AIPerf files (statistics mean/p50/p75/p90/p95/std with linear interpolation and population std; the
throughput window is first successful request start → last successful request end). Everything the
contract has no place for (state, validity, p99, achieved concurrency, overrides, ...) stays in our own
record, `point_result.json`. Pure functions over parsed inputs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.point.record import inferencex_server_metrics

RESULT_SCHEMA_VERSION = 1
POWER_METRIC_SCHEMA_VERSION = 2
SIM_HW = "sim"
# InferenceX's power-metric keys (`infx.results.power.ALL_POWER_METRIC_KEYS`): the only extra keys a row may have.
POWER_METRIC_KEYS = (
    "avg_power_w", "p75_power_w", "p75_total_gpu_power_w", "p90_power_w", "p90_total_gpu_power_w",
    "avg_total_gpu_power_w", "total_gpu_energy_j", "joules_per_successful_query", "joules_per_input_token",
    "joules_per_output_token", "joules_per_total_token", "prefill_gpu_energy_j", "decode_gpu_energy_j",
    "prefill_avg_power_w", "decode_avg_power_w", "prefill_joules_per_input_token",
    "decode_joules_per_output_token",
)


def percentile(data: list[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default, InferenceX's `percentile`)."""
    if not data:
        return 0.0
    s = sorted(data)
    k = (len(s) - 1) * (p / 100)
    f = int(k)
    if f + 1 >= len(s):
        return s[f]
    return s[f] + (k - f) * (s[f + 1] - s[f])


def stats_block(values: list[float]) -> dict[str, float]:
    """mean, p50, p75, p90, p95, std (population) — InferenceX's agentic statistic set; {} when empty."""
    if not values:
        return {}
    out = {"mean": statistics.mean(values)}
    for p in (50, 75, 90, 95):
        out[f"p{p}"] = percentile(values, p)
    out["std"] = statistics.pstdev(values) if len(values) > 1 else 0.0
    return out


def _value(record: Mapping[str, Any], key: str) -> float | None:
    metric = (record.get("metrics") or {}).get(key)
    return inferencex_server_metrics.as_float(metric.get("value") if isinstance(metric, Mapping) else metric)


def _seconds(records: list[Mapping[str, Any]], key: str) -> list[float]:
    out = []
    for r in records:
        v = _value(r, key)
        if v is not None and math.isfinite(v) and v > 0:
            out.append(v / 1000.0)
    return out


def _ints(records: list[Mapping[str, Any]], key: str) -> list[int]:
    return [int(v) for v in (_value(r, key) for r in records) if v is not None]


def _inverted(itl: dict[str, float], per_request: list[float]) -> dict[str, float]:
    """Slow-tail interactivity: 1/statistic of the latency block; std of the per-request inverses."""
    out = {k: 1.0 / v for k, v in itl.items() if k != "std" and v > 0}
    inv = [1.0 / v for v in per_request if v > 0]
    if inv:
        out["std"] = statistics.pstdev(inv) if len(inv) > 1 else 0.0
    return out


def split_records(raw: Iterable[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
    """Successful profiled records and InferenceX's request accounting.

    records_total counts every record (warmup and errors included); a record is dropped when it is a
    warmup record or carries an error; records_profiled are the records kept.
    """
    kept: list[Mapping[str, Any]] = []
    acc: dict[str, Any] = {"records_total": 0, "records_profiled": 0, "records_dropped_total": 0,
                           "records_warmup_dropped": 0, "records_error_dropped": 0, "error_categories": {}}
    for r in raw:
        acc["records_total"] += 1
        phase = (r.get("metadata") or {}).get("benchmark_phase")
        warmup = phase is not None and phase != "profiling"
        error = r.get("error")
        if warmup:
            acc["records_warmup_dropped"] += 1
        if error:
            acc["records_error_dropped"] += 1
            cat = error_category(error)
            acc["error_categories"][cat] = acc["error_categories"].get(cat, 0) + 1
        if not (error or warmup):
            kept.append(r)
    acc["records_profiled"] = len(kept)
    acc["records_dropped_total"] = acc["records_total"] - len(kept)
    return kept, acc


def error_category(error: Any) -> str:
    if isinstance(error, Mapping):
        for key in ("type", "error_type", "code", "class", "status"):
            if error.get(key) not in (None, ""):
                return str(error[key])
        message = error.get("message") or error.get("error")
    else:
        message = error
    text = str(message or "").strip()
    if not text:
        return "unknown"
    return (text.splitlines()[0].split(":", 1)[0] or "unknown")[:120]


def _qps(records: list[Mapping[str, Any]]) -> dict[str, Any]:
    ends = sorted(int(r["metadata"]["request_end_ns"]) / 1e9 for r in records
                  if (r.get("metadata") or {}).get("request_end_ns"))
    if len(ends) < 2 or ends[-1] - ends[0] <= 0:
        return {}
    values, current = [], ends[0]
    while current + 1.0 <= ends[-1]:
        values.append(float(sum(1 for t in ends if current <= t < current + 1.0)))
        current += 1.0
    block = stats_block(values) if values else {"mean": len(ends) / (ends[-1] - ends[0])}
    return {"window_seconds": 1.0, "samples": len(values), **block}


def request_metrics(records: list[Mapping[str, Any]], num_gpus: int,
                    theoretical_cache_hit_rate: float | None) -> dict[str, Any]:
    """InferenceX's nested `request_metrics` over the successful profiled records."""
    itls = _seconds(records, "inter_token_latency")
    full_itls = _seconds(records, "full_response_inter_token_latency")
    itl = stats_block(itls)
    full_itl = stats_block(full_itls)
    norm = []
    for r in records:
        e2el, osl = _value(r, "request_latency"), _value(r, "output_sequence_length")
        if e2el is not None and osl is not None and e2el > 0 and osl > 0:
            norm.append(e2el / 1000.0 / osl)
    latency = {
        "ttft": stats_block(_seconds(records, "time_to_first_token")),
        "e2el": stats_block(_seconds(records, "request_latency")),
        "itl": itl, "tpot": dict(itl), "intvty": _inverted(itl, itls),
        "e2e_norm_intvty": _inverted(stats_block(norm), norm),
        "full_response_itl": full_itl, "full_response_intvty": _inverted(full_itl, full_itls),
    }
    tin, tout = _ints(records, "input_sequence_length"), _ints(records, "output_sequence_length")
    tokens = {"input": stats_block([float(v) for v in tin]),
              "output_actual": stats_block([float(v) for v in tout]), "output_expected": {}}
    out: dict[str, Any] = {"qps": _qps(records), "latency": latency, "tokens": tokens,
                           "throughput": {}, "cache": {"theoretical_cache_hit_rate": theoretical_cache_hit_rate}}
    starts = [int(r["metadata"]["request_start_ns"]) for r in records
              if (r.get("metadata") or {}).get("request_start_ns")]
    ends = [int(r["metadata"]["request_end_ns"]) for r in records if (r.get("metadata") or {}).get("request_end_ns")]
    if starts and ends and (max(ends) - min(starts)) > 0:
        duration = (max(ends) - min(starts)) / 1e9
        i, o = sum(tin) / duration, sum(tout) / duration
        out["throughput"] = {
            "input": {"tokens_per_second": i}, "output": {"tokens_per_second": o},
            "total": {"tokens_per_second": i + o}, "duration_seconds": duration,
            "per_gpu": {"total_tput_tps": (i + o) / num_gpus, "output_tput_tps": o / num_gpus,
                        "input_tput_tps": i / num_gpus},
        }
    return out


def theoretical_cache_hit_rate(summary: Mapping[str, Any] | None) -> float | None:
    """AIPerf's `theoretical_prefix_cache_hit` (hit blocks / blocks, or its average percentage) as a rate."""
    metric = (summary or {}).get("theoretical_prefix_cache_hit")
    if not isinstance(metric, Mapping):
        return None
    hits, total = metric.get("sum"), metric.get("count")
    if isinstance(hits, (int, float)) and isinstance(total, (int, float)) and total > 0:
        return float(hits) / float(total)
    avg = metric.get("avg")
    if not isinstance(avg, (int, float)):
        return None
    return float(avg) / 100.0 if str(metric.get("unit", "")).strip() == "%" else float(avg)


def spec_decoding(args: Mapping[str, Any]) -> str:
    """InferenceX's label: `mtp` (the model's own MTP/NEXTN heads), `draft_model` (a separate draft), `none`."""
    algorithm = args.get("speculative-algorithm")
    if not algorithm:
        return "none"
    if str(algorithm).upper() == "NEXTN" or not args.get("speculative-draft-model-path"):
        return "mtp"
    return "draft_model"


def rounded_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row with InferenceX's rounding: the aggregate's floats to 5 places; the power keys, which InferenceX's
    power step adds after that rounding, as `power_metrics` rounds them."""
    return {key: value if key in POWER_METRIC_KEYS else inferencex_server_metrics.round_floats(value)
            for key, value in row.items()}


def power_metrics(power: Mapping[str, Any]) -> dict[str, Any]:
    """InferenceX's power keys from the record's `power_inferencex` block (InferenceX's window and method):
    `power_valid` 1/0, schema 2, the metrics only when valid, rounded as InferenceX rounds them."""
    out: dict[str, Any] = {"power_metric_schema_version": POWER_METRIC_SCHEMA_VERSION,
                           "power_valid": 1 if power.get("valid") else 0}
    metrics = power.get("metrics") or {}
    if not out["power_valid"] or not metrics:
        out["power_valid"] = 0
        return out
    for key, value in metrics.items():
        if key in POWER_METRIC_KEYS and isinstance(value, (int, float)) and math.isfinite(value):
            out[key] = round(value, 3 if key.endswith(("_w", "_j")) else 6)
    return out


def build_row(*, identity: Mapping[str, Any], raw_records: Sequence[Mapping[str, Any]],
              summary: Mapping[str, Any] | None, server_log: str | Sequence[str | None] | None,
              counters: Mapping[str, float] | None, power: Mapping[str, Any] | None,
              server_metrics_export: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The AgentX row. `identity` carries hw, conc, image, recipe_fingerprint, model, infmax_model_prefix,
    framework, precision, spec_decoding, tp, ep, pp, dcp_size, pcp_size, dp_attention (bool), kv_offloading,
    kv_offload_backend, allocated_cpu_dram_gb, and `num_gpus` where it is not tp x pp x pcp (a deployment's, summed
    over its workers). `server_log`: the server log's text, or every worker log's of a deployment (the KV pool is
    their pools summed)."""
    records, accounting = split_records(raw_records)
    num_gpus = int(identity.get("num_gpus") or int(identity["tp"]) * int(identity["pp"]) * int(identity["pcp_size"]))
    server, warnings = inferencex_server_metrics.server_metrics(server_metrics_export, records, server_log, counters)
    pool = server["kv_cache"]["gpu_total_tokens"]
    if pool is None:
        warnings.append("kv_cache_pool_tokens: no max_total_num_tokens= line in the server log or /metrics")
    row: dict[str, Any] = {
        "result_schema_version": RESULT_SCHEMA_VERSION,
        "hw": identity["hw"], "conc": int(identity["conc"]), "image": identity["image"],
        "recipe_fingerprint": identity["recipe_fingerprint"], "model": identity["model"],
        "infmax_model_prefix": identity["infmax_model_prefix"], "framework": identity["framework"],
        "precision": identity["precision"], "spec_decoding": identity["spec_decoding"],
        "disagg": False, "scenario_type": "agentic-coding", "is_multinode": False,
        "num_gpus": num_gpus, "tp": int(identity["tp"]), "ep": int(identity["ep"]),
        "dp_attention": "true" if identity["dp_attention"] else "false",
        "kv_offloading": identity["kv_offloading"], "kv_offload_backend": identity["kv_offload_backend"],
        "allocated_cpu_dram_gb": int(identity["allocated_cpu_dram_gb"]),
        "num_requests_total": accounting["records_total"],
        "num_requests_successful": len(records),
        "request_accounting": accounting,
        "pp": int(identity["pp"]), "dcp_size": int(identity["dcp_size"]), "pcp_size": int(identity["pcp_size"]),
    }
    dataset = ((summary or {}).get("metadata") or {}).get("dataset")
    if isinstance(dataset, dict):
        row["dataset"] = dataset
    row["request_metrics"] = request_metrics(records, num_gpus, theoretical_cache_hit_rate(summary))
    row["server_metrics"] = server
    row["kv_cache_pool_tokens"] = pool
    row = inferencex_server_metrics.round_floats(row)   # InferenceX rounds the aggregate, then its power step adds the power keys
    if power is not None:
        row.update(power_metrics(power))
    if warnings:
        row["warnings"] = warnings
    return row
