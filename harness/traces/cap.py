"""The context-capped variant of a corpus (like the public 256k corpus): fit every call under a cap.

* Every API call (root or subagent, any depth) with in + out above the cap is dropped. A subagent left
  without calls is dropped with its marker; a trace left without calls is dropped.
* Time: the busy time of each dropped call, [t, t + api_time], is cut out of its trace's timeline
  (overlapping cuts merge, a call without `api_time` cuts nothing). A time after a cut moves earlier
  by the cut's length; a time inside a cut moves to the cut's start. Every later timestamp of the
  trace, in every conversation, shifts by the same amount, so the spacing of what follows a cut and
  the overlap of subagents with their parent survive. Subagent spawn times move the same way and a
  subagent's `duration_ms` is the distance between its moved spawn and its moved end.
* Everything else is copied as recorded (think times, `totals`, subagent token and tool counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.traces.schema import Corpus, Trace, walk_calls


@dataclass(frozen=True)
class CapSummary:
    total_requests: int
    dropped_requests: int
    dropped_subagents: int
    dropped_traces: int


def merge_cuts(cuts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Merge overlapping [start, end] intervals; empty ones are ignored."""
    merged: list[tuple[float, float]] = []
    for start, end in sorted(c for c in cuts if c[1] > c[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def warp(t: float, cuts: list[tuple[float, float]]) -> float:
    """`t` on the timeline with the (merged, sorted) cuts removed."""
    removed = 0.0
    for start, end in cuts:
        if t <= start:
            break
        if t < end:
            return round(start - removed, 6)
        removed += end - start
    return round(t - removed, 6)


def _too_big(item: dict[str, Any], cap: int) -> bool:
    return int(item["in"]) + int(item["out"]) > cap


def _rebuild(items: list[dict[str, Any]], cap: int, cuts: list[tuple[float, float]]) -> tuple[list[dict[str, Any]], int]:
    """Kept items with warped times, and the number of subagents dropped on the way."""
    kept: list[dict[str, Any]] = []
    dropped_subagents = 0
    for item in items:
        if item["type"] == "subagent":
            inner, dropped = _rebuild(item["requests"], cap, cuts)
            dropped_subagents += dropped
            if not inner:
                dropped_subagents += 1
                continue
            new = {**item, "requests": inner, "t": warp(item["t"], cuts)}
            if item.get("duration_ms") is not None:
                end = item["t"] + item["duration_ms"] / 1000
                new["duration_ms"] = round((warp(end, cuts) - new["t"]) * 1000)
            kept.append(new)
        elif not _too_big(item, cap):
            kept.append({**item, "t": warp(item["t"], cuts)})
    return kept, dropped_subagents


def cap_trace(trace: Trace, max_context: int) -> tuple[Trace | None, int, int]:
    """(capped trace or None when nothing is left, calls dropped, subagents dropped)."""
    dropped = [loc.request for loc in walk_calls(trace)
               if loc.request.input_tokens + loc.request.output_tokens > max_context]
    if not dropped:
        return trace, 0, 0
    cuts = merge_cuts([(r.t, r.t + r.api_time) for r in dropped if r.api_time is not None])
    raw = trace.to_json_dict()
    requests, dropped_subagents = _rebuild(raw["requests"], max_context, cuts)
    if not requests or not any(True for _ in _calls_in(requests)):
        return None, len(dropped), dropped_subagents
    return Trace.model_validate({**raw, "requests": requests}), len(dropped), dropped_subagents


def _calls_in(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        out += _calls_in(item["requests"]) if item["type"] == "subagent" else [item]
    return out


def cap_corpus(corpus: Corpus, max_context: int) -> tuple[Corpus, CapSummary]:
    """The capped corpus and what was dropped."""
    kept: list[Trace] = []
    total = dropped_calls = dropped_subagents = dropped_traces = 0
    for trace in corpus.traces:
        total += sum(1 for _ in walk_calls(trace))
        capped, calls, subagents = cap_trace(trace, max_context)
        dropped_calls += calls
        dropped_subagents += subagents
        if capped is None:
            dropped_traces += 1
        else:
            kept.append(capped)
    source = f"{corpus.source} capped at {max_context} tokens"
    summary = CapSummary(total, dropped_calls, dropped_subagents, dropped_traces)
    return Corpus(traces=tuple(kept), source=source), summary
