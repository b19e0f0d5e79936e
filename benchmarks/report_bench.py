"""Benchmark of `harness report`: 100 points whose per-request files hold 1M records in total (10M: ~16 GB).

Generates the points (10 curves x 10 concurrencies, result JSON plus an AIPerf-0.13-shaped
`aiperf/profile_export.jsonl` per point; one generating process per CPU), then times `build_report` in a
fresh process and prints its wall time, CPU time and peak resident memory (the report process and its
workers together, sampled from /proc). Target on a 2-core machine, up to 10M records: at most 30 s and
1 GB; it prints OK or OVER TARGET.

    .venv/bin/python benchmarks/report_bench.py [--dir DIR] [--points 100] [--records 1000000] [--keep] [--reuse]

`--reuse` (with `--dir`) times the report again on data generated earlier with the same counts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

CONCS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)

# One record as AIPerf 0.13 writes it (compact JSON, metadata then ~20 metrics with units).
RECORD = (
    '{"metadata":{"session_num":%(s)d,"x_request_id":"%(rid)s","x_correlation_id":"agentic-session_%(s)06d",'
    '"conversation_id":"session_%(s)06d","turn_index":%(t)d,"credit_issued_ns":%(c)d,"request_start_ns":%(st)d,'
    '"request_ack_ns":%(ack)d,"request_end_ns":%(end)d,"worker_id":"worker_f27eecaa",'
    '"record_processor_id":"record_processor_75e73667","benchmark_phase":"%(phase)s","phase_index":1,'
    '"phase_name":"%(phase)s","was_cancelled":false,"context_overflow_skip":false,"agent_depth":0,'
    '"root_correlation_id":"agentic-session_%(s)06d"},"metrics":{"request_latency":{"value":%(e2el).3f,"unit":"ms"},'
    '"time_to_first_token":{"value":%(ttft).3f,"unit":"ms"},"time_to_second_token":{"value":%(tt2).3f,"unit":"ms"},'
    '"inter_token_latency":{"value":%(itl).4f,"unit":"ms"},"inter_chunk_latency":{"value":[%(icl)s],"unit":"ms"},'
    '"decode_duration":{"value":%(dec).3f,"unit":"ms"},"input_sequence_length":{"value":%(isl)d,"unit":"tokens"},'
    '"output_sequence_length":{"value":%(osl)d,"unit":"tokens"},"usage_prompt_tokens":{"value":%(isl)d,"unit":"tokens"},'
    '"usage_completion_tokens":{"value":%(osl)d,"unit":"tokens"},"usage_total_tokens":{"value":%(tot)d,"unit":"tokens"},'
    '"output_token_throughput_per_user":{"value":%(tpu).3f,"unit":"tokens/sec/user"},'
    '"http_req_waiting":{"value":%(ttft).3f,"unit":"ms"},"http_req_receiving":{"value":%(dec).3f,"unit":"ms"},'
    '"http_req_duration":{"value":%(e2el).3f,"unit":"ms"},"http_req_connecting":{"value":0.0,"unit":"ms"},'
    '"credit_to_start_latency":{"value":0.412,"unit":"ms"},"good_request_count":{"value":1,"unit":"requests"}}}\n'
)


def result(key: str, conc: int, rng: random.Random) -> dict[str, object]:
    e2el = 2.0 + conc * 0.4 * rng.uniform(0.9, 1.1)
    lat = {m: {"mean": v, "p50": v, "p75": v * 1.3, "p90": v * 1.7, "p95": v * 2, "p99": v * 3, "std": v / 2}
           for m, v in (("ttft", e2el / 10), ("e2el", e2el), ("itl", 0.01), ("tpot", 0.01),
                        ("intvty", 100 / conc), ("e2e_norm_intvty", 50 / conc))}
    return {"schema_version": 1, "config_key": key, "engine": "sim", "simulated": True, "conc": conc,
            "image": "lmsysorg/sglang:v0.5.23", "model": "m", "framework": "sglang", "precision": "fp4",
            "spec_decoding": "none", "tp": 4, "ep": 4, "pp": 1, "kv_offloading": "none", "num_gpus": 4,
            "num_requests_total": 100, "num_requests_successful": 100,
            "request_accounting": {"errors": 0, "cancelled_at_cutoff": 0},
            "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 500 * conc ** 0.6 * rng.uniform(0.9, 1.1)}},
                                "latency": lat},
            "validity": {"valid": True, "reasons": []}}


ICL = [",".join(f"{10 + (r + k) % 7 * 0.37:.2f}" for k in range(16)) for r in range(7)]


def generate_point(root: Path, i: int, per_point: int) -> int:
    rng = random.Random(7 * 1_000_003 + i)
    key, conc = f"bench-curve-{i // len(CONCS):02d}", CONCS[i % len(CONCS)]
    d = root / key / f"conc{conc}"
    (d / "aiperf").mkdir(parents=True, exist_ok=True)
    (d / f"bmk_agentic_{key}_conc{conc}.json").write_text(json.dumps(result(key, conc, rng)))
    base = 1_795_958_834_000_000_000
    with open(d / "aiperf" / "profile_export.jsonl", "w") as fh:
        lines = []
        for r in range(per_point):
            e2el = rng.lognormvariate(8.0, 0.6)
            ttft = e2el * rng.uniform(0.03, 0.2)
            st = base + r * 10_000_000
            lines.append(RECORD % {
                "s": r % conc, "rid": f"{r:032x}", "t": r // conc, "c": st - 1000, "st": st, "ack": st + 9000,
                "end": st + int(e2el * 1e6), "phase": "warmup" if r < 20 else "profiling", "e2el": e2el,
                "ttft": ttft, "tt2": ttft + 9.5, "itl": 10.5, "dec": e2el - ttft, "icl": ICL[r % 7],
                "isl": 20000 + r % 5000, "osl": 300 + r % 700, "tot": 20300 + r % 5700, "tpu": 95.2,
            })
            if len(lines) == 2000:
                fh.write("".join(lines))
                lines.clear()
        fh.write("".join(lines))
    return per_point


def generate(root: Path, points: int, records: int) -> int:
    """The points' files, one generating process per CPU; returns the number of records written."""
    per_point = records // points
    with ProcessPoolExecutor(len(os.sched_getaffinity(0))) as pool:
        return sum(pool.map(generate_point, [root] * points, range(points), [per_point] * points))


