"""The simulator's scheduler lines (`harness.sim.batching.schedlog`) from its engine's real state, exactly; and the
log level that decides them and the routed lines a deployment's stickiness is measured from."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import yaml

from harness.inspect.batch_log import parse_batch_log
from harness.recipe.load import expand_points, parse_recipe_text
from harness.recipe.multinode.deployment import SIM_ROUTING_LOG
from harness.recipe.plan import build_plan
from harness.sim.batching.engine import Engine
from harness.sim.batching.schedlog import DEBUG, INFO, SchedulerLog, log_level, scheduler_prefix
from harness.sim.batching.spec import SpecConfig
from tests.unit.test_sim_engine import DFLASH8, PLAIN, make_engine, request, run_until_done

ROOT = Path(__file__).resolve().parents[2]
ONE_P_ONE_D = ROOT / "recipes" / "examples" / "disagg-gb300-1p1d-tp4-tp4-sim.yaml"


def _logged(spec: SpecConfig = PLAIN, env: dict[str, str] | None = None, interval: int = 10,
            **kw: object) -> tuple[list[str], Engine]:
    lines: list[str] = []
    eng = make_engine(spec, env, decode_log_interval=interval, **kw)
    eng.log = SchedulerLog(" TP0", interval, spec, write=lines.append)
    return lines, eng


def test_chunked_prefill_lines_count_earlier_chunks_as_cached_and_the_rest_as_pending() -> None:
    lines, eng = _logged(chunked_prefill_size=64, max_prefill_tokens=64, kv_capacity=10_000)
    r = request("word " * 300, 1)
    asyncio.run(run_until_done(eng, [r]))
    got = parse_batch_log("\n".join(lines))
    p = r.prompt_tokens
    chunks = [min(64, p - start) for start in range(0, p, 64)]
    assert [(x.kind, x.new_seq, x.new_token, x.cached_token, x.running_req, x.queue_req) for x in got] == [
        ("prefill", 1, n, 64 * i, 0, 0) for i, n in enumerate(chunks)]
    assert [line.split("#pending-token: ")[1].split(",")[0] for line in lines] == [
        str(p - 64 * (i + 1) if i + 1 < len(chunks) else 0) for i in range(len(chunks))]
    assert all(line.startswith("[") and " TP0] Prefill batch, " in line for line in lines)


def test_a_decode_line_every_interval_with_the_batch_and_the_pool_in_use() -> None:
    lines, eng = _logged(interval=10, kv_capacity=10_000)
    reqs = [request(f"session {i} " + "word " * 100, 41, rid=str(i)) for i in range(2)]
    asyncio.run(run_until_done(eng, reqs))
    decode = [x for x in parse_batch_log("\n".join(lines)) if x.kind == "decode"]
    assert len(decode) == 4                  # 40 decode batches (the first token comes from the prefill)
    prompt = sum(r.prompt_tokens for r in reqs)
    # after decode batch 10k each request holds its prompt and 1 + 10k tokens
    assert [(x.running_req, x.num_token, x.queue_req, x.accept_len) for x in decode] == [
        (2, prompt + 2 * (1 + 10 * k), 0, None) for k in (1, 2, 3)] + [(2, 0, 0, None)]  # the last: both finished
    assert all(x.gen_throughput is not None and x.gen_throughput > 0 for x in decode)
    assert "accept len" not in "".join(lines) and all("cuda graph: True" in line for line in lines if "Decode" in line)


def test_speculative_lines_carry_the_intervals_accept_length_and_rate() -> None:
    env = {"SGLANG_SIMULATE_ACC_LEN": "3", "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token"}
    lines, eng = _logged(DFLASH8, env, interval=4, max_running=48)
    asyncio.run(run_until_done(eng, [request("word " * 50, 1 + 3 * 8)]))
    spec = [line for line in lines if "Decode batch" in line]
    assert len(spec) == 2 and all("accept len: 3.00, accept rate: 0.29, " in line for line in spec)  # (3-1)/(8-1)
    assert {x.accept_len for x in parse_batch_log("\n".join(spec))} == {3.0}


def test_gen_throughput_is_the_intervals_decode_tokens_over_its_wall_time() -> None:
    now = [100.0]
    lines: list[str] = []
    log = SchedulerLog("", 2, PLAIN, write=lines.append, clock=lambda: now[0], wall=lambda: 0.0)

    class Pool:
        capacity = 1000
        used = 500

        def evictable_tokens(self) -> int:
            return 100

    assert not log.decode_step(8, 8, 1)
    now[0] += 0.5
    assert log.decode_step(8, 8, 1)
    log.decode(8, Pool(), False, 2)   # type: ignore[arg-type]
    assert lines == ["[1970-01-01 00:00:00] Decode batch, #running-req: 8, #token: 400, token usage: 0.40, "
                     "cuda graph: False, gen throughput (token/s): 32.00, #queue-req: 2"]


def test_log_level_and_prefix_follow_sglang_flags() -> None:
    assert log_level(argparse.Namespace(log_level="info")) == log_level({}) == INFO
    assert log_level({"log_level": "DEBUG"}) == DEBUG and log_level({"log_level": "warning"}) > INFO
    assert scheduler_prefix({"tp_size": 4, "ep_size": 4, "attn_dp_size": 4}) == " DP0 TP0 EP0"
    assert scheduler_prefix({"tp_size": 1}) == ""


def test_a_deployments_simulated_workers_log_routing_unless_the_role_sets_a_level() -> None:
    raw = yaml.safe_load(ONE_P_ONE_D.read_text())
    raw["deployment"]["decode"]["args"]["log-level"] = "info"
    recipe = parse_recipe_text(yaml.safe_dump(raw, sort_keys=False), str(ONE_P_ONE_D))
    dep = build_plan(recipe, expand_points(recipe)[0], "d.yaml").deployment
    assert dep is not None
    prefill, decode = (role.worker_plans[0].nodes[0].argv for role in dep.roles)
    assert prefill[-2:] == SIM_ROUTING_LOG == ["--log-level", "debug"]
    assert decode.count("--log-level") == 1 and decode[decode.index("--log-level") + 1] == "info"
