"""Multi-node simulator workers: which flags form a node group, and the join protocol over a real socket."""

from __future__ import annotations

import asyncio

import pytest

from harness.point.servers.port_owner import free_port
from harness.sim.batching.topology.multinode import (
    DEFAULT_JOIN_TIMEOUT_S,
    JOIN_TIMEOUT_ENV,
    JoinError,
    Leader,
    NodeGroup,
    _follow,
    node_group,
)
from harness.sim.frontend.cli import build_parser


def _args(*flags: str):  # type: ignore[no-untyped-def]
    return build_parser().parse_args(["--model-path", "m", *flags])


def test_single_node_is_no_group_and_nccl_port_is_accepted() -> None:
    assert node_group(_args(), {}) is None
    assert node_group(_args("--nnodes", "1", "--nccl-port", "29501"), {}) is None


def test_group_from_sglang_flags_with_default_and_configured_timeouts() -> None:
    flags = ("--nnodes", "4", "--node-rank", "3", "--dist-init-addr", "10.0.0.7:5757")
    assert node_group(_args(*flags), {}) == NodeGroup("10.0.0.7", 5757, 4, 3, DEFAULT_JOIN_TIMEOUT_S)
    assert node_group(_args(*flags, "--dist-timeout", "60"), {}) == NodeGroup("10.0.0.7", 5757, 4, 3, 60.0)
    group = node_group(_args(*flags, "--dist-timeout", "60"), {JOIN_TIMEOUT_ENV: "2.5"})
    assert group is not None and group.join_timeout_s == 2.5 and not group.leader
    v6 = node_group(_args("--nnodes", "2", "--dist-init-addr", "[::1]:5757"), {})
    assert v6 is not None and (v6.host, v6.port, v6.leader) == ("::1", 5757, True)


@pytest.mark.parametrize("flags, env, words", [
    (("--nnodes", "2", "--node-rank", "2", "--dist-init-addr", "h:1"), {}, "--node-rank: expected 0..1"),
    (("--nnodes", "2", "--node-rank", "1"), {}, "--dist-init-addr HOST:PORT is required"),
    (("--nnodes", "2", "--dist-init-addr", "h"), {}, "expected HOST:PORT"),
    (("--nnodes", "2", "--dist-init-addr", "h:0"), {}, "expected HOST:PORT"),
    (("--nnodes", "2", "--dist-init-addr", "h:1"), {JOIN_TIMEOUT_ENV: "soon"}, "expected seconds"),
    (("--nnodes", "2", "--dist-init-addr", "h:1"), {JOIN_TIMEOUT_ENV: "0"}, "expected seconds > 0"),
])
def test_bad_group_flags_are_named(flags: tuple[str, ...], env: dict[str, str], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        node_group(_args(*flags), env)


def _group(rank: int, port: int, nnodes: int = 3, timeout: float = 3.0) -> NodeGroup:
    return NodeGroup("127.0.0.1", port, nnodes, rank, timeout)


def test_leader_forms_after_every_rank_and_followers_exit_0_on_bye() -> None:
    async def scenario() -> tuple[list[int], list[int]]:
        port = free_port()
        leader = Leader(_group(0, port))
        followers = [asyncio.create_task(_follow(_group(r, port))) for r in (2, 1)]  # they retry until it listens
        await asyncio.sleep(0.3)
        await leader.gather()
        lost: list[int] = []
        leader.watch(lost.append)
        await leader.close()
        return lost, list(await asyncio.gather(*followers))

    assert asyncio.run(scenario()) == ([], [0, 0])


def test_duplicate_rank_is_refused_and_fails_the_leader() -> None:
    async def scenario() -> tuple[str, str]:
        port = free_port()
        leader = Leader(_group(0, port))
        gathering = asyncio.create_task(leader.gather())
        first = asyncio.create_task(_follow(_group(1, port)))
        await asyncio.sleep(0.5)
        with pytest.raises(JoinError) as follower_error:
            await _follow(_group(1, port))
        with pytest.raises(JoinError) as leader_error:
            await gathering
        await leader.close()
        await first
        return str(follower_error.value), str(leader_error.value)

    follower, leader = asyncio.run(scenario())
    assert follower.endswith("refused node rank 1: node rank 1 joined twice")
    assert leader == "node rank 1 joined twice"


def test_leader_notices_a_follower_that_drops_and_times_out_missing_ranks() -> None:
    async def scenario() -> tuple[list[int], str]:
        port = free_port()
        leader = Leader(_group(0, port, nnodes=2))
        gathering = asyncio.create_task(leader.gather())
        await asyncio.sleep(0.1)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)   # a follower, by hand
        writer.write(b"join 1\n")
        assert await reader.readline() == b"ok\n"
        await gathering
        lost: list[int] = []
        leader.watch(lost.append)
        writer.close()                      # the follower's socket closes without a word
        for _ in range(50):
            if lost:
                break
            await asyncio.sleep(0.02)
        await leader.close()
        alone = Leader(_group(0, free_port(), nnodes=3, timeout=0.3))
        with pytest.raises(JoinError) as timeout:
            await alone.gather()
        await alone.close()
        return lost, str(timeout.value)

    lost, timeout = asyncio.run(scenario())
    assert lost == [1]
    assert timeout.startswith("timed out after 0.3 s waiting for node ranks [1, 2] to join at 127.0.0.1:")


def test_follower_times_out_when_no_leader_listens() -> None:
    with pytest.raises(JoinError, match=r"timed out after 0.3 s joining the leader at 127.0.0.1:\d+ as node rank 1"):
        asyncio.run(_follow(_group(1, free_port(), timeout=0.3)))
