"""When a request reached the simulator: stamped as its head is read from the socket, not when its handler runs.

aiohttp hands a request to its handler three turns of the event loop after the bytes were read (the socket read,
the connection's task, the handler's task), and each turn waits behind whatever else is ready: at hundreds of
connections, other streams' writes and other arrivals. The simulator's arrival stamp (`arrival_ns` in the truth log,
the start of its own TTFT and E2EL) is taken in the first of those turns, where the request's head is parsed, so
the two later turns count as the server's own time, as a real server's HTTP frontend does."""

from __future__ import annotations

import time

from aiohttp import web
from aiohttp.web_protocol import RequestHandler


class StampingRequestHandler(RequestHandler):
    """aiohttp's connection handler that stamps (`time.time_ns()`) the read that completed a request's head."""

    __slots__ = ("head_read_ns",)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.head_read_ns = 0

    def data_received(self, data: bytes) -> None:
        now = time.time_ns()
        before = self._request_count
        super().data_received(data)
        if self._request_count != before:
            self.head_read_ns = now


class StampingServer(web.Server):
    """aiohttp's low-level server, its connections handled by `StampingRequestHandler`."""

    def __call__(self) -> RequestHandler:
        return StampingRequestHandler(self, loop=self._loop, **self._kwargs)


def stamp_arrivals(runner: web.AppRunner) -> None:
    """Make the connections of `runner` (after `setup()`, before a site starts) stamp their requests' heads."""
    server = runner.server
    if server is None:
        raise RuntimeError("stamp_arrivals needs a runner that is set up")
    server.__class__ = StampingServer


def arrival_ns(request: web.BaseRequest) -> int:
    """When `request`'s head was read from the socket (now, for a request that came another way)."""
    protocol = request.protocol
    stamp = protocol.head_read_ns if isinstance(protocol, StampingRequestHandler) else 0
    return stamp or time.time_ns()
