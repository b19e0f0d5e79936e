"""Prefill/decode disaggregation, the pure parts: the router's bootstrap fields, rooms, transfer time.

With `--disaggregation-mode prefill|decode` SGLang's router sends one request body to a prefill worker
and a decode worker at once, with `bootstrap_host`, `bootstrap_port` and `bootstrap_room` added. The
prefill worker computes the prompt's KV cache and hands it over under that room number; the decode
worker asks the prefill worker's bootstrap server (`--disaggregation-bootstrap-port`) for the room,
waits for the transfer, then decodes and streams the reply the client sees.

Timeouts are SGLang's environment variables, with SGLang's defaults: the decode side gives up on a
room after `SGLANG_DISAGGREGATION_WAITING_TIMEOUT` seconds, the prefill side forgets a finished room
that no decode worker collected after `SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT` seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

MODES = ("null", "prefill", "decode")
WAITING_TIMEOUT_ENV = "SGLANG_DISAGGREGATION_WAITING_TIMEOUT"
BOOTSTRAP_TIMEOUT_ENV = "SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT"
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_TRANSFER_GBPS = 400.0  # one 400 Gb/s RDMA link between the two workers


@dataclass(frozen=True)
class Bootstrap:
    """Where the decode worker collects a request's KV cache: the prefill worker's bootstrap server and room."""

    host: str
    port: int
    room: int


def bootstrap_of(body: Mapping[str, Any]) -> Bootstrap | str:
    """The bootstrap fields the router added to a request body, or why they are missing or malformed."""
    room = body.get("bootstrap_room")
    if room is None:
        return "bootstrap_room should not be None"  # SGLang's assertion on a PD worker
    host, port = body.get("bootstrap_host"), body.get("bootstrap_port")
    if not isinstance(room, int) or isinstance(room, bool) or room < 0:
        return f"bootstrap_room: a non-negative integer is required, got {room!r}"
    if not isinstance(host, str) or not host:
        return f"bootstrap_host: a host name is required, got {host!r}"
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        return f"bootstrap_port: a port number is required, got {port!r}"
    return Bootstrap(host, port, room)


def transfer_seconds(tokens: int, kv_bytes_per_token: float, gbps: float) -> float:
    """Seconds to move `tokens` of KV cache from the prefill to the decode worker over a `gbps` Gb/s link."""
    if tokens <= 0:
        return 0.0
    return tokens * kv_bytes_per_token * 8.0 / (gbps * 1e9)


def timeout_from_env(env: Mapping[str, str], name: str) -> float:
    """A disaggregation timeout in seconds from SGLang's variable `name` (default 300 s, as SGLang)."""
    raw = env.get(name, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def waiting_timeout_message(room: int, elapsed: float) -> str:
    """SGLang's failure text for a room whose KV never arrived at the decode worker."""
    return f"Request {room} timed out after {elapsed:.1f}s in KVPoll.WaitingForInput"


RoomState = Literal["prefilling", "ready", "failed"]


@dataclass
class Room:
    """One request's KV handover on the prefill worker."""

    state: RoomState
    opened: float
    prompt_tokens: int = 0
    cached_tokens: int = 0
    message: str = ""


class RoomBook:
    """The prefill worker's rooms: opened when the request arrives, ready when its prefill is done,
    failed when it was aborted, removed when the decode worker collects it (or it expires)."""

    def __init__(self) -> None:
        self.rooms: dict[int, Room] = {}

    def open(self, room: int, now: float) -> None:
        self.rooms[room] = Room("prefilling", now)

    def ready(self, room: int, prompt_tokens: int, cached_tokens: int) -> None:
        r = self.rooms.get(room)
        if r is not None and r.state == "prefilling":
            r.state, r.prompt_tokens, r.cached_tokens = "ready", prompt_tokens, cached_tokens

    def fail(self, room: int, message: str) -> None:
        r = self.rooms.get(room)
        if r is not None and r.state == "prefilling":
            r.state, r.message = "failed", message

    def get(self, room: int) -> Room | None:
        return self.rooms.get(room)

    def take(self, room: int) -> Room | None:
        """The room if its prefill has ended (ready or failed), removed from the book; else None."""
        r = self.rooms.get(room)
        if r is None or r.state == "prefilling":
            return None
        del self.rooms[room]
        return r

    def expire(self, now: float, ttl: float) -> list[int]:
        """Forget rooms that ended more than `ttl` seconds after they were opened and were never collected."""
        old = [k for k, r in self.rooms.items() if r.state != "prefilling" and now - r.opened > ttl]
        for k in old:
            del self.rooms[k]
        return old
