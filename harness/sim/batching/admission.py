"""Admission to the GPU KV pool as SGLang's scheduler decides it (0.5.23 `schedule_policy.PrefillAdder`,
`mem_cache/prefill_budget.PrefillBudget`, `scheduler_components/new_token_ratio_tracker.py`).

A waiting request is admitted to a prefill step only if its whole future fits, not just the chunk computed now:

    extend + min(max_new_tokens - output, CLIP) + page  <  free + evictable - reserved

- `extend`: the prompt tokens not found in the prefix cache (all of them, even when only a chunk runs now);
- `evictable`: prefix-cache tokens no running request holds (the request's own matched prefix excluded);
- `reserved`: the tokens the running requests may still decode, `min(max_new_tokens - output, CLIP)` each,
  times the new-token ratio (1 for `ignore_eos` requests, which will decode all of them), plus what this step
  already admitted (its extend + a page + its full `min(max_new_tokens, CLIP)`).

The new-token ratio starts at 0.7 (`SGLANG_INIT_NEW_TOKEN_RATIO` x `--schedule-conservativeness`), decays by
(0.7 - 0.098) / 600 per decode step down to 0.098 (factor `SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR` 0.14), returns to
0.7 whenever the server idles, and after a retraction becomes (decoded + 20 per request) / (max new tokens + 1)
of the batch, at most 1. A request that does not fit waits in the queue (first come, first served: the ones
behind it wait too). A decode step that does not fit even after evicting the prefix cache retracts requests,
fewest output tokens first (ties: longest prompt), back to the head of the queue.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

CLIP_MAX_NEW_TOKENS = 4096      # SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
INIT_NEW_TOKEN_RATIO = 0.7      # SGLANG_INIT_NEW_TOKEN_RATIO
MIN_NEW_TOKEN_RATIO_FACTOR = 0.14
NEW_TOKEN_RATIO_DECAY_STEPS = 600
RETRACT_DECODE_STEPS = 20
PAGE_TOKENS = 1                 # --page-size (SGLang's default for the radix cache)


def future_tokens(max_new_tokens: int, output: int) -> int:
    """Tokens a request may still decode, clipped as SGLang clips its estimate."""
    return min(max(max_new_tokens - output, 0), CLIP_MAX_NEW_TOKENS)


def running_reservation(running: Iterable[tuple[int, int, bool]], ratio: float) -> float:
    """Tokens held back for running requests given as (max_new_tokens, output, ignore_eos)."""
    return sum(future_tokens(m, o) * (1.0 if eos else ratio) for m, o, eos in running)


def admission_need(extend: int, max_new_tokens: int, output: int) -> int:
    """Pool tokens a waiting request must find room for: its uncached prompt, its future output and a page."""
    return extend + future_tokens(max_new_tokens, output) + PAGE_TOKENS


def fits(need: int, room: float) -> bool:
    """SGLang admits only when the need is strictly below the remaining room."""
    return need < room


def retraction_order_key(output: int, prompt_tokens: int) -> tuple[int, int]:
    """Sort key, ascending = retracted first: fewest output tokens, then the longest prompt."""
    return (output, -prompt_tokens)


@dataclass
class NewTokenRatio:
    """The share of their remaining `max_new_tokens` that running requests are assumed to still decode."""

    conservativeness: float = 1.0
    current: float = 0.0

    def __post_init__(self) -> None:
        self.init = min(INIT_NEW_TOKEN_RATIO * self.conservativeness, 1.0)
        self.min = min(self.init * MIN_NEW_TOKEN_RATIO_FACTOR, 1.0)
        self.decay = (self.init - self.min) / NEW_TOKEN_RATIO_DECAY_STEPS
        self.current = self.init

    def decay_step(self) -> None:
        self.current = max(self.current - self.decay, self.min)

    def reset(self) -> None:
        self.current = self.init

    def after_retract(self, batch: Iterable[tuple[int, int]]) -> None:
        """Re-estimate from the requests left running, given as (max_new_tokens, output)."""
        reqs = list(batch)
        decoded = sum(o for _, o in reqs)
        budget = sum(m for m, _ in reqs)
        self.current = min(1.0, (decoded + RETRACT_DECODE_STEPS * len(reqs)) / (budget + 1))
