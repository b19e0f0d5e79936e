"""Prometheus text exposition with SGLang's metric names (`/metrics`, only with `--enable-metrics`).

Names follow SGLang's scheduler and tokenizer-manager collectors (`sglang:` prefix; counters end
in `_total`; latency histograms in seconds). Labels: `model_name` plus the scheduler's
`engine_type`, `tp_rank`, `pp_rank`, `moe_ep_rank` (rank 0: only rank 0 records by default).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.sim.batching.engine import Engine

LATENCY_BUCKETS = (
    0.001, 0.002, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
    7.5, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0, 90.0, 120.0, 300.0, 600.0,
)


@dataclass
class Histogram:
    buckets: tuple[float, ...] = LATENCY_BUCKETS
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.buckets) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.n += 1


@dataclass
class LatencyMetrics:
    """Request-level latency histograms, observed by the HTTP side when a request ends."""

    ttft: Histogram = field(default_factory=Histogram)
    itl: Histogram = field(default_factory=Histogram)
    e2e: Histogram = field(default_factory=Histogram)
    queue: Histogram = field(default_factory=Histogram)
    tpot: Histogram = field(default_factory=Histogram)


def _labels(d: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in d.items()) + "}"


def render(engine: Engine, lat: LatencyMetrics, model_name: str, context_len: int) -> str:
    """The whole /metrics page."""
    base = {"model_name": model_name, "engine_type": "unified", "tp_rank": "0", "pp_rank": "0", "moe_ep_rank": "0"}
    lb = _labels(base)
    st = engine.stats
    kv = engine.kv
    out: list[str] = []

    def metric(name: str, kind: str, helptext: str, samples: list[tuple[str, float]]) -> None:
        out.append(f"# HELP {name} {helptext}")
        out.append(f"# TYPE {name} {kind}")
        for suffix_labels, value in samples:
            out.append(f"{name}{suffix_labels} {value}")

    def gauge(name: str, helptext: str, value: float) -> None:
        metric(name, "gauge", helptext, [(lb, float(value))])

    def counter(name: str, helptext: str, value: float, by: tuple[str, list[tuple[str, float]]] | None = None) -> None:
        # prometheus_client's text format (what SGLang serves) names the counter family with `_total`
        out.append(f"# HELP {name} {helptext}")
        out.append(f"# TYPE {name} counter")
        if by is None:
            out.append(f"{name}{lb} {float(value)}")
            return
        label, values = by
        for label_value, v in values:
            out.append(f"{name}{_labels({**base, label: label_value})} {float(v)}")

    used = kv.used
    gen_t = sum(t for t, _ in st.recent_gen)
    gen_tok = sum(n for _, n in st.recent_gen)
    spec = engine.cfg.spec
    gauge("sglang:num_running_reqs", "The number of running requests.", engine.num_running)
    gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", len(engine.waiting))
    gauge("sglang:num_retracted_reqs", "The number of retracted requests waiting to run again.",
          sum(1 for r in engine.waiting if r.retractions))
    gauge("sglang:num_used_tokens", "The number of used tokens.", used)
    gauge("sglang:token_usage", "The token usage.", used / kv.capacity if kv.capacity else 0.0)
    gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", kv.capacity)
    gauge("sglang:kv_used_tokens", "KV cache tokens in use.", used)
    gauge("sglang:kv_available_tokens", "KV cache tokens free.", max(0, kv.free))
    gauge("sglang:kv_evictable_tokens", "KV cache tokens held only by the prefix cache.", kv.evictable_tokens())
    gauge("sglang:context_len", "The context length.", context_len)
    gauge("sglang:page_size", "The KV cache page size.", 1)
    gauge("sglang:gen_throughput", "The generation throughput (token/s).", gen_tok / gen_t if gen_t else 0.0)
    cached = st.cached_tokens_device + st.cached_tokens_host
    gauge("sglang:cache_hit_rate", "The prefix cache hit rate.",
          cached / st.prompt_tokens_total if st.prompt_tokens_total else 0.0)
    if spec.enabled:
        recent = list(st.recent_accept)
        al = sum(recent) / len(recent) if recent else 0.0
        gauge("sglang:spec_accept_length", "The average acceptance length of speculative decoding.", al)
        drafts = max(1, spec.max_accept_len - 1)
        gauge("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding.",
              (al - 1) / drafts if recent else 0.0)
        gauge("sglang:spec_num_steps", "Speculative decoding steps.", spec.num_steps)
        gauge("sglang:spec_num_draft_tokens", "Speculative draft tokens.", spec.num_draft_tokens)
        counter("sglang:spec_verify_calls_total", "Total verify calls (request x step).",
                st.spec_verify_calls_total)
    if kv.hicache:
        gauge("sglang:hicache_host_used_tokens", "Tokens in the HiCache host pool.", kv.host_used)
        gauge("sglang:hicache_host_total_tokens", "Capacity of the HiCache host pool.", kv.host_capacity)
        counter("sglang:load_back_tokens_total", "Tokens loaded back from host.", kv.traffic.load_back_tokens)
        counter("sglang:hicache_backup_tokens_total", "Tokens backed up to host.", kv.traffic.backup_tokens)
    counter("sglang:num_retracted_requests_total", "Total number of retracted requests.", st.retracted_total)
    counter("sglang:num_retracted_input_tokens_total", "Total number of retracted input tokens.",
            st.retracted_input_tokens_total)
    counter("sglang:evicted_tokens_total", "Tokens evicted from the GPU pool.", kv.traffic.evicted_tokens)
    counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", st.prompt_tokens_total)
    counter("sglang:generation_tokens_total", "Number of generation tokens processed.", st.generation_tokens_total)
    counter("sglang:num_requests_total", "Number of requests processed.", st.requests_total)
    counter("sglang:num_aborted_requests_total", "Number of requests aborted.", st.aborted_total)
    counter("sglang:cached_tokens_total", "Number of cached prompt tokens by source (device/host/storage).", 0,
            ("cache_source", [("device", st.cached_tokens_device), ("host", st.cached_tokens_host), ("storage", 0)]))
    computed = max(0, st.prompt_tokens_total - cached)
    counter("sglang:realtime_tokens_total", "Total number of tokens processed (updated on each log interval). "
            "mode: prefill_compute, prefill_cache, decode.", 0,
            ("mode", [("prefill_compute", computed), ("prefill_cache", cached),
                      ("decode", st.generation_tokens_total)]))
    for name, helptext, h in (
        ("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", lat.ttft),
        ("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", lat.itl),
        ("sglang:e2e_request_latency_seconds", "Histogram of end-to-end request latency in seconds.", lat.e2e),
        ("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", lat.queue),
        ("sglang:request_time_per_output_token_seconds", "Histogram of time per output token in seconds.", lat.tpot),
    ):
        out.append(f"# HELP {name} {helptext}")
        out.append(f"# TYPE {name} histogram")
        acc = 0
        for bound, c in zip(h.buckets, h.counts):
            acc += c
            out.append(f"{name}_bucket{_labels({**base, 'le': str(bound)})} {float(acc)}")
        out.append(f"{name}_bucket{_labels({**base, 'le': '+Inf'})} {float(h.n)}")
        out.append(f"{name}_sum{lb} {h.total}")
        out.append(f"{name}_count{lb} {float(h.n)}")
    return "\n".join(out) + "\n"
