"""Seeded step-time noise: reproducible with one seed, different with another, off at sigma 0."""

from __future__ import annotations

import statistics

from harness.sim.batching.noise import Noise, noise_seed_of


def _draws(seed: int, n: int = 200) -> list[float]:
    noise = Noise(seed, step_sigma=0.05, request_sigma=0.15, run_sigma=0.03)
    out = []
    for _ in range(n):
        f = noise.request_factor()
        out.append(noise.step(0.01, [(1.0, f)]))
    return out


def test_same_seed_same_draws() -> None:
    assert _draws(7) == _draws(7)


def test_different_seeds_differ() -> None:
    assert _draws(7) != _draws(8)
    assert Noise(1, run_sigma=0.03).run_factor != Noise(2, run_sigma=0.03).run_factor


def test_zero_sigmas_leave_times_alone() -> None:
    noise = Noise(3)
    assert not noise.enabled
    assert noise.request_factor() == 1.0
    assert noise.step(0.0123, [(5.0, 1.0)]) == 0.0123


def test_multipliers_have_mean_about_one() -> None:
    noise = Noise(11, step_sigma=0.05)
    xs = [noise.step(1.0) for _ in range(20000)]
    assert abs(statistics.fmean(xs) - 1.0) < 0.01
    assert statistics.pstdev(xs) > 0.03


def test_request_factors_weight_the_step() -> None:
    noise = Noise(5, request_sigma=0.5)
    # only request factors are on: the step is scaled by the token-weighted mean factor
    assert noise.step(1.0, [(3.0, 2.0), (1.0, 1.0)]) == 1.75


def test_seed_choice() -> None:
    assert noise_seed_of(4, 9) == 4
    assert noise_seed_of(None, 9) == 9
    assert isinstance(noise_seed_of(None, None), int)  # fresh from the OS
