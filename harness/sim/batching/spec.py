"""Speculative decoding as SGLang runs it, with synthetic acceptance (`SGLANG_SIMULATE_ACC_*`).

SGLang reads three environment variables once, at import time (`srt/environ.py`,
`srt/speculative/spec_utils.py`):

- `SGLANG_SIMULATE_ACC_LEN` (EnvFloat, default -1): target accept length per verify step,
  *including* the bonus token. `> 0` enables simulation. An unparsable value warns and falls
  back to the default -1, i.e. simulation silently OFF.
- `SGLANG_SIMULATE_ACC_METHOD` (EnvStr, default `match-expected`): `match-expected` or
  `multinomial`; anything else raises `ValueError("Invalid simulate_acc_method: X")` at the first
  verify step (which kills the server during warmup).
- `SGLANG_SIMULATE_ACC_TOKEN_MODE` (EnvStr, default `fixed`): `fixed` or `real-draft-token`;
  anything else raises `ValueError("Invalid SGLANG_SIMULATE_ACC_TOKEN_MODE 'X'; expected 'fixed' or
  'real-draft-token'.")` (DFLASH at worker start, EAGLE at the first verify). `real-draft-token`
  with EAGLE needs `--speculative-eagle-topk 1`.

One accept length is drawn per verify step for the whole batch (`draw_accept_length`), and clamped
to `[1, max_len]` where max_len is `speculative_num_steps + 1` for the EAGLE family and the block
size (`speculative_num_draft_tokens`) for DFLASH.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass

METHODS = ("match-expected", "multinomial")
TOKEN_MODES = ("fixed", "real-draft-token")
EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")


@dataclass(frozen=True)
class SimulateAccEnv:
    """The three environment variables as SGLang's scheduler sees them."""

    acc_len: float
    method: str
    token_mode: str
    warning: str | None = None

    @property
    def enabled(self) -> bool:
        return self.acc_len > 0


def read_simulate_env(env: Mapping[str, str]) -> SimulateAccEnv:
    """Read `SGLANG_SIMULATE_ACC_*` exactly as SGLang's EnvFloat/EnvStr do (no validation here)."""
    raw = env.get("SGLANG_SIMULATE_ACC_LEN")
    warning = None
    acc_len = -1.0
    if raw is not None:
        try:
            acc_len = float(raw)
        except ValueError:
            warning = f"Invalid value for SGLANG_SIMULATE_ACC_LEN: {raw!r}, using default -1"
    return SimulateAccEnv(
        acc_len=acc_len,
        method=env.get("SGLANG_SIMULATE_ACC_METHOD", "match-expected"),
        token_mode=env.get("SGLANG_SIMULATE_ACC_TOKEN_MODE", "fixed"),
        warning=warning,
    )


def token_mode_error(mode: str) -> ValueError:
    return ValueError(
        f"Invalid SGLANG_SIMULATE_ACC_TOKEN_MODE {mode!r}; expected 'fixed' or 'real-draft-token'."
    )


