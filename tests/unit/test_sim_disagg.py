"""Prefill/decode disaggregation in the simulator: bootstrap fields, rooms, transfer time, flags, handover."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp import web

from harness.point.servers.port_owner import free_port
from harness.sim.batching.timing import load_profile
from harness.sim.batching.topology.bootstrap import BootstrapServer, collect
from harness.sim.batching.topology.disagg import (
    DEFAULT_TIMEOUT_S,
    WAITING_TIMEOUT_ENV,
    Bootstrap,
    Room,
    RoomBook,
    bootstrap_of,
    timeout_from_env,
    transfer_seconds,
    waiting_timeout_message,
)
from harness.sim.frontend.cli import build_parser


def test_bootstrap_fields_as_the_router_adds_them() -> None:
    body = {"messages": [], "bootstrap_host": "10.0.0.1", "bootstrap_port": 8998, "bootstrap_room": 42}
    assert bootstrap_of(body) == Bootstrap("10.0.0.1", 8998, 42)


@pytest.mark.parametrize("patch, words", [
    ({"bootstrap_room": None}, "bootstrap_room should not be None"),
    ({"bootstrap_room": -1}, "bootstrap_room"),
    ({"bootstrap_room": True}, "bootstrap_room"),
    ({"bootstrap_host": ""}, "bootstrap_host"),
    ({"bootstrap_port": 0}, "bootstrap_port"),
    ({"bootstrap_port": "8998"}, "bootstrap_port"),
])
def test_bootstrap_fields_missing_or_malformed(patch: dict[str, object], words: str) -> None:
    body = {"bootstrap_host": "h", "bootstrap_port": 8998, "bootstrap_room": 1, **patch}
    problem = bootstrap_of(body)
    assert isinstance(problem, str) and words in problem


def test_transfer_time_is_bytes_over_bandwidth() -> None:
    # 10,000 tokens x 4096 B = 40.96 MB = 327.68 Mb; at 400 Gb/s: 0.8192 ms
    assert transfer_seconds(10_000, 4096, 400.0) == pytest.approx(0.0008192)
    assert transfer_seconds(0, 4096, 400.0) == 0.0
    assert transfer_seconds(1000, 4096, 100.0) == pytest.approx(4 * transfer_seconds(1000, 4096, 400.0))


def test_profiles_default_the_transfer_bandwidth() -> None:
    assert load_profile("demo").transfer_gbps == 400.0


def test_timeouts_come_from_sglangs_variables() -> None:
    assert timeout_from_env({}, WAITING_TIMEOUT_ENV) == DEFAULT_TIMEOUT_S == 300.0
    assert timeout_from_env({WAITING_TIMEOUT_ENV: "12.5"}, WAITING_TIMEOUT_ENV) == 12.5
    assert timeout_from_env({WAITING_TIMEOUT_ENV: "soon"}, WAITING_TIMEOUT_ENV) == DEFAULT_TIMEOUT_S
    assert waiting_timeout_message(7, 3.04) == "Request 7 timed out after 3.0s in KVPoll.WaitingForInput"


def test_room_book_lifecycle() -> None:
    book = RoomBook()
    book.open(1, now=0.0)
    assert book.take(1) is None              # still prefilling: nothing to collect yet
    book.ready(1, prompt_tokens=100, cached_tokens=64)
    room = book.take(1)
    assert room is not None and (room.state, room.prompt_tokens, room.cached_tokens) == ("ready", 100, 64)
    assert book.get(1) is None                # collected once
    book.open(2, now=0.0)
    book.fail(2, "aborted")
    book.ready(2, 5, 0)                       # a failed room stays failed
    failed = book.take(2)
    assert failed is not None and (failed.state, failed.message) == ("failed", "aborted")


def test_room_book_forgets_uncollected_rooms() -> None:
    book = RoomBook()
    book.open(1, now=0.0)
    book.open(2, now=0.0)
    book.ready(1, 10, 0)
    assert book.expire(now=301.0, ttl=300.0) == [1]   # ended and never collected
    assert book.get(2) is not None                    # still prefilling: kept


def test_disaggregation_flags_parse_like_sglang() -> None:
    parser = build_parser()
    plain = parser.parse_args([])
    assert (plain.disaggregation_mode, plain.disaggregation_bootstrap_port) == ("null", 8998)
    assert plain.disaggregation_transfer_backend == "mooncake"
    args = parser.parse_args(["--disaggregation-mode", "prefill", "--disaggregation-bootstrap-port", "9000",
                              "--disaggregation-transfer-backend", "nixl"])
    assert (args.disaggregation_mode, args.disaggregation_bootstrap_port) == ("prefill", 9000)
    assert args.disaggregation_transfer_backend == "nixl"
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["--disaggregation-mode", "both"])
    assert exc.value.code == 2


def test_handover_waits_for_the_prefill_and_fails_cleanly() -> None:
    async def scenario() -> tuple[object, object, object, object]:
        server = BootstrapServer(RoomBook(), expire_after=300.0)
        runner = web.AppRunner(server.app())
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            early = asyncio.create_task(collect(Bootstrap("127.0.0.1", port, 5), timeout=5.0))
            await asyncio.sleep(0.05)
            server.book.open(5, now=time.monotonic())      # the prefill request arrives after the decode worker asked
            server.changed()
            await asyncio.sleep(0.05)
            server.book.ready(5, 321, 64)
            server.changed()
            got = await early
            unknown = await collect(Bootstrap("127.0.0.1", port, 6), timeout=0.2)
            server.book.open(7, now=time.monotonic())
            server.book.fail(7, "prefill of room 7 was aborted")
            server.changed()
            aborted = await collect(Bootstrap("127.0.0.1", port, 7), timeout=1.0)
        finally:
            await runner.cleanup()
        gone = await collect(Bootstrap("127.0.0.1", port, 8), timeout=1.0)
        return got, unknown, aborted, gone

    got, unknown, aborted, gone = asyncio.run(scenario())
    assert isinstance(got, Room) and (got.prompt_tokens, got.cached_tokens) == (321, 64)
    assert isinstance(unknown, str) and "timed out after" in unknown and "KVPoll.WaitingForInput" in unknown
    assert isinstance(aborted, str) and "aborted" in aborted
    assert isinstance(gone, str) and "did not answer" in gone
