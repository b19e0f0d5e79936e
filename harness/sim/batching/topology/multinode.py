"""Multi-node workers: one simulated server spread over `--nnodes` processes, as SGLang runs one.

SGLang starts a worker that spans nodes with the same command on every node, only `--node-rank`
differing: `--dist-init-addr HOST:PORT --nnodes N --node-rank i`. The simulator keeps the parts of
that which a deployment can observe:

- Rank 0 (the leader) listens on the dist-init-addr's HOST:PORT and stays unready (`/health` 503,
  completions 503) until every other rank has joined; only then does it load, warm up and log
  `The server is fired up and ready to roll!`.
- Ranks 1..N-1 (followers) serve no HTTP and never bind `--port`. Each connects to the leader
  (retrying until the join timeout), sends its rank, logs that it joined, then waits on that connection.
  A follower exits 0 when the leader shuts down cleanly (SIGTERM/SIGINT) and 1 when the leader vanishes.
- A rank that is out of range, or already taken, is an error: the leader refuses it and exits 1
  (the follower exits 1 too). A follower that drops while the leader serves takes the leader down
  (exit 1), as a crashed rank takes SGLang down.
- Joining times out after `HARNESS_SIM_NODE_JOIN_TIMEOUT` seconds, else `--dist-timeout`, else 1800 s
  (torch's default process-group timeout, which SGLang uses when `--dist-timeout` is unset); the process
  logs which ranks are missing and exits 1.

The wire protocol is one line each way: the follower sends `join <rank>`, the leader answers `ok` or
`refused <reason>`; at a clean shutdown the leader sends `bye` before closing. `--nccl-port` is accepted
and ignored (there is no NCCL here).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

JOIN_TIMEOUT_ENV = "HARNESS_SIM_NODE_JOIN_TIMEOUT"
DEFAULT_JOIN_TIMEOUT_S = 1800.0
RETRY_INTERVAL_S = 0.2


class JoinError(RuntimeError):
    """The node group could not form (timeout, or a refused rank)."""


@dataclass(frozen=True)
class NodeGroup:
    host: str
    port: int
    nnodes: int
    node_rank: int
    join_timeout_s: float

    @property
    def leader(self) -> bool:
        return self.node_rank == 0

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def _split_addr(addr: str) -> tuple[str, int]:
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--dist-init-addr: expected HOST:PORT, got {addr!r}")
    return host.strip("[]"), int(port)


def node_group(args: argparse.Namespace, env: dict[str, str]) -> NodeGroup | None:
    """The node group these flags describe, or None for a single-node worker; ValueError names a bad flag."""
    nnodes = int(getattr(args, "nnodes", 1) or 1)
    if nnodes <= 1:
        return None
    rank = int(getattr(args, "node_rank", 0) or 0)
    if not 0 <= rank < nnodes:
        raise ValueError(f"--node-rank: expected 0..{nnodes - 1} with --nnodes {nnodes}, got {rank}")
    addr = getattr(args, "dist_init_addr", None)
    if not addr:
        raise ValueError(f"--dist-init-addr HOST:PORT is required with --nnodes {nnodes}")
    host, port = _split_addr(str(addr))
    raw = env.get(JOIN_TIMEOUT_ENV)
    if raw is not None:
        try:
            timeout = float(raw)
        except ValueError:
            raise ValueError(f"{JOIN_TIMEOUT_ENV}: expected seconds, got {raw!r}") from None
    elif getattr(args, "dist_timeout", None) is not None:
        timeout = float(args.dist_timeout)
    else:
        timeout = DEFAULT_JOIN_TIMEOUT_S
    if timeout <= 0:
        raise ValueError(f"join timeout: expected seconds > 0, got {timeout:g}")
    return NodeGroup(host, port, nnodes, rank, timeout)


def _log(message: str) -> None:
    print(f"[sim] multi-node: {message}", flush=True)


class Leader:
    """Rank 0: the rendezvous listener and the open connection to every follower."""

    def __init__(self, group: NodeGroup):
        self.group = group
        self._members: dict[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}
        self._server: asyncio.Server | None = None
        self._formed = asyncio.Event()
        self._failure: str | None = None
        self._closing = False
        self._watchers: list[asyncio.Task[None]] = []

    def _missing(self) -> list[int]:
        return [r for r in range(1, self.group.nnodes) if r not in self._members]

    async def gather(self) -> None:
        """Listen on the dist-init-addr until ranks 1..N-1 have joined; JoinError when they do not."""
        g = self.group
        self._server = await asyncio.start_server(self._accept, g.host, g.port, reuse_address=True)
        _log(f"node rank 0 of {g.nnodes} waiting for ranks {self._missing()} at {g.address}")
        try:
            await asyncio.wait_for(self._formed.wait(), g.join_timeout_s)
        except TimeoutError:
            raise JoinError(f"timed out after {g.join_timeout_s:g} s waiting for node ranks "
                            f"{self._missing()} to join at {g.address}") from None
        if self._failure is not None:
            raise JoinError(self._failure)
        self._server.close()
        _log(f"all {g.nnodes} node ranks joined")

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10.0)
        except (TimeoutError, OSError):
            writer.close()
            return
        words = line.decode(errors="replace").split()
        if len(words) != 2 or words[0] != "join" or not words[1].isdigit():
            writer.close()   # not a node rank of ours: ignore it
            return
        rank = int(words[1])
        problem = None
        if not 1 <= rank < self.group.nnodes:
            problem = f"node rank {rank} is out of range for --nnodes {self.group.nnodes}"
        elif rank in self._members:
            problem = f"node rank {rank} joined twice"
        if problem is not None:
            writer.write(f"refused {problem}\n".encode())
            with contextlib.suppress(OSError):
                await writer.drain()
            writer.close()
            self._failure = problem
            self._formed.set()
            return
        self._members[rank] = (reader, writer)
        writer.write(b"ok\n")
        with contextlib.suppress(OSError):
            await writer.drain()
        _log(f"node rank {rank} joined")
        if not self._missing():
            self._formed.set()

    def watch(self, on_lost: Callable[[int], None]) -> None:
        """Call `on_lost(rank)` when a follower's connection closes while the leader is not shutting down."""
        for rank, (reader, _) in sorted(self._members.items()):
            self._watchers.append(asyncio.create_task(self._watch_one(rank, reader, on_lost)))

    async def _watch_one(self, rank: int, reader: asyncio.StreamReader, on_lost: Callable[[int], None]) -> None:
        with contextlib.suppress(OSError):
            while await reader.read(4096):
                pass
        if not self._closing:
            print(f"[sim] multi-node: lost node rank {rank}; shutting down", file=sys.stderr, flush=True)
            on_lost(rank)

    async def close(self) -> None:
        """Clean shutdown: tell every follower `bye` and close the connections and the listener."""
        self._closing = True
        for task in self._watchers:
            task.cancel()
        if self._server is not None:
            self._server.close()
        for _, writer in self._members.values():
            with contextlib.suppress(OSError):
                writer.write(b"bye\n")
                await asyncio.wait_for(writer.drain(), 1.0)
            writer.close()


