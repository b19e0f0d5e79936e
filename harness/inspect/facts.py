"""The measured quantities a point's findings rest on, each with its sample size and source. Pure.

Every fact is `{value, n, source}` (plus what the value is made of), or absent from the dict when the point kept
nothing to measure it from (`missing` says why). Windows are the profiling window: timeslices that start inside
it, requests AIPerf profiled.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from statistics import fmean
from typing import Any

from harness.inspect.clock import AIPERF_PHASE, NS, Window
from harness.inspect.point_files import PointFiles
from harness.power.inferencex_window import aiperf_window_ns
from harness.power.reasons import DESCRIPTIONS
from harness.vocabulary import TOTAL_PER_GPU

POOL_FULL = 0.95   # a slice whose pool use peaks at or above this share counts as full


def _in_window(server: dict[str, Any], w: Window) -> list[int]:
    end = None if w.end_ns is None else w.s(w.end_ns)
    return [i for i, t in enumerate(server["t"]) if t >= 0 and (end is None or t < end)]


def _column(server: dict[str, Any], name: str, idx: list[int], stat: str | None = None) -> list[float]:
    col = server.get(name) or []
    out = []
    for i in idx:
        v = col[i] if i < len(col) else None
        if stat is not None and isinstance(v, dict):
            v = v.get(stat)
        if isinstance(v, (int, float)):
            out.append(float(v))
    return out


def server_facts(server: dict[str, Any] | None, w: Window, missing: dict[str, str]) -> dict[str, Any]:
    if server is None:
        missing["server"] = "no /metrics timeslices (the server exposed no metrics, or AIPerf kept no timeslices)"
        return {}
    idx = _in_window(server, w)
    src = server["source"]
    facts: dict[str, Any] = {}
    usage = _column(server, "token_usage", idx, "max")
    if usage:
        full = sum(1 for u in usage if u >= POOL_FULL)
        capacity = _column(server, "max_total_num_tokens", idx, "max")
        facts["pool_full_share"] = {"value": full / len(usage), "full_slices": full, "n": len(usage),
                                    "threshold": POOL_FULL, "peak_usage": max(usage),
                                    "capacity_tokens": int(max(capacity)) if capacity else None,
                                    "source": f"sglang:token_usage max per slice ({src})"}
    evicted = _column(server, "evicted_tokens", idx)
    if evicted:
        facts["evicted_tokens"] = {"value": sum(evicted), "n": len(evicted),
                                   "source": f"sglang:evicted_tokens per slice ({src})"}
    prompt = _column(server, "prompt_tokens", idx)
    cached = {s: _column(server, f"cached_tokens_{s}", idx) for s in ("device", "host")}
    if prompt and sum(prompt) > 0 and (cached["device"] or cached["host"]):
        total = sum(prompt)
        facts["hit_rate"] = {"value": (sum(cached["device"]) + sum(cached["host"])) / total,
                             "device": sum(cached["device"]) / total, "host": sum(cached["host"]) / total,
                             "prompt_tokens": total, "n": len(prompt),
                             "source": f"sglang:cached_tokens / sglang:prompt_tokens over the window ({src})"}
    queued = _column(server, "num_queue_reqs", idx, "max")
    if queued:
        facts["server_queue_share"] = {"value": sum(1 for q in queued if q > 0) / len(queued),
                                       "peak": max(queued),
                                       "mean": fmean(_column(server, "num_queue_reqs", idx, "avg") or [0.0]),
                                       "n": len(queued), "source": f"sglang:num_queue_reqs per slice ({src})"}
    running = _column(server, "num_running_reqs", idx, "avg")
    if running:
        facts["server_running_mean"] = {"value": fmean(running), "n": len(running),
                                        "source": f"sglang:num_running_reqs per slice ({src})"}
    return facts


def client_facts(pf: PointFiles, requests: list[dict[str, Any]], w: Window) -> dict[str, Any]:
    record = pf.record or {}
    profiled = [r for r in requests if r["phase"] == "profiling"]
    ok = [r for r in profiled if r["ok"]]
    facts: dict[str, Any] = {"requests": {"value": len(ok), "n": len(profiled), "errors": len(profiled) - len(ok),
                                          "source": "AIPerf per-request records"}}
    theory = (pf.summary or {}).get("theoretical_prefix_cache_hit")
    if isinstance(theory, dict) and isinstance(theory.get("avg"), (int, float)):
        scale = 100.0 if theory.get("unit") == "%" else 1.0
        facts["theoretical_hit_rate"] = {"value": float(theory["avg"]) / scale, "n": theory.get("count"),
                                         "source": "the trace's theoretical prefix-cache hit rate "
                                                   "(AIPerf summary theoretical_prefix_cache_hit)"}
    isl = sum(r["isl"] or 0 for r in ok)
    if isl > 0 and any(r["cached_tokens"] is not None for r in ok):
        facts["client_hit_rate"] = {"value": sum(r["cached_tokens"] or 0 for r in ok) / isl, "n": len(ok),
                                    "prompt_tokens": isl,
                                    "source": "usage.prompt_tokens_details.cached_tokens / ISL of each profiled "
                                              "request (AIPerf records)"}
    warm_late = [r for r in requests if r["phase"] == "warmup" and r["end_s"] > 0]
    facts["warmup_in_window"] = {"value": len(warm_late), "n": sum(1 for r in requests if r["phase"] == "warmup"),
                                 "last_end_s": max((r["end_s"] for r in warm_late), default=None),
                                 "source": "warm-up records ending after the window opened (AIPerf records)"}
    achieved = (record.get("achieved_concurrency") or {}).get("sessions")
    if isinstance(achieved, (int, float)) and record.get("conc"):
        facts["achieved_concurrency"] = {"value": float(achieved), "target": int(record["conc"]), "n": len(ok),
                                         "source": "point_result.json achieved_concurrency.sessions"}
    accounting = record.get("request_accounting") or {}
    if isinstance(accounting.get("cancelled_at_cutoff"), int):
        facts["cancelled_at_cutoff"] = {"value": accounting["cancelled_at_cutoff"], "n": len(profiled),
                                        "source": accounting.get("cancelled_at_cutoff_source") or "record"}
    metrics = record.get("request_metrics") or {}
    tput = ((metrics.get("throughput") or {}).get("per_gpu") or {}).get("total_tput_tps")
    if isinstance(tput, (int, float)):
        facts["throughput_per_gpu"] = {"value": float(tput), "n": len(ok),
                                       "source": f"point_result.json request_metrics ({TOTAL_PER_GPU})"}
    for metric in ("ttft", "e2el"):
        stats = (metrics.get("latency") or {}).get(metric) or {}
        for p in ("p50", "p90"):
            if isinstance(stats.get(p), (int, float)):
                facts[f"{metric}_{p}"] = {"value": float(stats[p]), "n": len(ok),
                                          "source": "point_result.json request_metrics"}
    return facts


def power_facts(pf: PointFiles, w: Window, missing: dict[str, str]) -> dict[str, Any]:
    """Whether the samples bracket AIPerf's window, and the offset between AIPerf's summary window (naive local time,
    as InferenceX's power integration reads it) and the window on the records' UTC clock."""
    facts: dict[str, Any] = {}
    if pf.power and w.end_ns is not None:
        by_gpu: dict[str, list[int]] = {}
        for s in pf.power:
            by_gpu.setdefault(s.gpu_key, []).append(s.timestamp_ns)
        unbracketed = sorted(g for g, ts in by_gpu.items() if min(ts) > w.start_ns or max(ts) < w.end_ns)
        first, last = min(min(ts) for ts in by_gpu.values()), max(max(ts) for ts in by_gpu.values())
        facts["power_bracketing"] = {"value": not unbracketed, "unbracketed_gpus": unbracketed, "n": len(by_gpu),
                                     "first_sample_s": w.s(first), "last_sample_s": w.s(last),
                                     "source": "power.csv against AIPerf's profiling window"}
    elif not pf.power:
        missing["power"] = pf.absent.get("power", "no power samples")
    record = pf.record or {}
    ours = [str(r) for r in record.get("power_invalid_reasons") or []]
    theirs = [str(r) for r in (record.get("power_inferencex") or {}).get("reasons") or []]
    if pf.power and (ours or theirs):
        facts["power_withheld"] = {"value": len(set(ours) | set(theirs)), "ours": ours, "inferencex": theirs,
                                   "n": len(pf.power),
                                   "descriptions": {r: DESCRIPTIONS[r] for r in ours if r in DESCRIPTIONS},
                                   "source": "point_result.json power_invalid_reasons and power_inferencex.reasons"}
    tz = _naive_tz(pf)
    summary_window = aiperf_window_ns(pf.summary, tz)
    if not w.source.startswith(AIPERF_PHASE):
        missing["power_clock_offset"] = ("AIPerf's profiling window on the UTC clock is not known (no server-metrics "
                                         "export): the summary's naive times have nothing to be checked against")
    elif summary_window is not None and w.end_ns is not None:
        offset = (summary_window[0] - w.start_ns) / NS
        span = (w.end_ns - w.start_ns) / NS
        facts["power_clock_offset"] = {
            "value": offset, "bound_s": max(0.5, 0.01 * span), "n": 2,
            "naive_tz": str(tz) if tz else "this machine's zone",
            "source": "AIPerf summary start_time (naive local, the power window InferenceX integrates) minus "
                      "AIPerf's profiling start on the UTC clock (server-metrics export)"}
    return facts


def _naive_tz(pf: PointFiles) -> timezone | None:
    """The zone AIPerf's naive times are in, where the point kept InferenceX's offset file."""
    path = pf.point_dir / "agentic_power_timezone_offset.txt"
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-").replace(":", "")
    if len(digits) != 4 or not digits.isdigit():
        return None
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))


def utc_text(ns: int) -> str:
    return datetime.fromtimestamp(ns / NS, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
