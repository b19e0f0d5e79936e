"""The expected achieved accept length under truncation at max_tokens, against the simulator's own draws."""

from __future__ import annotations

import asyncio
import random

import pytest

from harness.point.record.accept_length import expected_measured, expected_steps, step_distribution
from harness.sim.batching.spec import draw_accept_length

from .test_sim_engine import DFLASH8, make_engine, request, run_until_done


def test_step_distributions_have_the_golden_mean_before_truncation() -> None:
    d = step_distribution(4.05, "match-expected", 8)
    assert d == pytest.approx({4: 0.95, 5: 0.05})
    assert sum(a * p for a, p in d.items()) == pytest.approx(4.05)
    m = step_distribution(4.05, "multinomial", 8)
    assert sum(m.values()) == pytest.approx(1.0) and set(m) == set(range(1, 9))
    rng = random.Random(0)
    draws = [draw_accept_length(4.05, "multinomial", 8, rng) for _ in range(200_000)]
    assert sum(a * p for a, p in m.items()) == pytest.approx(sum(draws) / len(draws), abs=0.01)
    assert step_distribution(9.0, "match-expected", 8) == {8: 1.0}


def test_expected_steps_count_the_overshooting_step() -> None:
    e = expected_steps(9, {4: 1.0})
    assert e[:10] == [0, 1, 1, 1, 1, 2, 2, 2, 2, 3]  # 5 tokens take 2 steps of 4: the second commits only 1


@pytest.mark.parametrize(("length", "measured"), [(50, 3.9074), (100, 3.9785), (300, 4.0294)])
def test_short_outputs_measure_below_the_golden_value(length: int, measured: float) -> None:
    assert expected_measured([length] * 10, 4.05, "match-expected", 8) == pytest.approx(measured, abs=1e-4)


def test_expectation_matches_the_simulators_counters() -> None:
    env = {"SGLANG_SIMULATE_ACC_LEN": "4.05", "SGLANG_SIMULATE_ACC_METHOD": "match-expected"}
    eng = make_engine(DFLASH8, env, max_running=1)  # one request per step: independent draws
    lengths = [50, 80, 120] * 60
    reqs = [request(f"q{i} " * 30, n, rid=str(i)) for i, n in enumerate(lengths)]
    asyncio.run(run_until_done(eng, reqs, timeout=60))
    st = eng.stats
    measured = (st.generation_tokens_total - st.requests_total) / st.spec_verify_calls_total
    want = expected_measured(lengths, 4.05, "match-expected", 8)
    assert want is not None and abs(measured - want) / want < 0.005
    assert abs(measured - 4.05) / 4.05 > 0.01  # the golden value itself would be more than 1% off
