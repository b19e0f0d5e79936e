"""The engine's counters since start: what `/metrics` and `/server_info` report, and its scheduling lag."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

LAG_BUCKETS = 500  # 100 us each: 0-50 ms


@dataclass
class EngineStats:
    """Counters since start (the basis of /metrics and /server_info).

    The request counters that `/metrics` exports (requests, prompt, generation and cached tokens, verify calls)
    are bumped once per request when it finishes or is aborted, as SGLang's tokenizer manager reports them
    (`tokenizer_manager.py` → `metrics_collector.py`), so deltas over a window count the requests that ended in
    it. `verify_calls_total`/`accepted_tokens_total` are the scheduler's per-step view (`/server_info`).
    """

    requests_total: int = 0
    aborted_total: int = 0
    prompt_tokens_total: int = 0
    generation_tokens_total: int = 0
    cached_tokens_device: int = 0
    cached_tokens_host: int = 0
    retracted_total: int = 0
    retracted_input_tokens_total: int = 0
    verify_calls_total: int = 0  # request x verify-step pairs, as steps run
    spec_verify_calls_total: int = 0  # the same, counted when each request ends (sglang:spec_verify_calls_total)
    accepted_tokens_total: int = 0  # sum of accept lengths over those pairs
    decode_steps: int = 0
    prefill_steps: int = 0
    recent_accept: collections.deque[int] = field(default_factory=lambda: collections.deque(maxlen=40))
    recent_gen: collections.deque[tuple[float, int]] = field(default_factory=lambda: collections.deque(maxlen=40))
    # Scheduling lag (how late a step ended versus its scheduled end): counts per 100 us bucket,
    # the last bucket collects everything from LAG_BUCKETS * 100 us up.
    lag_hist: list[int] = field(default_factory=lambda: [0] * (LAG_BUCKETS + 1))
    backup_seconds: float = 0.0
    load_back_seconds: float = 0.0

    def lag_median_ms(self) -> float | None:
        return hist_median_ms(self.lag_hist)

    @property
    def avg_accept_length(self) -> float:
        return self.accepted_tokens_total / self.verify_calls_total if self.verify_calls_total else 0.0


def hist_median_ms(hist: list[int]) -> float | None:
    """Median of a 100-us-bucket lag histogram, in ms (bucket midpoint)."""
    total = sum(hist)
    if total == 0:
        return None
    acc = 0
    for i, c in enumerate(hist):
        acc += c
        if acc * 2 >= total:
            return (i + 0.5) / 10.0
    return None
