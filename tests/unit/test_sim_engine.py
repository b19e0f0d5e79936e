"""The step engine on a near-zero-latency profile: exact accounting, chunking, caching, acceptance."""

from __future__ import annotations

import asyncio
import itertools

from harness.sim.batching.engine import Engine
from harness.sim.batching.engine_config import EngineConfig
from harness.sim.batching.outbox import WAKE_GROUP
from harness.sim.batching.prompt import analyse, render_chat
from harness.sim.batching.request import SimRequest
from harness.sim.batching.spec import SpecConfig, read_simulate_env
from harness.sim.batching.timing import TimingModel, load_profile

PLAIN = SpecConfig(None, 0, 1, 1)
DFLASH8 = SpecConfig("DFLASH", 1, 1, 8)


def fast_timing() -> TimingModel:
    p = load_profile("demo").model_copy(
        update={"step_overhead": 1e-6, "prefill_overhead": 0.0, "hbm_bw": 1e18, "flops": 1e22}
    )
    return TimingModel(p, 1)


def make_engine(spec: SpecConfig = PLAIN, env: dict[str, str] | None = None, **kw: object) -> Engine:
    cfg = {
        "max_running": 64,
        "chunked_prefill_size": 8192,
        "max_prefill_tokens": 16384,
        "prefill_decode_interval": 0,
        "prefill_decode_interval_min_bs": 0,
        "stream_interval": 1,
        "spec": spec,
        "sim_env": read_simulate_env(env or {}),
        "kv_capacity": 1_000_000,
        "hicache": False,
        "host_capacity": 0,
        "write_policy": "write_through",
        "decode_log_interval": 40,
        "seed": 11,
    }
    cfg.update(kw)
    return Engine(EngineConfig(**cfg), fast_timing())  # type: ignore[arg-type]


def request(text: str, target: int, rid: str = "r", stream: bool = True) -> SimRequest:
    p = analyse(render_chat([{"role": "user", "content": text}]))
    return SimRequest(
        rid=rid,
        prompt_tokens=p.tokens,
        block_hashes=p.block_hashes,
        target_tokens=target,
        finish_reason="length",
        stream=stream,
        arrival_ns=0,
    )


async def run_until_done(engine: Engine, reqs: list[SimRequest], timeout: float = 20.0) -> None:
    task = asyncio.create_task(engine.run())
    for r in reqs:
        engine.submit(r)
    try:
        async with asyncio.timeout(timeout):
            while not all(r.finished or r.aborted for r in reqs):
                await asyncio.sleep(0.001)
    finally:
        task.cancel()


def chunk_sizes(r: SimRequest) -> list[int]:
    return [c.count for c in r.chunks]


def test_exact_tokens_and_stream_interval_chunking() -> None:
    eng = make_engine(stream_interval=5)
    r = request("hello " * 50, 23)
    asyncio.run(run_until_done(eng, [r]))
    assert r.output == 23 and r.finished
    assert chunk_sizes(r) == [1, 5, 5, 5, 5, 2]
    assert r.chunks[-1].finish == "length" and all(c.finish is None for c in list(r.chunks)[:-1])
    starts = [c.start for c in r.chunks]
    assert starts == [0, 1, 6, 11, 16, 21]
    assert eng.stats.generation_tokens_total == 23 and eng.kv.private_tokens == 0


def test_speculative_chunks_hold_at_least_stream_interval_tokens() -> None:
    env = {"SGLANG_SIMULATE_ACC_LEN": "4.05"}
    eng = make_engine(DFLASH8, env, stream_interval=20)
    r = request("spec " * 40, 500)
    asyncio.run(run_until_done(eng, [r]))
    sizes = chunk_sizes(r)
    assert sum(sizes) == 500 and sizes[0] == 1
    assert all(20 <= s < 20 + 8 for s in sizes[1:-1])
    assert r.verify_steps > 0 and r.accepted_tokens >= 499


