"""Synthetic acceptance read and drawn exactly as SGLang does (SGLANG_SIMULATE_ACC_*)."""

from __future__ import annotations

import argparse
import random
import statistics

import pytest

from harness.sim.batching.spec import (
    AcceptSampler,
    SpecArgsError,
    check_at_start,
    check_at_verify,
    draw_accept_length,
    read_simulate_env,
    resolve_spec,
)


def ns(**kw: object) -> argparse.Namespace:
    base = {
        "speculative_algorithm": None,
        "speculative_num_steps": None,
        "speculative_eagle_topk": None,
        "speculative_num_draft_tokens": None,
        "speculative_dflash_block_size": None,
    }
    base.update(kw)
    return argparse.Namespace(**base)


def test_match_expected_mean_within_002_over_20k_steps() -> None:
    rng = random.Random(7)
    draws = [draw_accept_length(4.05, "match-expected", 8, rng) for _ in range(20_000)]
    assert set(draws) == {4, 5}
    assert abs(statistics.fmean(draws) - 4.05) < 0.02


def test_match_expected_clamps_at_max_len_and_one() -> None:
    rng = random.Random(1)
    assert {draw_accept_length(9.5, "match-expected", 8, rng) for _ in range(200)} == {8}
    assert {draw_accept_length(0.3, "match-expected", 8, rng) for _ in range(200)} == {1}
    assert {draw_accept_length(5.5, "match-expected", 5, rng) for _ in range(50)} == {5}


def test_multinomial_is_a_clamped_rounded_normal() -> None:
    rng = random.Random(3)
    draws = [draw_accept_length(2.0, "multinomial", 4, rng) for _ in range(5000)]
    assert min(draws) >= 1 and max(draws) <= 4
    # biased up near the lower bound, as SGLang's legacy method is
    assert statistics.fmean(draws) > 2.0


def test_invalid_method_error_is_sglangs() -> None:
    with pytest.raises(ValueError, match=r"^Invalid simulate_acc_method: banana$"):
        draw_accept_length(3.0, "banana", 4, random.Random())


def test_env_parsing_and_silent_fallback() -> None:
    env = read_simulate_env({})
    assert (env.acc_len, env.method, env.token_mode, env.enabled) == (-1.0, "match-expected", "fixed", False)
    bad = read_simulate_env({"SGLANG_SIMULATE_ACC_LEN": "3,24"})
    assert bad.acc_len == -1.0 and not bad.enabled and bad.warning
    ok = read_simulate_env(
        {
            "SGLANG_SIMULATE_ACC_LEN": "4.05",
            "SGLANG_SIMULATE_ACC_METHOD": "multinomial",
            "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
        }
    )
    assert (ok.acc_len, ok.method, ok.token_mode, ok.enabled) == (
        4.05,
        "multinomial",
        "real-draft-token",
        True,
    )


def test_token_mode_errors_match_sglang_text() -> None:
    dflash = resolve_spec(ns(speculative_algorithm="DFLASH", speculative_num_draft_tokens=8))
    env = read_simulate_env({"SGLANG_SIMULATE_ACC_LEN": "4", "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real"})
    with pytest.raises(ValueError) as exc:
        check_at_start(dflash, env)
    assert (
        str(exc.value)
        == "Invalid SGLANG_SIMULATE_ACC_TOKEN_MODE 'real'; expected 'fixed' or 'real-draft-token'."
    )
    eagle = resolve_spec(
        ns(
            speculative_algorithm="EAGLE",
            speculative_num_steps=3,
            speculative_eagle_topk=4,
            speculative_num_draft_tokens=8,
        )
    )
    check_at_start(eagle, env)  # EAGLE checks only at verify time
    with pytest.raises(ValueError, match="Invalid SGLANG_SIMULATE_ACC_TOKEN_MODE 'real'"):
        check_at_verify(eagle, env)
    real = read_simulate_env(
        {"SGLANG_SIMULATE_ACC_LEN": "3", "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token"}
    )
    with pytest.raises(ValueError, match=r"requires speculative_eagle_topk=1\.$"):
        check_at_verify(eagle, real)
    # simulation off: nothing is checked, like SGLang
    check_at_verify(eagle, read_simulate_env({"SGLANG_SIMULATE_ACC_TOKEN_MODE": "bogus"}))


def test_resolve_spec_like_sglang() -> None:
    assert resolve_spec(ns()).enabled is False
    e = resolve_spec(ns(speculative_algorithm="nextn"))
    assert (e.algorithm, e.num_steps, e.eagle_topk, e.num_draft_tokens, e.max_accept_len) == (
        "EAGLE",
        3,
        1,
        4,
        4,
    )
    e = resolve_spec(
        ns(
            speculative_algorithm="EAGLE",
            speculative_num_steps=2,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=9,
        )
    )
    assert e.num_draft_tokens == 3 and e.max_accept_len == 3
    d = resolve_spec(ns(speculative_algorithm="DFLASH", speculative_dflash_block_size=8))
    assert (d.num_steps, d.eagle_topk, d.num_draft_tokens, d.max_accept_len) == (1, 1, 8, 8)
    assert resolve_spec(ns(speculative_algorithm="DFLASH")).max_accept_len == 16
    with pytest.raises(SpecArgsError):
        resolve_spec(
            ns(
                speculative_algorithm="DFLASH",
                speculative_num_draft_tokens=8,
                speculative_dflash_block_size=16,
            )
        )


def test_sampler_draws_one_length_per_step_without_simulation_too() -> None:
    spec = resolve_spec(ns(speculative_algorithm="DFLASH", speculative_num_draft_tokens=8))
    s = AcceptSampler(spec, read_simulate_env({}), natural_fraction=0.5, rng=random.Random(0))
    draws = [s.draw() for _ in range(10_000)]
    assert abs(statistics.fmean(draws) - 4.5) < 0.05
    plain = AcceptSampler(
        resolve_spec(ns()), read_simulate_env({"SGLANG_SIMULATE_ACC_LEN": "3"}), 0.5, random.Random(0)
    )
    assert {plain.draw() for _ in range(100)} == {1}
