"""Seeded variation of the simulator's step times, so repeats spread and latency tails have a realistic shape.

Three lognormal multipliers, each with mean 1 (`exp(sigma * z - sigma**2 / 2)`, z standard normal), their
sigmas from the profile (0 turns one off):

- **run** (`run_noise_sigma`): one draw per server start, scaling every step (clocks, placement, thermal state
  differ from one server start to the next); this is what makes repeated runs of a point differ by a few percent.
- **step** (`step_noise_sigma`): one draw per step (kernel timing jitter, host scheduling).
- **request** (`request_noise_sigma`): one draw per request, scaling that request's share of the prefill steps it
  is in and of every decode step it is in (long-tailed per-request work: unlucky cache layout, long-context
  attention kernels, grammar/tool-call parsing); a decode step costs the batch's mean factor.

The seed is `--sim-seed`, else `--random-seed`; without either the server draws a fresh one and logs it (as
SGLang draws a random seed), so two starts differ and the logged seed reproduces a run.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from typing import Any


def lognormal_factor(rng: random.Random, sigma: float) -> float:
    """A mean-1 lognormal multiplier (1.0 exactly when sigma is 0, without consuming a draw)."""
    if sigma <= 0:
        return 1.0
    return math.exp(sigma * rng.gauss(0.0, 1.0) - sigma * sigma / 2.0)


class Noise:
    """The run, step and request multipliers of one server, from one seed."""

    def __init__(self, seed: int, step_sigma: float = 0.0, request_sigma: float = 0.0, run_sigma: float = 0.0):
        self.seed = seed
        self.step_sigma = step_sigma
        self.request_sigma = request_sigma
        self._steps = random.Random(f"step:{seed}")
        self._requests = random.Random(f"request:{seed}")
        self.run_factor = lognormal_factor(random.Random(f"run:{seed}"), run_sigma)

    @property
    def enabled(self) -> bool:
        return self.step_sigma > 0 or self.request_sigma > 0 or self.run_factor != 1.0

    def request_factor(self) -> float:
        """The next request's multiplier (drawn once, when the request reaches the engine)."""
        return lognormal_factor(self._requests, self.request_sigma)

    def step(self, seconds: float, factors: Iterable[tuple[float, float]] = ()) -> float:
        """`seconds` scaled by the run factor, a fresh step draw, and the weighted mean of the requests'
        factors in the step (`(weight, factor)` pairs; no pairs: 1)."""
        if not self.enabled or seconds <= 0:
            return seconds
        total = weighted = 0.0
        for w, f in factors:
            total += w
            weighted += w * f
        req = weighted / total if total > 0 else 1.0
        return seconds * self.run_factor * lognormal_factor(self._steps, self.step_sigma) * req


def noise_seed_of(sim_seed: int | None, random_seed: int | None) -> int:
    """`--sim-seed`, else `--random-seed`, else a fresh seed from the OS (so two starts differ)."""
    if sim_seed is not None:
        return int(sim_seed)
    if random_seed is not None:
        return int(random_seed)
    return random.SystemRandom().randrange(1 << 30)


def noise_for(profile: Any, seed: int) -> Noise:
    """The noise of a profile's sigmas (`step_noise_sigma`, `request_noise_sigma`, `run_noise_sigma`) and a seed."""
    return Noise(seed, step_sigma=profile.step_noise_sigma, request_sigma=profile.request_noise_sigma,
                 run_sigma=profile.run_noise_sigma)