def test_non_streaming_gets_one_final_chunk() -> None:
    eng = make_engine(stream_interval=1)
    r = request("x " * 30, 17, stream=False)
    asyncio.run(run_until_done(eng, [r]))
    assert chunk_sizes(r) == [17] and r.chunks[0].finish == "length"


def test_fixed_token_mode_streams_nothing_until_the_end() -> None:
    env = {"SGLANG_SIMULATE_ACC_LEN": "3", "SGLANG_SIMULATE_ACC_TOKEN_MODE": "fixed"}
    eng = make_engine(DFLASH8, env)
    r = request("y " * 30, 40)
    r.hold_until_finish = True
    asyncio.run(run_until_done(eng, [r]))
    assert chunk_sizes(r) == [40]


def test_achieved_accept_length_matches_target_over_10k_steps() -> None:
    env = {
        "SGLANG_SIMULATE_ACC_LEN": "4.05",
        "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
        "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
    }
    eng = make_engine(DFLASH8, env)
    reqs = [request(f"session {i} " * 20, 25_000, rid=str(i)) for i in range(2)]
    asyncio.run(run_until_done(eng, reqs, timeout=60))
    assert eng.stats.verify_calls_total >= 10_000
    assert abs(eng.stats.avg_accept_length - 4.05) <= 0.02
    assert sum(r.output for r in reqs) == 50_000


def test_accept_length_clamped_at_block_size() -> None:
    eng = make_engine(DFLASH8, {"SGLANG_SIMULATE_ACC_LEN": "9.7"})
    r = request("z " * 20, 801)
    asyncio.run(run_until_done(eng, [r]))
    assert eng.stats.avg_accept_length == 8.0
    assert r.verify_steps == 100  # 1 prefill token + 100 steps x 8


def test_prefix_cache_hits_grow_across_turns_of_a_session() -> None:
    eng = make_engine()
    messages: list[dict[str, str]] = [{"role": "system", "content": "You are a coding agent. " * 40}]
    cached = []

    async def session() -> None:
        task = asyncio.create_task(eng.run())
        for turn in range(5):
            messages.append({"role": "user", "content": f"turn {turn}: " + "please edit the file. " * 60})
            p = analyse(render_chat(messages))
            r = SimRequest(
                rid=f"t{turn}",
                prompt_tokens=p.tokens,
                block_hashes=p.block_hashes,
                target_tokens=8,
                finish_reason="length",
                stream=True,
                arrival_ns=0,
            )
            eng.submit(r)
            while not r.finished:
                await asyncio.sleep(0.001)
            cached.append(r.cached_tokens)
            messages.append({"role": "assistant", "content": "done " * 30})
        task.cancel()

    asyncio.run(session())
    assert cached[0] == 0
    assert all(b > a for a, b in itertools.pairwise(cached))
    assert eng.stats.cached_tokens_device == sum(cached)


def test_admission_respects_max_running_requests() -> None:
    eng = make_engine(max_running=2)
    seen = []
    orig = eng._plan_decode

    def spy():  # type: ignore[no-untyped-def]
        seen.append(eng.num_running)
        return orig()

    eng._plan_decode = spy  # type: ignore[method-assign]
    reqs = [request(f"q{i} " * 30, 20, rid=str(i)) for i in range(6)]
    asyncio.run(run_until_done(eng, reqs))
    assert max(seen) == 2 and all(r.output == 20 for r in reqs)


