"""Where a point's request time went: queue wait, prefill, decode, and the client's own share. Pure.

Two sources, each named in the output, each absent with a reason where the server does not give it:
- the server's histograms over the profiling phase (SGLang's `queue_time_seconds`, `time_to_first_token_seconds`,
  `e2e_request_latency_seconds`, as AIPerf's server-metrics export sums them): mean queue wait; prefill = mean
  server TTFT - mean queue wait; decode = mean server E2E - mean server TTFT; the client's share = the client's mean
  E2EL - the server's mean E2E (sending, network, stream parsing). Means of different request sets (the server
  counts what finished in the phase, the client what it profiled), so each part names its count;
- the simulator's truth log, joined to the client's records on the request id: the same parts per request
  (queue = admitted - arrival, prefill = first token sent - admitted, decode = last token sent - first, client =
  the client's E2EL - (last token sent - arrival)). The simulator's ground truth, labelled as such.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from harness.inspect.point_files import HISTOGRAMS

_HISTOGRAMS = dict(zip(("queue", "ttft", "e2e"), HISTOGRAMS, strict=True))


def _hist_mean(export: dict[str, Any], name: str) -> tuple[float, int] | None:
    metrics = export.get("metrics") or {}
    metric = metrics.get(f"sglang:{name}")
    if not isinstance(metric, dict):
        return None
    total, count = 0.0, 0
    for series in metric.get("series") or []:
        stats = series.get("stats") or {}
        if isinstance(stats.get("sum"), (int, float)) and isinstance(stats.get("count"), (int, float)):
            total += float(stats["sum"])
            count += int(stats["count"])
    return (total / count, count) if count else None


def _part(name: str, mean_s: float, n: int, source: str) -> dict[str, Any]:
    return {"part": name, "mean_s": round(mean_s, 6), "n": n, "source": source}


def from_server(export: dict[str, Any] | None, client_e2el_s: list[float]) -> dict[str, Any]:
    """The parts from the server's histograms, or `{reason}`."""
    if not export:
        return {"reason": "no server-metrics export: the server's /metrics was not scraped"}
    means = {k: _hist_mean(export, v) for k, v in _HISTOGRAMS.items()}
    missing = [f"sglang:{_HISTOGRAMS[k]}" for k, v in means.items() if v is None]
    if missing:
        return {"reason": f"the server exposes no {', '.join(missing)} over the profiling phase"}
    queue, ttft, e2e = (means[k] for k in ("queue", "ttft", "e2e"))
    assert queue and ttft and e2e
    src = "server histograms (server_metrics_export.json, profiling phase)"
    parts = [_part("queue wait", queue[0], queue[1], f"sglang:queue_time_seconds mean ({src})"),
             _part("prefill", max(0.0, ttft[0] - queue[0]), ttft[1],
                   "sglang:time_to_first_token_seconds mean - queue wait"),
             _part("decode", max(0.0, e2e[0] - ttft[0]), e2e[1],
                   "sglang:e2e_request_latency_seconds mean - time_to_first_token mean")]
    if client_e2el_s:
        parts.append(_part("client", fmean(client_e2el_s) - e2e[0], len(client_e2el_s),
                           "the client's mean E2EL (AIPerf records) - the server's mean E2E"))
    return _with_shares({"source": src, "parts": parts})


def from_truth(truth: list[dict[str, Any]] | None, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Per request and in aggregate from the simulator's truth joined to the profiled requests, or `{reason}`."""
    if not truth:
        return {"reason": "no simulator truth log for this point"}
    by_id = {t["request_id"]: t for t in truth if t.get("request_id")}
    rows = []
    for r in requests:
        t = by_id.get(r.get("request_id"))
        if r.get("phase") != "profiling" or not r.get("ok") or t is None or None in (
                t.get("queue_s"), t.get("prefill_s"), t.get("decode_s")):
            continue
        server_e2e = t["queue_s"] + t["prefill_s"] + t["decode_s"]
        rows.append({"request_id": r["request_id"], "start_s": r["start_s"], "queue_s": round(t["queue_s"], 6),
                     "prefill_s": round(t["prefill_s"], 6), "decode_s": round(t["decode_s"], 6),
                     "client_s": round(r["e2el_ms"] / 1e3 - server_e2e, 6)})
    if not rows:
        return {"reason": "no profiled request of the client matched the simulator's truth log"}
    src = "simulator ground truth (sim_truth.jsonl), joined on X-Request-ID"
    parts = [_part(name, fmean(row[key] for row in rows), len(rows), src)
             for name, key in (("queue wait", "queue_s"), ("prefill", "prefill_s"), ("decode", "decode_s"),
                               ("client", "client_s"))]
    return {**_with_shares({"source": src, "parts": parts}), "per_request": rows}


def _with_shares(split: dict[str, Any]) -> dict[str, Any]:
    total = sum(max(0.0, p["mean_s"]) for p in split["parts"])
    for p in split["parts"]:
        p["share"] = None if total <= 0 else round(max(0.0, p["mean_s"]) / total, 4)
    return split
