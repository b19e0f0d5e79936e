"""The KV handover between a prefill and a decode worker: the prefill side's bootstrap server and the
decode side's request to it (a small HTTP exchange standing in for SGLang's transfer engine).

`GET /sim/kv/{room}?timeout=S` on the prefill worker's `--disaggregation-bootstrap-port` waits until the
room's prefill has ended, then answers 200 `{"room", "prompt_tokens", "cached_tokens"}` (the KV is the
caller's now), 410 `{"error"}` when the prefill was aborted, or 404 `{"error"}` when the room did not
come (unknown or still prefilling) within S seconds. `GET /health` answers 200.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
from aiohttp import web

from harness.sim.batching.topology.disagg import Bootstrap, Room, RoomBook, waiting_timeout_message


class BootstrapServer:
    """The prefill worker's rooms, served to decode workers."""

    def __init__(self, book: RoomBook, expire_after: float):
        self.book = book
        self.expire_after = expire_after
        self._changed = asyncio.Event()

    def changed(self) -> None:
        """Wake every waiting decode request (a room opened or ended); also forgets stale rooms."""
        self.book.expire(time.monotonic(), self.expire_after)
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    async def handover(self, request: web.Request) -> web.Response:
        try:
            room = int(request.match_info["room"])
            timeout = float(request.query.get("timeout", "300"))
        except ValueError:
            return web.json_response({"error": "room and timeout must be numbers"}, status=400)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (got := self.book.take(room)) is None:
            left = deadline - loop.time()
            if left <= 0:
                known = self.book.get(room) is not None
                why = "still prefilling" if known else "unknown"
                return web.json_response({"error": f"room {room} is {why} after {timeout:.1f}s"}, status=404)
            event = self._changed
            try:
                await asyncio.wait_for(event.wait(), left)
            except TimeoutError:
                pass
        if got.state == "failed":
            return web.json_response({"error": got.message}, status=410)
        return web.json_response({"room": room, "prompt_tokens": got.prompt_tokens,
                                  "cached_tokens": got.cached_tokens})

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/sim/kv/{room}", self.handover)
        app.router.add_get("/health", self.health)
        return app


async def collect(target: Bootstrap, timeout: float) -> Room | str:
    """Collect a room's KV from the prefill worker at `target`: the room, or why the handover failed."""
    start = time.monotonic()
    url = f"http://{target.host}:{target.port}/sim/kv/{target.room}"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout + 5.0)) as session:
            async with session.get(url, params={"timeout": f"{timeout:.3f}"}) as resp:
                status = resp.status
                data = await resp.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        return (f"KV transfer for room {target.room} failed: the prefill worker's bootstrap server at "
                f"{target.host}:{target.port} did not answer ({type(exc).__name__}: {exc})")
    if status == 404:
        return waiting_timeout_message(target.room, time.monotonic() - start)
    if status != 200 or not isinstance(data, dict):
        message = data.get("error") if isinstance(data, dict) else None
        return f"KV transfer for room {target.room} failed: {message or f'bootstrap server answered {status}'}"
    return Room("ready", start, int(data.get("prompt_tokens", 0)), int(data.get("cached_tokens", 0)))
