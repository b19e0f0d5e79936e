"""The two disaggregated roles of a simulated worker, between the HTTP handler and the engine.

- **Prefill** (`--disaggregation-mode prefill`): computes the prompt and its first token (the reply it
  sends back is that one-token completion), opens the request's room on arrival and marks it ready
  when the prefill ends, so the decode worker can collect it through the bootstrap server.
- **Decode** (`--disaggregation-mode decode`): collects the room from the prefill worker named in the
  body, waits the transfer time (`harness.sim.batching.topology.disagg.transfer_seconds`), then takes the request straight
  into its running batch (no prefill of its own) and decodes the rest. A handover that fails fails the
  request with HTTP 500 before any byte is streamed.
"""

from __future__ import annotations

import asyncio
import time

from harness.sim.batching.engine import Engine
from harness.sim.batching.request import SimRequest
from harness.sim.batching.topology.bootstrap import BootstrapServer, collect
from harness.sim.batching.topology.disagg import (
    BOOTSTRAP_TIMEOUT_ENV,
    WAITING_TIMEOUT_ENV,
    Bootstrap,
    RoomBook,
    timeout_from_env,
    transfer_seconds,
)


class PrefillRole:
    mode = "prefill"

    def __init__(self, engine: Engine, server: BootstrapServer):
        self.engine = engine
        self.server = server
        self.book: RoomBook = server.book
        engine.on_finish = self.finished

    def shape(self, target: int, finish: str) -> tuple[int, str]:
        """The prefill worker produces the first token only."""
        return 1, "length"

    async def admit(self, req: SimRequest, target: Bootstrap) -> str | None:
        req.room = target.room
        self.book.open(target.room, time.monotonic())
        self.server.changed()
        self.engine.submit(req)
        return None

    def finished(self, req: SimRequest) -> None:
        if req.room is not None:
            self.book.ready(req.room, req.prompt_tokens, req.cached_tokens)
            self.server.changed()

    def ended(self, req: SimRequest) -> None:
        """The request left without finishing (aborted): its room fails."""
        if req.room is not None:
            self.book.fail(req.room, f"prefill of room {req.room} was aborted")
            self.server.changed()


class DecodeRole:
    mode = "decode"

    def __init__(self, engine: Engine, kv_bytes_per_token: float, transfer_gbps: float, waiting_timeout: float):
        self.engine = engine
        self.kv_bytes_per_token = kv_bytes_per_token
        self.transfer_gbps = transfer_gbps
        self.waiting_timeout = waiting_timeout
        self.transferred_tokens = 0

    def shape(self, target: int, finish: str) -> tuple[int, str]:
        return target, finish

    async def admit(self, req: SimRequest, target: Bootstrap) -> str | None:
        req.room = target.room
        got = await collect(target, self.waiting_timeout)
        if isinstance(got, str):
            return got
        await asyncio.sleep(transfer_seconds(req.prompt_tokens, self.kv_bytes_per_token, self.transfer_gbps))
        self.transferred_tokens += req.prompt_tokens
        req.cached_tokens = got.cached_tokens
        self.engine.submit_prefilled(req)
        return None

    def ended(self, req: SimRequest) -> None:
        return None


Role = PrefillRole | DecodeRole


def make_role(mode: str, engine: Engine, kv_bytes_per_token: float, transfer_gbps: float,
              env: dict[str, str]) -> Role | None:
    """The role for `--disaggregation-mode` (None for `null`, a plain worker)."""
    if mode == "prefill":
        return PrefillRole(engine, BootstrapServer(RoomBook(), timeout_from_env(env, BOOTSTRAP_TIMEOUT_ENV)))
    if mode == "decode":
        return DecodeRole(engine, kv_bytes_per_token, transfer_gbps, timeout_from_env(env, WAITING_TIMEOUT_ENV))
    return None
