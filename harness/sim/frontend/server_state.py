"""What the simulator's HTTP handlers share: the engine, the served model's identity, its flags' settings and the
faults injected into it."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from harness.sim.batching.engine import Engine
from harness.sim.batching.eval_answers import EvalAnswers
from harness.sim.batching.topology.dprank import DpRanks
from harness.sim.batching.topology.pdroles import Role
from harness.sim.batching.truth import TruthLog
from harness.sim.frontend import metrics as metrics_mod


@dataclass
class Faults:
    error_rate: float = 0.0
    drop_rate: float = 0.0
    rng: random.Random = field(default_factory=random.Random)
    errors_from_ns: int = 0        # monotonic time from which `error_rate` applies
    errors_after_requests: int = 0  # chat requests answered normally before `error_rate` applies
    stall_after_requests: int = 0   # the engine stalls when this chat request arrives (0: never)
    requests_seen: int = 0

    def inject_error(self) -> bool:
        """Whether this request is answered with an injected HTTP 500."""
        self.requests_seen += 1
        return (self.error_rate > 0 and time.monotonic_ns() >= self.errors_from_ns
                and self.requests_seen > self.errors_after_requests and self.rng.random() < self.error_rate)

    def stall_now(self) -> bool:
        """Whether the request just counted by `inject_error` is the one that stalls the engine."""
        return self.stall_after_requests > 0 and self.requests_seen == self.stall_after_requests


@dataclass
class ServerState:
    engine: Engine
    model_name: str
    model_path: str
    context_length: int
    server_info: dict[str, Any]
    enable_metrics: bool
    enable_cache_report: bool
    truth: TruthLog | None
    faults: Faults
    eval_answers: EvalAnswers | None = None
    allow_auto_truncate: bool = False
    health_generates: bool = True   # SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION: /health runs a generation
    api_key: str | None = None       # --api-key: SGLang's bearer-token check (`harness.sim.frontend.auth`)
    admin_api_key: str | None = None
    role: Role | None = None          # --disaggregation-mode prefill|decode (`harness.sim.batching.topology.pdroles`)
    dp: DpRanks = field(default_factory=lambda: DpRanks(1, False))  # attention-DP rank choice
    log_routing: bool = False         # --log-level debug: a `[sim] routed` line per request (`dprank.routed_line`)
    ready: bool = False
    latency: metrics_mod.LatencyMetrics = field(default_factory=metrics_mod.LatencyMetrics)
    created: int = field(default_factory=lambda: int(time.time()))
