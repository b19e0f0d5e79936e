"""A point's series on one clock (seconds from the profiling window's start), built from what it kept. Pure.

- `phases`: the harness's phases (`status.json`), AIPerf's warm-up and profiling phases, the requested window and
  its grace, as bands;
- `client`: requests in flight (request start to end) and waiting (credit issued, not yet sent) at the client,
  from AIPerf's per-request records, as step series;
- `server`: the server's own `/metrics` as AIPerf scraped them, per 1 s timeslice (warm-up and profiling):
  running and queued requests, KV pool use, evicted tokens, prompt and cached tokens (device / host), and the
  measured prefix-cache hit rate of each slice;
- `batch_log`: SGLang's periodic `Prefill batch` / `Decode batch` lines where the server writes them;
- `requests`: one entry per request in InferenceX-app's request-timeline fields (source trace, conversation,
  worker, credit/start/end ns, TTFT, TPOT, ISL, OSL, phase, cancelled) plus its lane, outcome and cached tokens;
- `power`: per GPU, watts over time;
- `truth`: the simulator's own per-request log (arrival, admission, first and last token), where it kept one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.inspect.batch_log import parse_batch_log
from harness.inspect.clock import NS, Window, aiperf_phase_ranges
from harness.inspect.point_files import COUNTERS, GAUGES, PointFiles

_HARNESS_PHASES = (("launching", "server start"), ("loading", "server loading"), ("ready", "ready"),
                   ("warmup", "client start + warm-up"), ("profiling", "profiling"), ("draining", "drain"),
                   ("collecting", "teardown"))


def phase_bands(pf: PointFiles, w: Window) -> list[dict[str, Any]]:
    """Bands `{name, source, start_s, end_s}` in time order."""
    status = pf.status or {}
    marks = status.get("phases") or {}
    known = [(marks[k], label) for k, label in _HARNESS_PHASES if isinstance(marks.get(k), int)]
    known.sort()
    ended = status.get("ended_ns")
    bands = []
    for i, (start, label) in enumerate(known):
        end = known[i + 1][0] if i + 1 < len(known) else ended
        bands.append({"name": label, "source": "harness (status.json)", "start_s": w.s(start),
                      "end_s": None if not isinstance(end, int) else w.s(end)})
    for name, (start, end) in sorted(aiperf_phase_ranges(pf).items(), key=lambda kv: kv[1]):
        bands.append({"name": f"AIPerf {name}", "source": "AIPerf (server-metrics export)",
                      "start_s": w.s(start), "end_s": w.s(end)})
    requested = ((pf.record or {}).get("window_clock") or {}).get("requested_s")
    if isinstance(requested, (int, float)) and w.end_ns is not None:
        bands.append({"name": "requested window", "source": "the point's duration", "start_s": 0.0,
                      "end_s": float(requested)})
        if w.s(w.end_ns) > requested:
            bands.append({"name": "grace", "source": "AIPerf profiling end after the requested window",
                          "start_s": float(requested), "end_s": w.s(w.end_ns)})
    return bands


def _steps(intervals: Iterable[tuple[int, int]], w: Window) -> dict[str, list[float]]:
    """A step series of how many `[start, end)` intervals hold at each change: `{t, n}`."""
    events: list[tuple[int, int]] = []
    for start, end in intervals:
        if start > 0 and end >= start:
            events += [(start, 1), (end, -1)]
    events.sort()
    t: list[float] = []
    n: list[float] = []
    level = 0
    for i, (at, delta) in enumerate(events):
        level += delta
        if i + 1 < len(events) and events[i + 1][0] == at:
            continue
        t.append(w.s(at))
        n.append(level)
    return {"t": t, "n": n}


def _meta(r: dict[str, Any]) -> dict[str, Any]:
    m = r.get("metadata")
    return m if isinstance(m, dict) else {}


def _value(r: dict[str, Any], tag: str) -> float | None:
    entry = (r.get("metrics") or {}).get(tag)
    if isinstance(entry, dict) and isinstance(entry.get("value"), (int, float)) and not isinstance(entry["value"], bool):
        return float(entry["value"])
    return None


def client_series(pf: PointFiles, w: Window) -> dict[str, Any]:
    """Requests in flight and waiting at the client (step series from the per-request records)."""
    metas = [_meta(r) for r in pf.requests]
    flight = _steps(((int(m.get("request_start_ns") or 0), int(m.get("request_end_ns") or 0)) for m in metas), w)
    waiting = _steps(((int(m.get("credit_issued_ns") or 0), int(m.get("request_start_ns") or 0)) for m in metas
                      if m.get("credit_issued_ns")), w)
    return {"in_flight": flight, "waiting": waiting, "source": "AIPerf per-request records (profile_export.jsonl)"}


def request_timeline(pf: PointFiles, w: Window) -> list[dict[str, Any]]:
    """Every request, in start order: InferenceX-app's timeline fields, then ours (lane, outcome, cache)."""
    lanes: dict[str, int] = {}
    out = []
    for r in sorted(pf.requests, key=lambda r: int(_meta(r).get("request_start_ns") or 0)):
        m = _meta(r)
        lane_key = str(m.get("root_correlation_id") or m.get("x_correlation_id") or m.get("conversation_id") or "?")
        lane = lanes.setdefault(lane_key, len(lanes))
        ttft, e2el = _value(r, "time_to_first_token"), _value(r, "request_latency")
        error = r.get("error")
        out.append({
            "source_trace_id": m.get("source_trace_id"), "conversation_id": m.get("conversation_id"),
            "worker_id": m.get("worker_id"), "credit_issued_ns": m.get("credit_issued_ns"),
            "request_start_ns": m.get("request_start_ns"), "request_end_ns": m.get("request_end_ns"),
            "ttft_ms": ttft, "tpot_ms": _value(r, "inter_token_latency"),
            "isl": _value(r, "input_sequence_length"), "osl": _value(r, "output_sequence_length"),
            "phase": m.get("benchmark_phase"), "cancelled": bool(m.get("was_cancelled")),
            "request_id": m.get("x_request_id"), "lane": lane, "e2el_ms": e2el,
            "ok": not error and e2el is not None,
            "error": None if not error else str((error.get("type") or error.get("code")) if isinstance(error, dict)
                                                else error)[:80],
            "cached_tokens": _value(r, "usage_prompt_cache_read_tokens"),
            "start_s": w.s(int(m.get("request_start_ns") or w.start_ns)),
            "end_s": w.s(int(m.get("request_end_ns") or m.get("request_start_ns") or w.start_ns)),
        })
    return out


