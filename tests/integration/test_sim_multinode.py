"""A simulated worker over two nodes (two processes on 127.0.0.1): readiness waits for the follower, and
either rank going away ends the other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from harness.point.servers.port_owner import free_port


def _health(url: str) -> int:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=1.0) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


def _wait_health(url: str, code: int, within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if _health(url) == code:
            return
        time.sleep(0.1)
    pytest.fail(f"{url}/health never answered {code}")


class TwoNodes:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")},
                    "HARNESS_SIM_NODE_JOIN_TIMEOUT": "20"}
        self.argv = [sys.executable, "-m", "harness.sim", "--model-path", "m", "--host", "127.0.0.1",
                     "--port", str(self.port), "--sim-startup-seconds", "0.1", "--tp", "8", "--nnodes", "2",
                     "--dist-init-addr", f"127.0.0.1:{free_port()}"]
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, rank: int) -> subprocess.Popen[str]:
        proc = subprocess.Popen([*self.argv, "--node-rank", str(rank)], env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc


@pytest.fixture
def nodes() -> Iterator[TwoNodes]:
    n = TwoNodes()
    try:
        yield n
    finally:
        for proc in n.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def test_leader_ready_only_after_follower_joins_and_follower_exits_with_the_leader(nodes: TwoNodes) -> None:
    leader = nodes.start(0)
    _wait_health(nodes.url, 503, within_s=10)
    time.sleep(0.5)
    assert _health(nodes.url) == 503                     # loaded long ago, still waiting for rank 1
    follower = nodes.start(1)
    _wait_health(nodes.url, 200, within_s=10)
    leader.send_signal(signal.SIGTERM)
    assert leader.wait(timeout=10) == 0
    assert follower.wait(timeout=10) == 0                # the leader said bye
    out = follower.stdout.read() if follower.stdout else ""
    assert "node rank 1 of 2 joined the leader" in out and "the leader shut down" in out
    assert "listening on" not in out                      # the follower never binds --port


@pytest.mark.parametrize(("killed", "survivor", "says"), [
    (0, 1, "lost the leader"),
    (1, 0, "lost node rank 1; shutting down"),
])
def test_a_node_rank_exits_nonzero_when_the_other_vanishes(nodes: TwoNodes, killed: int, survivor: int,
                                                           says: str) -> None:
    ranks = {0: nodes.start(0), 1: nodes.start(1)}
    _wait_health(nodes.url, 200, within_s=10)
    ranks[killed].kill()
    left = ranks[survivor]
    assert left.wait(timeout=10) == 1
    assert says in (left.stdout.read() if left.stdout else "")


def test_leader_gives_up_when_no_follower_joins(nodes: TwoNodes) -> None:
    nodes.env["HARNESS_SIM_NODE_JOIN_TIMEOUT"] = "0.5"
    leader = nodes.start(0)
    assert leader.wait(timeout=10) == 1
    out = leader.stdout.read() if leader.stdout else ""
    assert "timed out after 0.5 s waiting for node ranks [1] to join" in out
    assert "ready to roll" not in out
