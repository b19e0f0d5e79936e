"""The simulator stamps a request's arrival when its head is read from the socket, before its handler runs (a
callback that holds the event loop in between counts as the server's time, not the way in); its chat handler
parses and hashes only after that, and requests that reach it together are all stamped before any of them is
parsed: one request's intake work is never counted in another's way in."""

from __future__ import annotations

import asyncio
import random
import socket
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp import web

from harness.sim.batching import prompt as prompt_mod
from harness.sim.batching.engine import Engine
from harness.sim.batching.engine_config import EngineConfig
from harness.sim.batching.spec import SpecConfig, read_simulate_env
from harness.sim.batching.timing import TimingModel, load_profile
from harness.sim.frontend import server
from harness.sim.frontend.intake import StampingRequestHandler, arrival_ns, stamp_arrivals
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

    monkeypatch.setattr(server, "request_arrival_ns", lambda request: stamp())
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


HOLD_S = 0.1


def _post(i: int) -> bytes:
    return (f"POST /r{i} HTTP/1.1\r\nHost: sim\r\nContent-Length: 2\r\n\r\n{{}}").encode()


def test_the_stamp_is_the_read_of_the_head_not_the_handler() -> None:
    """Two requests read in one turn of the loop: each handler holds the loop for HOLD_S, so whichever runs second
    started HOLD_S after its request was read, and its stamp says when it was read."""
    seen: list[tuple[int, int, str]] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append((arrival_ns(request), time.time_ns(), type(request.protocol).__name__))
        time.sleep(HOLD_S)   # holds the event loop, as a long step's bookkeeping would
        return web.Response(text="ok")

    async def serve() -> tuple[int, int]:
        app = web.Application()
        app.router.add_post("/r{i}", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        stamp_arrivals(runner)
        site = web.SockSite(runner, socket.create_server(("127.0.0.1", 0)))
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        await asyncio.sleep(0.05)                       # both connections accepted
        sent = threading.Event()

        def send() -> None:
            for i, c in enumerate(conns):
                c.sendall(_post(i))
            sent.set()

        sent_ns = time.time_ns()
        threading.Thread(target=send).start()
        sent.wait(5)                                    # the loop is held here: both heads wait in the kernel
        held_until = time.time_ns()
        loop = asyncio.get_running_loop()
        replies = await asyncio.gather(*(loop.run_in_executor(None, c.recv, 1024) for c in conns))
        assert all(r.startswith(b"HTTP/1.1 200") for r in replies)
        for c in conns:
            c.close()
        await runner.cleanup()
        return sent_ns, held_until

    sent_ns, held_until = asyncio.run(serve())
    assert [name for *_, name in seen] == [StampingRequestHandler.__name__] * 2
    assert all(sent_ns <= stamp for stamp, _, _ in seen)
    waited = sorted(handled - stamp for stamp, handled, _ in seen)
    assert waited[1] >= HOLD_S * 1e9                 # read before the first handler held the loop
    assert waited[0] < HOLD_S * 1e9 and all(stamp >= held_until for stamp, _, _ in seen)


def test_a_request_that_came_another_way_is_stamped_when_asked() -> None:
    before = time.time_ns()
    request = SimpleNamespace(protocol=None)
    assert before <= arrival_ns(request) <= time.time_ns()  # type: ignore[arg-type]
