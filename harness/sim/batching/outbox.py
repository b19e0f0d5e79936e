"""What a step hands to the HTTP streams: each request's chunks by the stream-interval rule, and waking the streams
that got one, `WAKE_GROUP` per turn of the event loop.

The streams write in the order they wake, each a socket write; a step's whole batch woken at once would run every
write before the event loop next reads its sockets, so a request arriving meanwhile would wait for all of them
(about a millisecond at 64 streams) before the server saw it. A group per turn lets the reads in between, and a
request needs a few turns to reach its handler (the socket read, the connection's task, the handler's task), each
carrying a group's writes: two per turn keep that under a few tenths of a millisecond at any batch size.
"""

from __future__ import annotations

import asyncio

from harness.sim.batching.request import Chunk, SimRequest

WAKE_GROUP = 2   # streams woken per turn of the event loop after a step (its socket reads come between)


class Outbox:
    def __init__(self, stream_interval: int, stream_rule: str):
        self.stream_interval = stream_interval
        self.stream_rule = stream_rule      # "unsent" or "modulo" (`EngineConfig.stream_rule`)
        self._unwoken: list[SimRequest] = []   # given chunks since the last wake, their streams not yet woken

    def emit(self, r: SimRequest, final: bool) -> None:
        """Hand `r` its unsent tokens: all of them when `final`, else a chunk when the stream interval says so."""
        unsent = r.output - r.emitted
        if final:
            self._hand(r, Chunk(r.emitted, unsent, r.finish_reason))
            r.emitted = r.output
            return
        if not r.stream or r.hold_until_finish:
            return
        interval = self.stream_interval
        if self.stream_rule == "modulo":
            send = interval == 1 or r.output % interval == 1
        else:
            send = r.emitted == 0 or unsent >= interval
        if send and unsent > 0:
            self._hand(r, Chunk(r.emitted, unsent, None))
            r.emitted = r.output

    def _hand(self, r: SimRequest, chunk: Chunk) -> None:
        if not r.chunks:                 # else it is already due a wake, or woken and not yet drained
            self._unwoken.append(r)
        r.chunks.append(chunk)

    async def wake_streams(self) -> None:
        """Wake the streams handed chunks since the last call, `WAKE_GROUP` per turn of the event loop."""
        unwoken, self._unwoken = self._unwoken, []
        for i in range(0, len(unwoken), WAKE_GROUP):
            if i:
                await asyncio.sleep(0)
            for r in unwoken[i:i + WAKE_GROUP]:
                r.wake.set()
