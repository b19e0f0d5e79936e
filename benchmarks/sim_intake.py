"""How long a request waits for the simulator's event loop at high concurrency (`server_in`), with a light client.

Starts the simulator exactly as `benchmarks/timing-h200-tp8.yaml`'s point cN plans it (the `h200-tp8` profile,
DFLASH, its limits), with `--sim-truth-log`, and replays the shipped synthetic corpus against it from N lanes of
raw HTTP/1.1 connections in this one process (no AIPerf: the client costs little, so the simulator's own cost
shows). Each lane replays a session's turns in order, with the trace's think times, each prompt made of the turn's
hash blocks (256 bytes each, so sessions share prefixes as the traces say), `max_tokens` its output length.
After the warm-up it counts, over the window, per request:

- `server_in`: the lane's stamp after the request's last byte went to the socket, to the simulator's receive
  stamp (`arrival_ns` in the truth log): the kernel and the simulator's event loop reaching the request;
- `ttft_err`: the lane reading the first token's chunk, less the simulator's stamp of writing it;

and the simulator's CPU (cores, from /proc) over the window. Percentiles in ms.

    .venv/bin/python benchmarks/sim_intake.py --conc 256 --duration 40
    .venv/bin/python benchmarks/sim_intake.py --conc 256 --duration 40 --profile /tmp/sim.prof   # cProfile it
    .venv/bin/python benchmarks/sim_intake.py --conc 256 --duration 40 --realtime   # a shared host: see --help

The lanes and the simulator share the host's cores: compare runs on the same host only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.point.servers.port_owner import free_port

HERE = Path(__file__).resolve().parent
RECIPE = HERE / "timing-h200-tp8.yaml"
TRACES = HERE.parent / "recipes" / "traces" / "quickstart"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def server_argv(conc: int, port: int, truth: Path, profile: Path | None,
                realtime: bool = False) -> tuple[list[str], dict[str, str]]:
    """The simulator's command and environment for the recipe's point cN, on `port`, logging truth to `truth`."""
    out = subprocess.run([sys.executable, "-m", "harness", "plan", str(RECIPE), "--json", "--point", f"c{conc}"],
                         check=True, capture_output=True, text=True).stdout
    server = json.loads(out)["points"][0]["server"]
    argv = [a if a != "python3" else sys.executable for a in server["argv"]]
    argv[argv.index("--port") + 1] = str(port)
    if profile is not None:
        argv[1:1] = ["-m", "cProfile", "-o", str(profile)]
    argv += ["--sim-truth-log", str(truth), "--sim-startup-seconds", "0"]
    if realtime:
        argv[:0] = ["chrt", "-f", "10"]
    return argv, {**os.environ, **server.get("env", {})}


def load_sessions() -> list[list[dict[str, Any]]]:
    return [json.loads(p.read_text())["requests"] for p in sorted(TRACES.glob("*.json"))]


def prompt_of(session: int, turn: dict[str, Any]) -> str:
    """The turn's prompt: one 256-byte block per hash id (a session's turns share their leading blocks)."""
    blocks = [f"[s{session} block {h}]".ljust(256, ".") for h in turn["hash_ids"]]
    return "".join(blocks)[: max(64, turn["in"] * 4 - 16)]


async def read_response(reader: asyncio.StreamReader) -> int | None:
    """Read one chunked SSE response to its end; the wall-clock ns at which its first body chunk arrived."""
    head = await reader.readuntil(b"\r\n\r\n")
    if b" 200 " not in head.split(b"\r\n", 1)[0]:
        raise RuntimeError(head.decode(errors="replace"))
    first = None
    while True:
        size = int((await reader.readuntil(b"\r\n")).strip(), 16)
        if first is None:
            first = time.time_ns()
        if size == 0:
            await reader.readuntil(b"\r\n")
            return first
        await reader.readexactly(size + 2)


async def lane(i: int, port: int, sessions: list[list[dict[str, Any]]], sent: dict[str, tuple[int, int | None]],
               state: dict[str, bool]) -> None:
    rng = random.Random(i)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    # room for a whole request in the socket, so its last byte leaves with the write (a clean send stamp)
    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
    s = i % len(sessions)
    turn = rng.randrange(len(sessions[s]))
    n = 0
    while not state["stop"]:
        t = sessions[s][turn]
        body = json.dumps({"model": "muse-spark-open", "messages": [{"role": "user", "content": prompt_of(s, t)}],
                           "max_tokens": t["out"], "ignore_eos": True, "stream": True,
                           "stream_options": {"include_usage": True}}).encode()
        rid = f"l{i}-{n}"
        n += 1
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n"
                     + f"X-Request-ID: {rid}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        stamp = time.time_ns() if state["counting"] else -1
        if writer.transport.get_write_buffer_size():
            stamp = -1   # not all of it reached the socket at once: no clean stamp
        await writer.drain()
        first = await read_response(reader)
        if stamp > 0:
            sent[rid] = (stamp, first)
        turn += 1
        if turn >= len(sessions[s]):
            s, turn = (s + len(sessions) // 2 + 1) % len(sessions), 0
        await asyncio.sleep(min(5.0, sessions[s][turn]["think_time"]))
    writer.close()


def _ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


async def drive(conc: int, port: int, pid: int, warmup: float, duration: float) -> tuple[dict[str, Any], float]:
    sessions = load_sessions()
    sent: dict[str, tuple[int, int | None]] = {}
    state = {"stop": False, "counting": False}
    tasks = [asyncio.create_task(lane(i, port, sessions, sent, state)) for i in range(conc)]
    await asyncio.sleep(warmup)
    t0, c0 = time.monotonic(), _ticks(pid)
    state["counting"] = True
    await asyncio.sleep(duration)
    state["counting"] = False
    cores = (_ticks(pid) - c0) / CLK_TCK / (time.monotonic() - t0)
    state["stop"] = True
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return sent, cores


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summarize(sent: dict[str, tuple[int, int | None]], truth: Path) -> dict[str, Any]:
    server_in, ttft_err = [], []
    for line in truth.read_text().splitlines():
        t = json.loads(line)
        s = sent.get(t["request_id"])
        if s is None or t.get("status") != "ok":
            continue
        server_in.append((t["arrival_ns"] - s[0]) / 1e6)
        if s[1] is not None and t.get("first_token_sent_ns"):
            ttft_err.append((s[1] - t["first_token_sent_ns"]) / 1e6)
    if not server_in:
        raise SystemExit("sim_intake: no request of the window was found in the truth log")
    out: dict[str, Any] = {"requests": len(server_in)}
    for name, v in (("server_in_ms", server_in), ("ttft_err_ms", ttft_err)):
        out[name] = {f"p{q * 100:g}": round(_pct(v, q), 3) for q in (0.5, 0.9, 0.99, 0.999)}
        out[name]["max"] = round(max(v), 3)
        out[name]["mean"] = round(statistics.fmean(v), 3)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conc", type=int, default=256, help="lanes; the recipe's point cN must exist")
    ap.add_argument("--duration", type=float, default=40.0, help="measurement window (s)")
    ap.add_argument("--warmup", type=float, default=15.0, help="seconds before the window")
    ap.add_argument("--profile", type=Path, help="run the simulator under cProfile, writing its stats here")
    ap.add_argument("--realtime", action="store_true",
                    help="run the simulator at a real-time priority (chrt -f 10; needs CAP_SYS_NICE): on a shared host "
                         "no other process preempts it, so what `server_in` keeps is its own event loop")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        truth, port = Path(tmp) / "truth.jsonl", free_port()
        argv, env = server_argv(args.conc, port, truth, args.profile, args.realtime)
        log = Path(tmp) / "sim.log"
        with log.open("w") as fh:
            proc = subprocess.Popen(argv, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while "ready to roll" not in log.read_text():
                if proc.poll() is not None:
                    raise SystemExit(f"sim_intake: the simulator exited before it was ready:\n{log.read_text()}")
                time.sleep(0.2)
            sent, cores = asyncio.run(drive(args.conc, port, proc.pid, args.warmup, args.duration))
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        result = {"conc": args.conc, "duration_s": args.duration, "simulator_cores": round(cores, 3),
                  **summarize(sent, truth)}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
