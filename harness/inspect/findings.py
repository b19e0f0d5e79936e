"""Findings in words: named rules over a point's facts (`harness.inspect.facts`), each firing with its number, its
sample size and the rule that fired. Pure.

| rule | fires when |
|---|---|
| `kv_pool_full` | the pool's use peaks at >= 95 % in >= 10 % of the window's 1 s slices |
| `evictions` | the server evicted prefix tokens from the pool during the window |
| `hit_rate_below_trace` | the measured prefix-cache hit rate is >= 10 points below the trace's theoretical one |
| `server_queue` | requests waited in the server's queue in >= 10 % of the window's slices |
| `lanes_idle` | achieved concurrency below 90 % of the target |
| `warmup_overlap` | warm-up requests were still running after the window opened |
| `cutoff_cancellations` | requests were cancelled at the end of the window (they vanish from AIPerf's records) |
| `request_errors` | profiled requests failed |
| `power_not_bracketing` | a GPU's power samples do not cover the whole window |
| `power_clock_offset` | AIPerf's summary window and its UTC window differ by more than InferenceX's max(0.5 s, 1 %) |
| `power_withheld` | power was sampled but the point's power verdict is invalid (its reasons, ours and InferenceX's) |
| `few_requests_p90` | fewer successful requests than a p90 needs (10 beyond it: 100) |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.point.record.sample_size import min_requests
from harness.vocabulary import TOTAL_PER_GPU

FULL_SHARE = 0.10
HIT_GAP = 0.10
QUEUE_SHARE = 0.10
IDLE_RATIO = 0.90


@dataclass(frozen=True)
class Finding:
    rule: str
    kind: str        # cause (why the numbers read as they do) | warning (the measurement itself) | note
    text: str
    value: float | int | None
    n: int | None
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "kind": self.kind, "text": self.text, "value": self.value, "n": self.n,
                "source": self.source}


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _kv_pool_full(f: dict[str, Any]) -> Finding | None:
    p = f.get("pool_full_share")
    if not p or p["value"] < FULL_SHARE:
        return None
    cap = f" of {p['capacity_tokens']:,} tokens" if p.get("capacity_tokens") else ""
    return Finding("kv_pool_full", "cause",
                   f"KV pool full (>= {_pct(p['threshold'])}) in {_pct(p['value'])} of the window "
                   f"({p['full_slices']} of {p['n']} slices; peak {_pct(p['peak_usage'])}{cap}): no free room, so a "
                   "prefix kept for a session's next call costs another session's", round(p["value"], 4), p["n"], p["source"])


def _evictions(f: dict[str, Any]) -> Finding | None:
    e = f.get("evicted_tokens")
    if not e or e["value"] <= 0:
        return None
    return Finding("evictions", "cause",
                   f"{e['value']:,.0f} tokens evicted from the KV pool during the window ({e['n']} slices): sessions "
                   "push each other's prefixes out, and their next calls prefill them again",
                   e["value"], e["n"], e["source"])


def _hit_rate(f: dict[str, Any]) -> Finding | None:
    measured, theory = f.get("hit_rate") or f.get("client_hit_rate"), f.get("theoretical_hit_rate")
    if not measured or not theory or theory["value"] - measured["value"] < HIT_GAP:
        return None
    reprefill = (theory["value"] - measured["value"]) * measured["prompt_tokens"]
    return Finding("hit_rate_below_trace", "cause",
                   f"prefix-cache hit rate {_pct(measured['value'])} against the trace's theoretical "
                   f"{_pct(theory['value'])}: about {reprefill:,.0f} of {measured['prompt_tokens']:,.0f} prompt tokens "
                   "were prefilled again though the trace could have reused them",
                   round(measured["value"], 4), measured["n"], f"{measured['source']}; {theory['source']}")


def _server_queue(f: dict[str, Any]) -> Finding | None:
    q = f.get("server_queue_share")
    if not q or q["value"] < QUEUE_SHARE:
        return None
    return Finding("server_queue", "cause",
                   f"requests queued at the server in {_pct(q['value'])} of the window ({q['n']} slices; "
                   f"up to {q['peak']:.0f} waiting, {q['mean']:.1f} on average): TTFT includes that wait",
                   round(q["value"], 4), q["n"], q["source"])


def _lanes_idle(f: dict[str, Any]) -> Finding | None:
    a = f.get("achieved_concurrency")
    if not a or a["value"] >= IDLE_RATIO * a["target"]:
        return None
    return Finding("lanes_idle", "warning",
                   f"achieved concurrency {a['value']:.2f} of the target {a['target']} "
                   f"({_pct(a['value'] / a['target'])}): lanes spent part of the window idle (thinking, or between "
                   "trajectories), so the point measured less load than its name says",
                   round(a["value"], 4), a["n"], a["source"])


def _warmup_overlap(f: dict[str, Any]) -> Finding | None:
    w = f.get("warmup_in_window")
    if not w or w["value"] <= 0:
        return None
    return Finding("warmup_overlap", "warning",
                   f"{w['value']} of {w['n']} warm-up requests still ran after the window opened (the last until "
                   f"{w['last_end_s']:.1f} s): the window's start carries warm-up load",
                   w["value"], w["n"], w["source"])


def _cancellations(f: dict[str, Any]) -> Finding | None:
    c = f.get("cancelled_at_cutoff")
    if not c or c["value"] <= 0:
        return None
    return Finding("cutoff_cancellations", "warning",
                   f"{c['value']} requests cancelled at the end of the window ({c['n']} profiled requests kept): "
                   "the slowest calls vanish from the latencies", c["value"], c["n"], c["source"])


def _errors(f: dict[str, Any]) -> Finding | None:
    r = f.get("requests")
    if not r or r["errors"] <= 0:
        return None
    return Finding("request_errors", "warning", f"{r['errors']} of {r['n']} profiled requests failed",
                   r["errors"], r["n"], r["source"])


def _power_bracketing(f: dict[str, Any]) -> Finding | None:
    b = f.get("power_bracketing")
    if not b or b["value"]:
        return None
    return Finding("power_not_bracketing", "warning",
                   f"power samples of {len(b['unbracketed_gpus'])} of {b['n']} GPUs do not cover the window "
                   f"(samples from {b['first_sample_s']:.1f} s to {b['last_sample_s']:.1f} s on the window's clock): "
                   "energy over the window cannot be integrated", len(b["unbracketed_gpus"]), b["n"], b["source"])


def _power_clock(f: dict[str, Any]) -> Finding | None:
    o = f.get("power_clock_offset")
    if not o or abs(o["value"]) <= o["bound_s"]:
        return None
    return Finding("power_clock_offset", "warning",
                   f"AIPerf's summary window is {o['value']:+.1f} s off its UTC window (bound {o['bound_s']:.2f} s, "
                   f"naive times read in {o['naive_tz']}): power integrated over the summary window covers the wrong "
                   "span, so InferenceX withholds the energy", round(o["value"], 3), o["n"], o["source"])


def _power_withheld(f: dict[str, Any]) -> Finding | None:
    p = f.get("power_withheld")
    if not p:
        return None
    said = "; ".join(f"{r} ({p['descriptions'][r]})" if r in p["descriptions"] else r for r in p["ours"])
    theirs = ", ".join(p["inferencex"])
    return Finding("power_withheld", "warning",
                   f"energy withheld from {p['n']:,} power samples: {said or theirs}"
                   + (f"; InferenceX's audit: {theirs}" if said and theirs else ""),
                   p["value"], p["n"], p["source"])


def _few_requests(f: dict[str, Any]) -> Finding | None:
    r = f.get("requests")
    need = min_requests(90)
    if not r or r["value"] >= need:
        return None
    return Finding("few_requests_p90", "note",
                   f"{r['value']} successful requests: a p90 needs {need} for 10 of them to lie beyond it, so this "
                   "point's p90 rests on its few slowest requests", r["value"], r["n"], r["source"])


RULES: tuple[Callable[[dict[str, Any]], Finding | None], ...] = (
    _kv_pool_full, _evictions, _hit_rate, _server_queue, _lanes_idle, _warmup_overlap, _cancellations, _errors,
    _power_bracketing, _power_clock, _power_withheld, _few_requests)


def findings(facts: dict[str, Any]) -> list[Finding]:
    """Every rule that fires, causes first."""
    fired = [f for rule in RULES if (f := rule(facts)) is not None]
    order = {"cause": 0, "warning": 1, "note": 2}
    return sorted(fired, key=lambda f: order[f.kind])


_CONTRAST = (("throughput_per_gpu", "throughput", "{:,.0f} " + TOTAL_PER_GPU), ("e2el_p90", "E2EL p90", "{:.2f} s"),
             ("ttft_p50", "TTFT p50", "{:.2f} s"), ("pool_full_share", "KV pool full", "pct"),
             ("hit_rate", "prefix-cache hit rate", "pct"), ("evicted_tokens", "tokens evicted", "{:,.0f}"),
             ("server_queue_share", "queued at the server", "pct"),
             ("achieved_concurrency", "achieved concurrency", "{:.2f}"))


def contrast(label_a: str, facts_a: dict[str, Any], label_b: str, facts_b: dict[str, Any]) -> list[str]:
    """One line per fact both points measured: `name: A value (n) vs B value (n) [source]`, the source as the
    facts name it (one when both points read it alike)."""
    lines = []
    for key, name, form in _CONTRAST:
        a, b = facts_a.get(key), facts_b.get(key)
        if not a or not b:
            continue

        def show(x: dict[str, Any], form: str = form) -> str:
            return (_pct(x["value"]) if form == "pct" else form.format(x["value"])) + f" (n={x['n']})"

        sources = list(dict.fromkeys(str(x.get("source") or "?") for x in (a, b)))
        lines.append(f"{name}: {label_a} {show(a)} vs {label_b} {show(b)} [{'; '.join(sources)}]")
    return lines