def test_prefill_decode_interval_runs_n_decodes_between_admissions() -> None:
    eng = make_engine(prefill_decode_interval=4, max_running=64)
    kinds: list[str] = []
    pf, dc = eng._plan_prefill, eng._plan_decode

    def spy_pf():  # type: ignore[no-untyped-def]
        plan = pf()
        if plan is not None:
            kinds.append("P")
        return plan

    def spy_dc():  # type: ignore[no-untyped-def]
        kinds.append("D")
        return dc()

    eng._plan_prefill, eng._plan_decode = spy_pf, spy_dc  # type: ignore[method-assign]

    async def staggered() -> None:
        task = asyncio.create_task(eng.run())
        reqs = []
        for i in range(4):
            r = request(f"stagger {i} " * 20, 30, rid=str(i))
            reqs.append(r)
            eng.submit(r)
            await asyncio.sleep(0.002)
        while not all(r.finished for r in reqs):
            await asyncio.sleep(0.001)
        task.cancel()

    asyncio.run(staggered())
    seq = "".join(kinds)
    first = seq.index("P")
    for gap in seq[first + 1 :].split("P")[:-1]:
        assert len(gap) >= 4, seq


def test_chunked_prefill_splits_long_prompts() -> None:
    eng = make_engine(chunked_prefill_size=1000)
    r = request("long prompt " * 1000, 3)  # ~3000 tokens
    asyncio.run(run_until_done(eng, [r]))
    assert eng.stats.prefill_steps == -(-r.prompt_tokens // 1000)
    assert r.output == 3


def test_preemption_under_kv_pressure_still_completes_exactly() -> None:
    eng = make_engine(kv_capacity=3000)
    reqs = [request(f"pressure {i} " * 100, 600, rid=str(i)) for i in range(4)]
    asyncio.run(run_until_done(eng, reqs, timeout=30))
    assert all(r.output == 600 and r.finished for r in reqs)
    assert eng.stats.retracted_total > 0
    assert eng.kv.private_tokens == 0


def test_abort_releases_everything() -> None:
    async def go() -> Engine:
        eng = make_engine()
        task = asyncio.create_task(eng.run())
        r = request("abort me " * 50, 10_000)
        eng.submit(r)
        while r.output < 5:
            await asyncio.sleep(0.001)
        eng.abort(r)
        await asyncio.sleep(0.01)
        task.cancel()
        assert not eng.running and eng.kv.private_tokens == 0 and eng.stats.aborted_total == 1
        return eng

    eng = asyncio.run(go())
    assert eng.stats.requests_total == 1 and eng.stats.generation_tokens_total < 10_000


def test_prefill_decode_interval_defers_the_next_chunk_of_a_chunked_prefill_too() -> None:
    # SGLang 0.5.23 re-arms the interval after every extend batch (each chunk) and defers every prefill,
    # the continuation of a chunked prefill included (scheduler.py `_should_defer_prefill`)
    eng = make_engine(prefill_decode_interval=6, chunked_prefill_size=256, max_prefill_tokens=256)
    kinds: list[str] = []
    pf, dc = eng._plan_prefill, eng._plan_decode

    def spy_pf():  # type: ignore[no-untyped-def]
        plan = pf()
        if plan is not None:
            kinds.append("P")
        return plan

    def spy_dc():  # type: ignore[no-untyped-def]
        kinds.append("D")
        return dc()

    eng._plan_prefill, eng._plan_decode = spy_pf, spy_dc  # type: ignore[method-assign]

    async def go() -> None:
        task = asyncio.create_task(eng.run())
        short = request("short", 400, rid="short")
        eng.submit(short)
        while short.output < 2:
            await asyncio.sleep(0.001)
        long = request("long prompt " * 400, 5, rid="long")  # ~1200 tokens: 5 chunks of 256
        eng.submit(long)
        while not long.finished:
            await asyncio.sleep(0.001)
        task.cancel()

    asyncio.run(go())
    seq = "".join(kinds)
    chunks = seq[seq.index("P", 1):]
    gaps = chunks.split("P")[1:-1]
    assert len(gaps) >= 4  # the long prompt's chunks, each after its own interval
    assert all(gap.count("D") >= 6 for gap in gaps), seq


def test_request_counters_are_bumped_when_a_request_ends() -> None:
    async def go() -> tuple[Engine, list[tuple[int, int, int]]]:
        eng = make_engine(DFLASH8, {"SGLANG_SIMULATE_ACC_LEN": "3.5"})
        task = asyncio.create_task(eng.run())
        r = request("count me " * 30, 200)
        eng.submit(r)
        seen = []
        while not r.finished:
            st = eng.stats
            seen.append((st.requests_total, st.generation_tokens_total, st.spec_verify_calls_total))
            await asyncio.sleep(0.0005)
        task.cancel()
        return eng, seen

    eng, seen = asyncio.run(go())
    assert set(seen) == {(0, 0, 0)}  # nothing while it runs (SGLang reports a request once, at its end)
    st = eng.stats
    assert (st.requests_total, st.generation_tokens_total) == (1, 200)
    assert st.prompt_tokens_total > 0 and st.spec_verify_calls_total == st.verify_calls_total > 0


def test_stream_interval_rule_of_0520_and_0523_under_speculative_decoding() -> None:
    # DFLASH commits several tokens per step: 0.5.23 sends whenever >= 20 tokens are unsent; 0.5.20 only when
    # the output length is 1 modulo 20, which multi-token steps mostly jump over
    env = {"SGLANG_SIMULATE_ACC_LEN": "3.5"}  # 3 or 4 tokens per step
    new = make_engine(DFLASH8, env, stream_interval=20)
    r_new = request("stream me " * 20, 400)
    asyncio.run(run_until_done(new, [r_new]))
    old = make_engine(DFLASH8, env, stream_interval=20, stream_rule="modulo")
    r_old = request("stream me " * 20, 400)
    asyncio.run(run_until_done(old, [r_old]))
    sizes_new, sizes_old = chunk_sizes(r_new), chunk_sizes(r_old)
    assert sum(sizes_new) == sum(sizes_old) == 400
    assert sizes_new[0] == 1 and all(s >= 20 for s in sizes_new[1:-1])  # the first token (prefill) at once
    ends = list(itertools.accumulate(sizes_old))
    assert all(e % 20 == 1 for e in ends[:-1])  # every chunk but the last ends at a length of 1 modulo 20
    assert len(sizes_old) < len(sizes_new) / 2 and max(sizes_old) >= 100  # text arrives in late bursts


def test_simulator_picks_the_stream_rule_of_its_flag_table() -> None:
    from harness.sim.frontend.app import resolve
    from harness.sim.frontend.cli import build_parser

    for version, rule in (("0.5.20", "modulo"), ("0.5.23", "unsent")):
        res = resolve(build_parser(version).parse_args(["--stream-interval", "20"]),
                      {"HARNESS_SIM_SGLANG_VERSION": version})
        assert res.engine.stream_rule == rule


def test_a_steps_streams_wake_a_group_per_turn_of_the_event_loop() -> None:
    """Twenty streams given chunks by a prefill and a decode step wake once each, WAKE_GROUP per turn, so a request
    arriving meanwhile waits for one group's writes, not for all twenty."""
    eng = make_engine()
    reqs = [request(f"lane {i} " * 20, 5, rid=f"r{i}") for i in range(20)]
    for r in reqs:
        eng.submit(r)
    for _ in ("prefill: every first token", "decode: every second token"):
        plan = eng._plan()
        assert plan is not None
        plan[1]()
    assert [chunk_sizes(r) for r in reqs] == [[1, 1]] * 20
    assert not any(r.wake.is_set() for r in reqs)
    waking = eng.outbox.wake_streams()
    woken_per_turn = []
    while True:
        try:
            waking.send(None)             # asyncio.sleep(0): the event loop polls its sockets here
        except StopIteration:
            woken_per_turn.append(sum(r.wake.is_set() for r in reqs))
            break
        woken_per_turn.append(sum(r.wake.is_set() for r in reqs))
    assert WAKE_GROUP == 2 and woken_per_turn == list(range(2, 22, 2))