def draw_accept_length(value: float, method: str, max_len: int, rng: random.Random) -> int:
    """One simulated accept length in [1, max_len], as SGLang's `_sample_simulated_acc_len`.

    match-expected: clamp to [1, max_len]; with lower = floor(v), return lower + 1 with
    probability v - lower, else lower (always max_len once lower == max_len). The mean is v.
    multinomial: round(clamp(N(v, 1), 1, max_len)) (half to even, like torch.round).
    """
    if method == "multinomial":
        x = min(max(rng.gauss(value, 1.0), 1.0), float(max_len))
        return round(x)
    if method == "match-expected":
        v = max(1.0, min(float(max_len), value))
        lower = int(v // 1)
        upper = lower + 1 if lower < max_len else lower
        if lower == upper:
            return lower
        return upper if rng.random() < v - lower else lower
    raise ValueError(f"Invalid simulate_acc_method: {method}")


@dataclass(frozen=True)
class SpecConfig:
    """Resolved speculative decoding settings (None algorithm = plain decoding)."""

    algorithm: str | None
    num_steps: int
    eagle_topk: int
    num_draft_tokens: int

    @property
    def enabled(self) -> bool:
        return self.algorithm is not None

    @property
    def max_accept_len(self) -> int:
        """Upper clamp of the accept length: steps + 1 (EAGLE family), the block size (DFLASH, NGRAM)."""
        if not self.enabled:
            return 1
        if self.algorithm in ("DFLASH", "NGRAM"):
            return self.num_draft_tokens
        return self.num_steps + 1

    @property
    def verify_width(self) -> int:
        """Tokens the target model verifies per request per step."""
        return self.num_draft_tokens if self.enabled else 1


class SpecArgsError(ValueError):
    """Speculative flags that SGLang rejects while resolving server args."""


def resolve_spec(args: object) -> SpecConfig:
    """Resolve speculative flags the way SGLang's server-args hooks do.

    NEXTN is an alias of EAGLE. EAGLE family: with nothing set the defaults are (3 steps, topk 1,
    4 draft tokens); topk 1 forces draft tokens = steps + 1. DFLASH: steps and topk are forced to
    1; the block size is `--speculative-num-draft-tokens` or its alias
    `--speculative-dflash-block-size` (different values is an error), else 16.
    """
    algo_raw = getattr(args, "speculative_algorithm", None)
    if algo_raw is None:
        return SpecConfig(None, 0, 1, 1)
    algo = str(algo_raw).upper()
    if algo == "NEXTN":
        algo = "EAGLE"
    steps = getattr(args, "speculative_num_steps", None)
    topk = getattr(args, "speculative_eagle_topk", None)
    draft = getattr(args, "speculative_num_draft_tokens", None)
    if algo == "DFLASH":
        block = getattr(args, "speculative_dflash_block_size", None)
        if draft is not None and block is not None and draft != block:
            raise SpecArgsError(
                "--speculative-num-draft-tokens and --speculative-dflash-block-size disagree "
                f"({draft} vs {block})"
            )
        size = draft if draft is not None else (block if block is not None else 16)
        if size < 1:
            raise SpecArgsError(f"DFLASH block size must be >= 1, got {size}")
        return SpecConfig("DFLASH", 1, 1, int(size))
    if algo == "NGRAM":
        return SpecConfig("NGRAM", int(steps or 1), int(topk or 1), int(draft or 8))
    if steps is None and topk is None and draft is None:
        steps, topk, draft = 3, 1, 4
    steps = int(steps if steps is not None else 3)
    topk = int(topk if topk is not None else 1)
    if topk == 1 or draft is None:
        draft = steps + 1
    return SpecConfig(algo, steps, topk, int(draft))


def check_at_start(spec: SpecConfig, env: SimulateAccEnv) -> None:
    """Checks SGLang makes when the speculative worker starts (DFLASH validates TOKEN_MODE here)."""
    if env.warning:
        print(f"WARNING: {env.warning}", file=sys.stderr, flush=True)
    if spec.algorithm == "DFLASH" and env.enabled and env.token_mode not in TOKEN_MODES:
        raise token_mode_error(env.token_mode)


def check_at_verify(spec: SpecConfig, env: SimulateAccEnv) -> None:
    """Checks SGLang makes at a verify step while simulating (the first one is during warmup)."""
    if not (spec.enabled and env.enabled):
        return
    if env.token_mode not in TOKEN_MODES:
        raise token_mode_error(env.token_mode)
    if env.token_mode == "real-draft-token" and spec.algorithm in EAGLE_FAMILY and spec.eagle_topk != 1:
        raise ValueError(
            "SGLANG_SIMULATE_ACC_LEN with real draft tokens currently requires speculative_eagle_topk=1."
        )
    if env.method not in METHODS:
        raise ValueError(f"Invalid simulate_acc_method: {env.method}")


class AcceptSampler:
    """Draws the per-step accept length: synthetic when simulating, else the profile's natural rate."""

    def __init__(self, spec: SpecConfig, env: SimulateAccEnv, natural_fraction: float, rng: random.Random):
        self.spec = spec
        self.env = env
        self.rng = rng
        self.max_len = spec.max_accept_len
        # Without simulation the accept length is what the draft achieves: modelled as a mean of
        # 1 + natural_fraction * (max_len - 1), drawn match-expected style.
        self.natural_mean = 1.0 + natural_fraction * (self.max_len - 1)

    def draw(self) -> int:
        if not self.spec.enabled:
            return 1
        if self.env.enabled:
            return draw_accept_length(self.env.acc_len, self.env.method, self.max_len, self.rng)
        return draw_accept_length(self.natural_mean, "match-expected", self.max_len, self.rng)


def expected_accept_length(value: float, max_len: int) -> float:
    """The mean of match-expected draws for `value` (the clamp applied)."""
    return max(1.0, min(float(max_len), value)) if not math.isnan(value) else 1.0