async def _connect(group: NodeGroup, deadline: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    while True:
        try:
            return await asyncio.open_connection(group.host, group.port)
        except OSError:
            if time.monotonic() >= deadline:
                raise JoinError(f"timed out after {group.join_timeout_s:g} s joining the leader at "
                                f"{group.address} as node rank {group.node_rank}") from None
            await asyncio.sleep(RETRY_INTERVAL_S)


async def _follow(group: NodeGroup) -> int:
    deadline = time.monotonic() + group.join_timeout_s
    reader, writer = await _connect(group, deadline)
    try:
        return await _member(group, deadline, reader, writer)
    finally:
        writer.close()


async def _member(group: NodeGroup, deadline: float, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> int:
    writer.write(f"join {group.node_rank}\n".encode())
    await writer.drain()
    try:
        reply = await asyncio.wait_for(reader.readline(), max(0.1, deadline - time.monotonic()))
    except TimeoutError:
        raise JoinError(f"timed out after {group.join_timeout_s:g} s waiting for the leader at "
                        f"{group.address} to accept node rank {group.node_rank}") from None
    text = reply.decode(errors="replace").strip()
    if text != "ok":
        raise JoinError(f"the leader at {group.address} refused node rank {group.node_rank}: "
                        f"{text.removeprefix('refused ') or 'connection closed'}")
    _log(f"node rank {group.node_rank} of {group.nnodes} joined the leader at {group.address}; "
         "serving no HTTP on this node")
    while True:
        line = await reader.readline()
        if line.strip() == b"bye":
            _log("the leader shut down; exiting")
            return 0
        if not line:
            print(f"[sim] multi-node: lost the leader at {group.address}; exiting", file=sys.stderr, flush=True)
            return 1


async def _follow_until_signal(group: NodeGroup) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    follow = asyncio.create_task(_follow(group))
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({follow, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if not follow.done():
        follow.cancel()
        _log(f"node rank {group.node_rank} stopped by signal")
        return 0
    stopped.cancel()
    return follow.result()


def run_follower(group: NodeGroup) -> int:
    """A follower's whole life: join, wait on the leader, exit 0 (leader shut down or signal) or 1."""
    try:
        return asyncio.run(_follow_until_signal(group))
    except JoinError as exc:
        print(f"[sim] multi-node: {exc}", file=sys.stderr, flush=True)
        return 1
