"""How much streaming load the simulator sustains on one core.

Starts `python -m harness.sim` (demo profile, `--stream-interval 1`, so every decode step sends
one SSE event per running stream) and drives it with N concurrent streaming chat requests from
this process (closed loop: each stream sends its next request when the previous one ends).
All requests share a long prompt prefix (served from the prefix cache) plus a unique suffix, so
decode steps see agentic-sized contexts. The prefix is sized to the profile's KV pool (`kv_pool_tokens` in
`/server_info`): the pool holds the prefix and every stream's own tokens, so the streams decode instead of
waiting for room (`--prefix-tokens` caps it; 40,000 by default). A run that measured no decode step or no
SSE event exits 1 with a message naming the concurrency. For each concurrency it prints the SSE events received
per second over the measurement window and the engine's median scheduling lag (how late a step
ended compared with its scheduled end, from `/server_info`).

    .venv/bin/python benchmarks/sim_load.py                     # 48 and 128 streams
    .venv/bin/python benchmarks/sim_load.py --streams 48 --duration 5

Target on a 2-core machine: a median lag under 2 ms at 48 and 128 streams, with decode steps in the window
(the events per second follow the profile's step time: one event per running stream per decode step).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import aiohttp

from harness.point.servers.port_owner import free_port
from harness.sim.batching.engine_stats import hist_median_ms

SUFFIX_TOKENS = 16   # each request's own words after the shared prefix (" lane I request N"), with margin


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


def kv_pool_tokens(base: str) -> int | None:
    """The simulator's GPU KV pool in tokens, as `/server_info` reports it (None if it does not say)."""
    async def fetch() -> int | None:
        async with aiohttp.ClientSession() as s, s.get(base + "/server_info") as r:
            pool = ((await r.json()).get("simulator") or {}).get("kv_pool_tokens")
        return int(pool) if isinstance(pool, (int, float)) else None
    return asyncio.run(fetch())


def prefix_tokens(cap: int, pool: int | None, streams: int, max_tokens: int) -> int:
    """The shared prefix that leaves room in `pool` for every stream's own prompt suffix and output (with a
    fifth of the pool spare), at most `cap` tokens; 0 where the streams alone fill the pool."""
    if pool is None:
        return cap
    room = int(pool * 0.8) - streams * (max_tokens + SUFFIX_TOKENS)
    return max(0, min(cap, room))


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
        pool = kv_pool_tokens(base)
        tokens = prefix_tokens(args.prefix_tokens, pool, streams, args.max_tokens)
        prefix = "shared agentic context " * (tokens * 4 // 23)
        result = asyncio.run(drive(base, streams, args.duration, args.warmup, prefix, args.max_tokens))
        return {**result, "prefix_tokens": tokens, "kv_pool_tokens": pool if pool is not None else -1}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streams", type=int, nargs="+", default=[48, 128])
    ap.add_argument("--duration", type=float, default=8.0, help="measurement window, seconds")
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    ap.add_argument("--prefix-tokens", type=int, default=40000,
                    help="the most shared prompt prefix (agentic-sized context); less where the profile's KV pool "
                         "needs the room for the streams' own tokens")
    ap.add_argument("--max-tokens", type=int, default=400)
    ap.add_argument("--profile", default="demo")
    ap.add_argument("--json", action="store_true", help="print one JSON line per run instead of a table")
    args = ap.parse_args()
    if not args.json:
        print(f"{'streams':>8} {'prefix tok':>11} {'SSE events/s':>14} {'median lag ms':>14} {'decode steps':>13}")
    empty: list[str] = []
    for n in args.streams:
        r = run_one(n, args)
        if args.json:
            print(json.dumps(r))
        else:
            print(f"{r['streams']:>8} {r['prefix_tokens']:>11,} {r['events_per_s']:>14,.0f} "
                  f"{r['median_lag_ms']:>14.3f} {r['decode_steps']:>13}", flush=True)
        if r["decode_steps"] <= 0 or r["events_per_s"] <= 0:
            empty.append(f"{n} streams: {r['decode_steps']:g} decode steps, {r['events_per_s']:.0f} SSE events/s "
                         f"(prefix {r['prefix_tokens']} tokens, KV pool {r['kv_pool_tokens']} tokens)")
    if empty:
        print("sim_load: measured nothing at " + "; ".join(empty) + "; the streams never decoded in the window "
              "(a longer --warmup or a smaller --prefix-tokens / --max-tokens leaves them room)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
