"""How much streaming load the simulator sustains on one core.

Starts `python -m harness.sim` (demo profile, `--stream-interval 1`, so every decode step sends
one SSE event per running stream) and drives it with N concurrent streaming chat requests from
this process (closed loop: each stream sends its next request when the previous one ends).
All requests share a long prompt prefix (served from the prefix cache) plus a unique suffix, so
decode steps see agentic-sized contexts. For each concurrency it prints the SSE events received
per second over the measurement window and the engine's median scheduling lag (how late a step
ended compared with its scheduled end, from `/server_info`).

    .venv/bin/python benchmarks/sim_load.py                     # 48 and 128 streams
    .venv/bin/python benchmarks/sim_load.py --streams 48 --duration 5

Targets on a 2-core machine: >= 2,000 SSE events/s at 48 streams with median lag < 2 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time

import aiohttp

from harness.sim.batching.engine_stats import hist_median_ms


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_ready(base: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as s:
        while time.monotonic() < deadline:
            try:
                async with s.get(base + "/health") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError("simulator did not become ready")


async def drive(base: str, streams: int, duration: float, warmup: float, prefix: str, max_tokens: int) -> dict[str, float]:
    events = 0
    counting = False
    stop = False
    requests_done = 0

    async def lane(i: int, session: aiohttp.ClientSession) -> None:
        nonlocal events, requests_done
        n = 0
        while not stop:
            body = {
                "model": "sim",
                "messages": [{"role": "user", "content": prefix + f" lane {i} request {n}"}],
                "max_tokens": max_tokens,
                "ignore_eos": True,
                "stream": True,
                "stream_options": {"include_usage": True},
            }
            n += 1
            async with session.post(base + "/v1/chat/completions", json=body) as r:
                async for line in r.content:
                    if line.startswith(b"data: ") and counting:
                        events += 1
                    if stop:
                        break
            requests_done += 1

    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=None)) as session:
        tasks = [asyncio.create_task(lane(i, session)) for i in range(streams)]
        await asyncio.sleep(warmup)
        async with session.get(base + "/server_info") as r:
            before = (await r.json())["internal_states"][0]["sim"]
        counting = True
        t0 = time.monotonic()
        await asyncio.sleep(duration)
        counting = False
        elapsed = time.monotonic() - t0
        async with session.get(base + "/server_info") as r:
            info = await r.json()
        stop = True
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    sim = info["internal_states"][0]["sim"]
    window = [b - a for a, b in zip(before["scheduling_lag_hist_100us"], sim["scheduling_lag_hist_100us"])]
    return {
        "streams": streams,
        "events_per_s": events / elapsed,
        "median_lag_ms": hist_median_ms(window) or 0.0,
        "decode_steps": sim["decode_steps"] - before["decode_steps"],
    }


def run_one(streams: int, args: argparse.Namespace) -> dict[str, float]:
    port = free_port()
    cmd = [
        sys.executable, "-m", "harness.sim", "--model-path", "sim", "--port", str(port),
        "--sim-profile", args.profile, "--sim-startup-seconds", "0", "--stream-interval", "1",
        "--max-running-requests", str(max(256, streams)), "--skip-server-warmup",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        asyncio.run(wait_ready(base))
        prefix = "shared agentic context " * (args.prefix_tokens * 4 // 23)
        return asyncio.run(drive(base, streams, args.duration, args.warmup, prefix, args.max_tokens))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streams", type=int, nargs="+", default=[48, 128])
    ap.add_argument("--duration", type=float, default=8.0, help="measurement window, seconds")
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    ap.add_argument("--prefix-tokens", type=int, default=40000, help="shared prompt prefix length (agentic-sized context)")
    ap.add_argument("--max-tokens", type=int, default=400)
    ap.add_argument("--profile", default="demo")
    ap.add_argument("--json", action="store_true", help="print one JSON line per run instead of a table")
    args = ap.parse_args()
    print(f"{'streams':>8} {'SSE events/s':>14} {'median lag ms':>14} {'decode steps':>13}")
    for n in args.streams:
        r = run_one(n, args)
        if args.json:
            print(json.dumps(r))
        else:
            print(f"{r['streams']:>8} {r['events_per_s']:>14,.0f} {r['median_lag_ms']:>14.3f} {r['decode_steps']:>13}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
