"""Benchmark of `harness inspect` at the scale of a long point: 3600 s at c64 (about 50k requests), 3,600 one-second
timeslices of the server's /metrics, 10 Hz power on 8 GPUs, SGLang's batch lines and the simulator's truth log.

Generates the point from a real one (`tests/fixtures/inspect/demo/conc8`: the demo's c8 on the simulator, real
AIPerf): its per-request records are replayed by 64 lanes for an hour (times shifted, ids made unique, each call's
length scaled so a lane makes about 780 calls), every server-metrics series gets 3,600 slices cycled from the real
ones, and power rows come from the sampler's own row writer. Then it runs `harness inspect` in a fresh process and
prints its wall time, peak resident memory and the page's size (targets on 2 cores: <= 15 s, <= 1.5 GB, page <= 8
MB), and, where a Chromium is installed, how long the page takes to load and draw in it (target <= 3 s).

    .venv/bin/python benchmarks/inspect_bench.py [--dir DIR] [--seconds 3600] [--conc 64] [--gpus 8] [--keep]
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "tests" / "fixtures" / "inspect" / "demo" / "conc8"
NS = 1_000_000_000
CALL_S = 4.6          # mean call length the lanes are scaled to (64 lanes x 3600 s / 4.6 s ~ 50k calls)
THINK_S = 0.3


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def generate(out: Path, seconds: int, conc: int, gpus: int) -> int:
    """Write the point into `out`; the number of requests."""
    shutil.copytree(TEMPLATE, out)
    records = [r for r in _lines(TEMPLATE / "aiperf" / "profile_export.jsonl")
               if r["metadata"].get("benchmark_phase") == "profiling" and not r.get("error")]
    truth = {t["request_id"]: t for t in _lines(TEMPLATE / "sim_truth.jsonl")}
    export = json.loads((TEMPLATE / "aiperf" / "server_metrics_export.json").read_text())
    start = export["summary"]["phase_time_ranges"]["profiling"]["start_ns"]
    mean = sum(r["metadata"]["request_end_ns"] - r["metadata"]["request_start_ns"] for r in records) / len(records)
    n = 0
    with open(out / "aiperf" / "profile_export.jsonl", "w") as rec_fh, open(out / "sim_truth.jsonl", "w") as tr_fh:
        for lane in range(conc):
            t = start + lane * NS // 10
            k = lane
            while t < start + seconds * NS:
                src = records[k % len(records)]
                k += 7
                m = src["metadata"]
                length = int((m["request_end_ns"] - m["request_start_ns"]) * CALL_S * NS / mean)
                rid = f"bench-{lane}-{n}"
                r = copy.deepcopy(src)
                r["metadata"].update(x_request_id=rid, x_correlation_id=f"lane-{lane}", root_correlation_id=f"lane-{lane}",
                                     credit_issued_ns=t - 1_000_000, request_start_ns=t, request_ack_ns=t + 500_000,
                                     request_end_ns=t + length, session_num=n)
                r["metrics"]["request_latency"]["value"] = length / 1e6
                rec_fh.write(json.dumps(r, separators=(",", ":")) + "\n")
                tru = dict(truth.get(m["x_request_id"]) or {"status": "ok"})
                scale = length / max(1, (tru.get("last_token_sent_ns") or 1) - (tru.get("arrival_ns") or 0))
                base = tru.get("arrival_ns") or 0
                for key in ("admitted_ns", "first_token_sent_ns", "last_token_sent_ns"):
                    if isinstance(tru.get(key), int):
                        tru[key] = t + int((tru[key] - base) * scale)
                tru.update(request_id=rid, arrival_ns=t)
                tr_fh.write(json.dumps(tru, separators=(",", ":")) + "\n")
                t += length + int(THINK_S * NS)
                n += 1
    for section in ("metrics", "warmup_metrics"):
        for metric in export.get(section, {}).values():
            for series in metric.get("series") or []:
                real = series.get("timeslices") or []
                if section == "warmup_metrics" or not real:
                    continue
                series["timeslices"] = [dict(real[i % len(real)], start_ns=start + i * NS, end_ns=start + (i + 1) * NS)
                                        for i in range(seconds)]
    export["summary"]["phase_time_ranges"]["profiling"]["end_ns"] = start + seconds * NS
    (out / "aiperf" / "server_metrics_export.json").write_text(json.dumps(export))
    from harness.power.samples import COLUMNS, PowerSample, format_row

    with open(out / "power.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for i in range(-50, (seconds + 50) * 10):
            for g in range(gpus):
                writer.writerow(format_row(PowerSample(start + i * NS // 10, g, f"GPU-bench-{g}", 400 + (i * 7 + g) % 290,
                                                       energy_mj=i * 50_000)))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start / NS))
    with open(out / "server.log", "a") as fh:
        for i in range(seconds * 2):
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start / NS + i / 2))
            fh.write(f"[{stamp}] Decode batch, #running-req: {conc}, #token: 30000, token usage: 0.91, cuda graph: True, "
                     f"gen throughput (token/s): 812.44, #queue-req: 3\n")
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--seconds", type=int, default=3600)
    ap.add_argument("--conc", type=int, default=64)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    base = a.dir or Path(tempfile.mkdtemp(prefix="inspect-bench-"))
    point = base / "conc64"
    if point.exists():
        shutil.rmtree(point)
    t0 = time.monotonic()
    n = generate(point, a.seconds, a.conc, a.gpus)
    size = sum(p.stat().st_size for p in point.rglob("*") if p.is_file())
    print(f"generated {n:,} requests, {a.seconds:,} timeslices, {a.gpus} GPUs at 10 Hz: {size / 2**20:.0f} MiB "
          f"in {time.monotonic() - t0:.0f} s")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "harness", "inspect", str(point)], capture_output=True, text=True)
    wall = time.monotonic() - t0
    rss_gb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    if proc.returncode != 0:
        print(proc.stdout, proc.stderr)
        return 1
    page = point / "inspect.html"
    twin = point / "inspect.json"
    ok = wall <= 15 and rss_gb <= 1.5 and page.stat().st_size <= 8 * 2**20
    print(f"inspect: {wall:.1f} s wall, peak RSS {rss_gb:.2f} GB, page {page.stat().st_size / 2**20:.2f} MiB, "
          f"JSON twin {twin.stat().st_size / 2**20:.0f} MiB (targets: 15 s, 1.5 GB, 8 MB): "
          f"{'OK' if ok else 'OVER TARGET'}")
    sys.path.insert(0, str(ROOT))
    from tests.integration.browser import chromium, load_page

    if chromium() is None:
        print("chromium: not installed, page draw time not measured")
    else:
        with tempfile.TemporaryDirectory() as profile:
            run = load_page(page, Path(profile), "JSON.stringify({t: performance.getEntriesByType('navigation')[0]"
                            ".loadEventEnd, panels: document.querySelectorAll('svg.panel').length})")
        drawn = json.loads(run.value)
        print(f"chromium: loaded and drawn in {drawn['t'] / 1000:.2f} s, {drawn['panels']} panels, "
              f"{len(run.errors)} console errors (target 3 s): {'OK' if drawn['t'] <= 3000 and not run.errors else 'OVER TARGET'}")
    if not a.keep and a.dir is None:
        shutil.rmtree(base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
