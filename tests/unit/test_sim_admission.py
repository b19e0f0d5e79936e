"""SGLang's admission rule: a request waits until its uncached prompt and future output fit the pool."""

from __future__ import annotations

import asyncio

from harness.sim.batching.admission import (
    CLIP_MAX_NEW_TOKENS,
    NewTokenRatio,
    admission_need,
    fits,
    future_tokens,
    retraction_order_key,
    running_reservation,
)
from tests.unit.test_sim_engine import make_engine, request, run_until_done


def test_future_output_is_clipped_and_ignore_eos_reserves_it_all() -> None:
    assert future_tokens(100, 30) == 70
    assert future_tokens(100_000, 0) == CLIP_MAX_NEW_TOKENS
    assert future_tokens(10, 20) == 0
    assert running_reservation([(100, 0, True), (100, 0, False)], 0.5) == 150
    assert admission_need(1000, 200, 0) == 1201
    assert fits(10, 11) and not fits(10, 10)


def test_new_token_ratio_decays_resets_and_reestimates_after_retraction() -> None:
    r = NewTokenRatio()
    assert r.current == 0.7
    for _ in range(10_000):
        r.decay_step()
    assert abs(r.current - 0.7 * 0.14) < 1e-9
    r.reset()
    assert r.current == 0.7
    r.after_retract([(1000, 100), (1000, 300)])
    assert abs(r.current - (400 + 40) / 2001) < 1e-9
    assert NewTokenRatio(conservativeness=2.0).current == 1.0


def test_retraction_takes_fewest_outputs_then_longest_prompt() -> None:
    reqs = [(5, 100), (2, 50), (2, 900)]
    assert min(reqs, key=lambda r: retraction_order_key(*r)) == (2, 900)


def test_a_request_whose_output_does_not_fit_waits_for_the_running_one() -> None:
    # each request: ~1k prompt tokens + 3000 output tokens; the pool holds one of them, not two
    eng = make_engine(kv_capacity=6000)
    a = request("alpha " * 800, 3000, rid="a")
    b = request("bravo " * 800, 3000, rid="b")
    for r in (a, b):
        r.ignore_eos = True
    asyncio.run(run_until_done(eng, [a, b]))
    assert a.finished and b.finished
    # b waited in the queue (a prefill step of its own, after a's) instead of being admitted and retracted
    assert eng.stats.prefill_steps == 2 and eng.stats.retracted_total == 0
    assert b.first_token_mono > a.first_token_mono


def test_both_run_together_when_the_pool_holds_both() -> None:
    eng = make_engine(kv_capacity=20000)
    a = request("alpha " * 800, 3000, rid="a")
    b = request("bravo " * 800, 3000, rid="b")
    asyncio.run(run_until_done(eng, [a, b]))
    assert a.finished and b.finished and eng.stats.prefill_steps == 1