def _metric(export: dict[str, Any], section: str, name: str) -> dict[str, Any] | None:
    metrics = export.get(section) or {}
    for key in (f"sglang:{name}", f"sglang:{name}_total"):
        metric = metrics.get(key)
        if isinstance(metric, dict):
            return metric
    return None


def _slices(export: dict[str, Any], name: str, label: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """The timeslices of one metric (warm-up then profiling), summed over its series (or those with `label`)."""
    merged: dict[int, dict[str, Any]] = {}
    for section in ("warmup_metrics", "metrics"):
        metric = _metric(export, section, name)
        for series in (metric or {}).get("series") or []:
            labels = series.get("labels") or {}
            if label is not None and labels.get(label[0]) != label[1]:
                continue
            for ts in series.get("timeslices") or []:
                start = ts.get("start_ns")
                if not isinstance(start, int):
                    continue
                slot = merged.setdefault(start, {"start_ns": start, "end_ns": ts.get("end_ns")})
                for k in ("avg", "max", "min", "total"):
                    if isinstance(ts.get(k), (int, float)):
                        slot[k] = slot.get(k, 0.0) + float(ts[k])
    return [merged[k] for k in sorted(merged)]


def server_series(pf: PointFiles, w: Window) -> dict[str, Any] | None:
    """The server's /metrics per timeslice: `{t, <metric>: {avg, max} or total}`; None without timeslices."""
    export = pf.server_metrics
    if not export:
        return None
    columns: dict[str, dict[int, Any]] = {}
    for name in GAUGES:
        columns[name] = {s["start_ns"]: {"avg": s.get("avg"), "max": s.get("max")} for s in _slices(export, name)}
    for name in COUNTERS:
        columns[name] = {s["start_ns"]: s.get("total") for s in _slices(export, name)}
    for source in ("device", "host"):
        columns[f"cached_tokens_{source}"] = {s["start_ns"]: s.get("total")
                                              for s in _slices(export, "cached_tokens", ("cache_source", source))}
    columns["prefill_compute_tokens"] = {s["start_ns"]: s.get("total") for s in
                                         _slices(export, "realtime_tokens", ("mode", "prefill_compute"))}
    starts = sorted({k for col in columns.values() for k in col})
    if not starts:
        return None
    out: dict[str, Any] = {"t": [w.s(s) for s in starts], "slice_s": _slice_s(export),
                           "source": "the server's /metrics, scraped by AIPerf (server_metrics_export.json timeslices)"}
    for name, col in columns.items():
        if col:
            out[name] = [col.get(s) for s in starts]
    prompt = out.get("prompt_tokens") or [None] * len(starts)
    parts = {src: out.get(f"cached_tokens_{src}") or [None] * len(starts) for src in ("device", "host")}
    for name, sources in (("hit_rate", ("device", "host")), ("hit_rate_device", ("device",)),
                          ("hit_rate_host", ("host",))):
        out[name] = [None if not prompt[i] else round(sum(parts[src][i] or 0.0 for src in sources) / prompt[i], 6)
                     for i in range(len(starts))]
    return out


def _slice_s(export: dict[str, Any]) -> float | None:
    for section in ("metrics", "warmup_metrics"):
        for metric in (export.get(section) or {}).values():
            for series in (metric or {}).get("series") or []:
                for ts in series.get("timeslices") or []:
                    if isinstance(ts.get("start_ns"), int) and isinstance(ts.get("end_ns"), int):
                        return float((ts["end_ns"] - ts["start_ns"]) / NS)
    return None


def batch_log_series(pf: PointFiles, w: Window) -> dict[str, Any] | None:
    """SGLang's periodic batch lines as columns; None where the log has none."""
    lines = parse_batch_log(pf.server_log or "")
    if not lines:
        return None
    return {"t": [w.s(x.time_ns) for x in lines], "kind": [x.kind for x in lines],
            "running_req": [x.running_req for x in lines], "queue_req": [x.queue_req for x in lines],
            "token_usage": [x.token_usage for x in lines], "accept_len": [x.accept_len for x in lines],
            "cached_token": [x.cached_token for x in lines], "new_token": [x.new_token for x in lines],
            "gen_throughput": [x.gen_throughput for x in lines],
            "source": "SGLang's Prefill batch / Decode batch lines (server.log; 1 s timestamps)"}


def power_series(pf: PointFiles, w: Window) -> dict[str, Any] | None:
    """Per GPU `{t, w}`; None without samples."""
    if not pf.power:
        return None
    gpus: dict[str, dict[str, list[float]]] = {}
    for s in sorted(pf.power, key=lambda s: s.timestamp_ns):
        g = gpus.setdefault(s.gpu_key, {"t": [], "w": []})
        g["t"].append(w.s(s.timestamp_ns))
        g["w"].append(s.power_w)
    return {"gpus": gpus, "source": "NVML samples (power.csv)"}


def truth_series(pf: PointFiles, w: Window) -> list[dict[str, Any]] | None:
    """The simulator's per-request truth (seconds on the window's clock), labelled as the simulator's."""
    if not pf.truth:
        return None
    out = []
    for t in pf.truth:
        arrival, admitted = t.get("arrival_ns"), t.get("admitted_ns")
        first, last = t.get("first_token_sent_ns"), t.get("last_token_sent_ns")
        if not isinstance(arrival, int):
            continue
        out.append({"request_id": t.get("request_id"), "status": t.get("status"), "arrival_s": w.s(arrival),
                    "queue_s": None if not isinstance(admitted, int) else (admitted - arrival) / NS,
                    "prefill_s": None if not (isinstance(admitted, int) and isinstance(first, int))
                    else (first - admitted) / NS,
                    "decode_s": None if not (isinstance(first, int) and isinstance(last, int)) else (last - first) / NS,
                    "prompt_tokens": t.get("prompt_tokens"), "cached_tokens": t.get("cached_tokens")})
    return out
