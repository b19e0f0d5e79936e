"""A DP-attention simulator behind Shepherd Model Gateway (`smg` 1.13.0, `--dp-aware`), as InferenceX runs
single-node DP-attention AgentX: consistent hashing on `X-SMG-Routing-Key` keeps every session on one rank,
round robin does not; stickiness is read back from the worker's log (its `[sim] routed` lines, written at
`--log-level debug` as the harness starts a deployment's simulated workers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.point.record.stickiness import stickiness
from harness.point.servers.port_owner import free_port

from .conftest import stop_process

pytest.importorskip("smg", reason="smg is a dev extra (pip install -e .[dev])")
SESSIONS = 6   # not a multiple of the 4 ranks: round robin must not line sessions up with ranks
TURNS = 3


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2.0) as resp:
            return int(resp.status), resp.read().decode()
    except urllib.error.HTTPError as exc:
        return int(exc.code), ""
    except OSError:
        return 0, ""


def _chat(base: str, key: str, turn: int) -> int:
    body = {"model": "sim-model", "messages": [{"role": "user", "content": f"session {key} turn {turn}"}],
            "max_tokens": 2, "stream": True}
    req = urllib.request.Request(f"{base}/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "X-SMG-Routing-Key": key,
                                          "X-Correlation-ID": key})
    with urllib.request.urlopen(req, timeout=10) as resp:
        resp.read()
        return int(resp.status)


@pytest.fixture
def routed(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    """(router URL, worker log) for a DP-4 simulator behind `smg launch --dp-aware --policy <param>`."""
    policy = str(request.param)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    sim_port = free_port()
    log = tmp_path / "worker.log"
    procs: list[subprocess.Popen[bytes]] = []
    base = ""
    try:
        with log.open("wb") as sim_out:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "harness.sim", "--model-path", "m", "--served-model-name", "sim-model",
                 "--host", "127.0.0.1", "--port", str(sim_port), "--enable-dp-attention", "--dp-size", "4",
                 "--tp", "4", "--sim-startup-seconds", "0.1", "--log-level", "debug"],   # debug: routed lines
                stdout=sim_out, stderr=subprocess.STDOUT, env=env))
            # smg retries a worker whose first health check failed only after 30 s: start it once the worker is up
            deadline = time.monotonic() + 15
            while _get(f"http://127.0.0.1:{sim_port}/health")[0] != 200 and time.monotonic() < deadline:
                time.sleep(0.1)
        for _ in range(3):      # another process on the host may bind the picked port first: pick again
            router_port = free_port()
            with (tmp_path / "router.log").open("wb") as router_out:
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "smg", "launch", "--worker-urls", f"http://127.0.0.1:{sim_port}",
                     "--policy", policy, "--dp-aware", "--request-id-headers", "x-correlation-id",
                     "--host", "127.0.0.1", "--port", str(router_port),
                     "--prometheus-host", "127.0.0.1", "--prometheus-port", str(free_port()),
                     "--shutdown-grace-period-secs", "0"],
                    stdout=router_out, stderr=subprocess.STDOUT, env=env))
            base = f"http://127.0.0.1:{router_port}"
            if _router_lists_four_ranks(base, procs, tmp_path / "router.log"):
                break
            stop_process(procs.pop())
        else:
            pytest.fail("smg never bound a free port: " + (tmp_path / "router.log").read_text()[-2000:])
        yield base, log
    finally:
        for proc in procs:
            stop_process(proc)


def _router_lists_four_ranks(base: str, procs: list[subprocess.Popen[bytes]], router_log: Path) -> bool:
    """True once the router lists the worker's 4 DP ranks; False if it could not bind its port."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status, text = _get(f"{base}/workers")
        if status == 200 and len(json.loads(text).get("workers", [])) == 4:   # URL@0 .. URL@3
            return True
        if procs[-1].poll() is not None and b"Address already in use" in router_log.read_bytes():
            return False
        assert all(p.poll() is None for p in procs), router_log.read_text()[-2000:]
        time.sleep(0.2)
    pytest.fail("smg never listed the worker's 4 DP ranks")


def _run_sessions(base: str) -> None:
    for turn in range(TURNS):
        for s in range(SESSIONS):
            assert _chat(base, f"session-{s}", turn) == 200


@pytest.mark.parametrize("routed", ["consistent_hashing"], indirect=True)
def test_consistent_hashing_keeps_each_session_on_one_rank(routed: tuple[str, Path]) -> None:
    base, log = routed
    _run_sessions(base)
    got = stickiness({"worker": log})
    assert (got["sessions"], got["turns"]) == (SESSIONS, SESSIONS * TURNS)
    assert got["sticky_share"] == 1.0 and got["fully_sticky_sessions"] == 1.0
    assert got["targets"] >= 2                                  # the sessions spread over several ranks


@pytest.mark.parametrize("routed", ["round_robin"], indirect=True)
def test_round_robin_scatters_sessions(routed: tuple[str, Path]) -> None:
    base, log = routed
    _run_sessions(base)
    got = stickiness({"worker": log})
    assert got["turns"] == SESSIONS * TURNS and got["targets"] == 4
    assert got["sticky_share"] < 1.0
