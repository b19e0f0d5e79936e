"""Corpus statistics: what a trace corpus asks of a server.

Definitions (every API call counts, root and subagent alike, unless said otherwise):

* `requests`: API calls; `subagents`: subagent entries, nested ones included.
* Distributions (`requests_per_trace`, `subagents_per_trace`, `isl_tokens` = `in`, `osl_tokens` = `out`,
  `context_tokens` = in + out, `think_time_s` over calls that record one) report count, mean, min,
  p50, p75, p90, p95, p99 and max; percentiles interpolate linearly between closest ranks (numpy's
  default): rank = p / 100 * (n - 1).
* `theoretical_prefix_cache_hit`: the hit rate of an infinite prefix cache, as AIPerf defines it.
  Per trace, calls are taken in time order (ties in file order); a call's hit blocks are the leading
  run of its `hash_ids` already sent by any earlier call of the same trace; rate = hit blocks / all
  blocks. Traces never share blocks (`hash_id_scope: local`).
"""

from __future__ import annotations

from typing import Any

from harness.traces.schema import Corpus, Trace, walk_calls, walk_subagents

PERCENTILES = (50, 75, 90, 95, 99)


def percentile(sorted_values: list[float], p: float) -> float:
    """Linear interpolation between closest ranks over already sorted values."""
    n = len(sorted_values)
    rank = p / 100 * (n - 1)
    lo = int(rank)
    hi = min(lo + 1, n - 1)
    frac = rank - lo
    if frac == 0:
        return float(sorted_values[lo])
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def distribution(values: list[float]) -> dict[str, float | int | None]:
    """count, mean, min, percentiles and max; only the count when there are no values."""
    if not values:
        return {"count": 0}
    ordered = sorted(values)
    out: dict[str, float | int | None] = {"count": len(ordered), "mean": sum(ordered) / len(ordered),
                                          "min": ordered[0]}
    for p in PERCENTILES:
        out[f"p{p}"] = percentile(ordered, p)
    out["max"] = ordered[-1]
    return out


def prefix_cache_blocks(trace: Trace) -> tuple[int, int]:
    """(hit blocks, total blocks) of one trace under an infinite prefix cache."""
    calls = sorted(enumerate(walk_calls(trace)), key=lambda item: (item[1].request.t, item[0]))
    seen: set[int] = set()
    hits = total = 0
    for _, located in calls:
        ids = located.request.hash_ids
        for hid in ids:
            if hid not in seen:
                break
            hits += 1
        total += len(ids)
        seen.update(ids)
    return hits, total


def corpus_stats(corpus: Corpus) -> dict[str, Any]:
    """All statistics of a corpus as a JSON-ready dict."""
    per_trace_calls: list[float] = []
    per_trace_subagents: list[float] = []
    isl: list[float] = []
    osl: list[float] = []
    ctx: list[float] = []
    think: list[float] = []
    root_calls = sub_calls = 0
    hit_blocks = total_blocks = 0
    max_depth = 0
    for trace in corpus.traces:
        calls = list(walk_calls(trace))
        subagents = list(walk_subagents(trace))
        per_trace_calls.append(len(calls))
        per_trace_subagents.append(len(subagents))
        for located in calls:
            req = located.request
            isl.append(req.input_tokens)
            osl.append(req.output_tokens)
            ctx.append(req.input_tokens + req.output_tokens)
            if req.think_time is not None:
                think.append(req.think_time)
            if located.depth:
                sub_calls += 1
                max_depth = max(max_depth, located.depth)
            else:
                root_calls += 1
        hits, total = prefix_cache_blocks(trace)
        hit_blocks += hits
        total_blocks += total
    return {
        "source": corpus.source,
        "traces": len(corpus.traces),
        "requests": root_calls + sub_calls,
        "root_requests": root_calls,
        "subagent_requests": sub_calls,
        "subagents": int(sum(per_trace_subagents)),
        "max_subagent_depth": max_depth,
        "requests_per_trace": distribution(per_trace_calls),
        "subagents_per_trace": distribution(per_trace_subagents),
        "isl_tokens": distribution(isl),
        "osl_tokens": distribution(osl),
        "context_tokens": distribution(ctx),
        "think_time_s": distribution(think),
        "theoretical_prefix_cache_hit": {
            "hit_blocks": hit_blocks,
            "total_blocks": total_blocks,
            "rate": hit_blocks / total_blocks if total_blocks else None,
        },
    }


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


def render_table(stats: dict[str, Any]) -> str:
    """A human-readable summary of `corpus_stats` output."""
    hit = stats["theoretical_prefix_cache_hit"]
    rate = "-" if hit["rate"] is None else f"{100 * hit['rate']:.1f}%"
    lines = [
        f"corpus        {stats['source']}",
        f"traces        {stats['traces']}",
        (f"requests      {stats['requests']} ({stats['root_requests']} root, "
         f"{stats['subagent_requests']} in {stats['subagents']} subagents, "
         f"max depth {stats['max_subagent_depth']})"),
        f"prefix cache  {rate} theoretical hit ({hit['hit_blocks']:,} of {hit['total_blocks']:,} blocks)",
        "",
        f"{'':<20}" + "".join(f"{c:>10}" for c in ("mean", "min", "p50", "p75", "p90", "p95", "p99", "max")),
    ]
    for key in ("requests_per_trace", "subagents_per_trace", "isl_tokens", "osl_tokens", "context_tokens",
                "think_time_s"):
        d = stats[key]
        cells = [d.get(c) for c in ("mean", "min", "p50", "p75", "p90", "p95", "p99", "max")]
        lines.append(f"{key:<20}" + "".join(f"{_fmt(v):>10}" for v in cells))
    return "\n".join(lines)
