"""The simulator's chat handler stamps a request's arrival before it parses and hashes the prompt, and requests
that reach it together are all stamped before any of them is parsed: one request's intake work is never counted
in another's way in."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

import pytest

from harness.sim.batching import prompt as prompt_mod
from harness.sim.batching.engine import Engine
from harness.sim.batching.engine_config import EngineConfig
from harness.sim.batching.spec import SpecConfig, read_simulate_env
from harness.sim.batching.timing import TimingModel, load_profile
from harness.sim.frontend import server
from harness.sim.frontend.server_state import Faults, ServerState


def _state() -> ServerState:
    cfg = EngineConfig(max_running=8, chunked_prefill_size=8192, max_prefill_tokens=16384, prefill_decode_interval=0,
                       prefill_decode_interval_min_bs=0, stream_interval=1, spec=SpecConfig(None, 0, 1, 1),
                       sim_env=read_simulate_env({}), kv_capacity=100_000, hicache=False, host_capacity=0,
                       write_policy="write_through", decode_log_interval=40, seed=1)
    engine = Engine(cfg, TimingModel(load_profile("demo"), 1))
    return ServerState(engine=engine, model_name="m", model_path="m", context_length=64, server_info={},
                       enable_metrics=False, enable_cache_report=False, truth=None,
                       faults=Faults(rng=random.Random(0)), ready=True)


class _Request:
    """What the handler reads of a request: its headers and its JSON body."""

    def __init__(self, body: dict[str, Any]):
        self.headers: dict[str, str] = {}
        self._body = body

    async def json(self) -> dict[str, Any]:
        return self._body


def test_requests_arriving_together_are_stamped_before_either_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []

    def stamp() -> int:
        events.append("stamp")
        return len(events)

    def parse(data: bytes) -> prompt_mod.Prompt:
        events.append("parse")
        return prompt_mod.analyse(data)

    monkeypatch.setattr(server, "time", SimpleNamespace(time_ns=stamp, monotonic=lambda: 0.0))
    monkeypatch.setattr(server, "analyse", parse)
    handlers = server.Handlers(_state())
    # prompts longer than the 64-token context: each is answered 400 right after its prompt is analysed
    long_prompt = {"messages": [{"role": "user", "content": "word " * 200}]}

    async def both() -> list[int]:
        replies = await asyncio.gather(handlers.chat(_Request(long_prompt)), handlers.chat(_Request(long_prompt)))
        return [r.status for r in replies]

    assert asyncio.run(both()) == [400, 400]
    assert events == ["stamp", "stamp", "parse", "parse"]
