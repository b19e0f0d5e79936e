"""The engine's settings, as the server's flags give them (`--max-running-requests`, `--chunked-prefill-size`, ...)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.sim.batching.spec import SimulateAccEnv, SpecConfig


@dataclass(frozen=True)
class EngineConfig:
    max_running: int
    chunked_prefill_size: int  # <= 0: unlimited
    max_prefill_tokens: int
    prefill_decode_interval: int  # 0: off
    prefill_decode_interval_min_bs: int
    stream_interval: int
    spec: SpecConfig
    sim_env: SimulateAccEnv
    kv_capacity: int
    hicache: bool
    host_capacity: int
    write_policy: str
    decode_log_interval: int
    seed: int
    # SGLang 0.5.23 streams the first token, then whenever >= stream_interval tokens are unsent ("unsent");
    # 0.5.20 streams only when the output length is 1 modulo the interval ("modulo"), so with several tokens
    # per speculative step most multiples are jumped over and text arrives late (output_streamer.py)
    stream_rule: str = "unsent"
    schedule_conservativeness: float = 1.0  # --schedule-conservativeness: scales the new-token ratio