def _tree_rss_bytes(pid: int) -> int:
    """Resident memory of `pid` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))   # ppid -> pid
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total


def time_report(root: Path) -> tuple[float, float, int, int]:
    """(wall s, CPU s of the process tree, peak RSS bytes of the tree, exit code) of `build_report` in a
    fresh process."""
    code = ("import sys, time; from pathlib import Path; from harness.report import build_report;"
            "t = time.monotonic(); o = build_report([Path(sys.argv[1])], Path(sys.argv[2]));"
            "print(f'build_report: {len(o.curves)} curves, {sum(len(c.points) for c in o.curves)} points, "
            "{time.monotonic() - t:.1f} s')")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", code, str(root / "runs"), str(root / "report")])
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_bytes(proc.pid))
        time.sleep(0.2)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, max(peak, after.ru_maxrss * 1024), proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=None, help="where to generate (default: a temporary directory)")
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--keep", action="store_true", help="keep the generated data")
    ap.add_argument("--reuse", action="store_true", help="reuse data generated earlier in --dir with the same counts")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="report-bench-"))
    marker = root / "generated.json"
    wanted = {"points": args.points, "records": args.records}
    try:
        if args.reuse and marker.is_file() and json.loads(marker.read_text()) == wanted:
            print(f"reusing {args.points} points, {args.records} records in {root}")
        else:
            shutil.rmtree(root / "runs", ignore_errors=True)
            t0 = time.monotonic()
            n = generate(root / "runs", args.points, args.records)
            size = sum(p.stat().st_size for p in (root / "runs").rglob("*.jsonl"))
            marker.write_text(json.dumps(wanted))
            print(f"generated {args.points} points, {n} records, {size / 1e6:.0f} MB of jsonl "
                  f"in {time.monotonic() - t0:.1f} s")
        shutil.rmtree(root / "report", ignore_errors=True)
        wall, cpu, peak, code = time_report(root)
        peak_mb = peak / 2 ** 20
        ok = code == 0 and wall <= 30 and peak_mb <= 1024
        print(f"report process: {wall:.1f} s wall (incl. interpreter start), {cpu:.1f} s CPU, peak RSS {peak_mb:.0f} MB "
              f"(target <= 30 s, <= 1024 MB): {'OK' if ok else 'OVER TARGET'}")
    finally:
        if not args.keep and not args.reuse:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
