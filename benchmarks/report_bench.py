"""Benchmark of `harness report`: 100 points whose per-request files hold 1M records in total (10M: ~26 GB).

Generates the points (10 curves x 10 concurrencies; one generating process per CPU) as a harness run leaves
them: a result JSON, `aiperf/profile_export.jsonl` in the layout AIPerf 0.13 writes (`PROFILING`,
`WARMUP`, `FAILED`: key order and metric set taken from real lines among the test fixtures, numbers
varied) and `aiperf/request_samples.bin` written by the point runner's own writer from the parsed records.
Then it times `build_report` in a fresh process and prints its wall time, CPU time and peak resident memory
(the report process and its workers together, sampled from /proc); target on a 2-core machine, up to 10M
records: at most 30 s and 1 GB, judged OK or OVER TARGET. Then it times the report again with the samples
files moved aside (the records parsed, as for another tool's run), printed but not judged.

    .venv/bin/python benchmarks/report_bench.py [--dir DIR] [--points 100] [--records 1000000] [--keep] [--reuse] [--no-raw]

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

from harness.point.record.samples_file import SAMPLES_FILE, kept_latencies, stamp, write_samples_file

CONCS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)

# One profiling record as AIPerf 0.13 writes it: the key order and metric set of a real profiling line
# (tests/fixtures/inferencex-server-metrics/profile_export.jsonl, line 3), numbers varied, the
# inter_chunk_latency list cut to 4 values (a real one holds one value per output chunk).
PROFILING = (
    '{"metadata":{"session_num":%(s)d,"x_request_id":"%(rid)s","x_correlation_id":"%(cid)s",'
    '"conversation_id":"synth-s0-%(s)04d","turn_index":%(t)d,"source_trace_id":"synth-s0-%(s)04d",'
    '"source_outer_idx":%(t)d,"source_kind":"weka_main","credit_issued_ns":%(c)d,"request_start_ns":%(st)d,'
    '"request_ack_ns":%(ack)d,"request_end_ns":%(end)d,"worker_id":"worker_e8b5a385",'
    '"record_processor_id":"record_processor_b37119fc","benchmark_phase":"profiling","phase_index":0,'
    '"profiling_index":0,"phase_name":"profiling","phase_kind":"profiling","was_cancelled":%(cancelled)s,'
    '"context_overflow_skip":false,"agent_depth":0,"root_correlation_id":"%(cid)s"},"metrics":{'
    '"http_req_chunks_sent":{"value":1,"unit":"count"},"output_sequence_length":{"value":%(osl)d,"unit":"tokens"},'
    '"usage_total_tokens":{"value":%(tot)d,"unit":"tokens"},"http_req_connection_reused":{"value":1,"unit":"ratio"},'
    '"usage_prompt_cache_read_tokens":{"value":%(cached)d,"unit":"tokens"},"http_req_blocked":{"value":0.0,"unit":"ms"},'
    '"http_req_connecting":{"value":0.0,"unit":"ms"},"http_req_dns_lookup":{"value":0.0,"unit":"ms"},'
    '"http_req_receiving":{"value":%(dec).6f,"unit":"ms"},"http_req_sending":{"value":0.293703,"unit":"ms"},'
    '"http_req_waiting":{"value":%(ttft).6f,"unit":"ms"},"usage_prompt_tokens":{"value":%(isl)d,"unit":"tokens"},'
    '"request_latency":{"value":%(e2el).6f,"unit":"ms"},"time_to_first_token":{"value":%(ttft).6f,"unit":"ms"},'
    '"http_req_duration":{"value":%(e2el).6f,"unit":"ms"},"output_token_count":{"value":%(osl)d,"unit":"tokens"},'
    '"usage_completion_tokens":{"value":%(osl)d,"unit":"tokens"},"http_req_data_received":{"value":%(kb).7f,"unit":"KB"},'
    '"time_to_first_output_token":{"value":%(ttft).6f,"unit":"ms"},"http_req_data_sent":{"value":7.0537109375,"unit":"KB"},'
    '"http_req_chunks_received":{"value":%(chunks)d,"unit":"count"},"time_to_second_token":{"value":%(tt2).6f,"unit":"ms"},'
    '"inter_chunk_latency":{"value":[%(icl)s],"unit":"ms"},"input_sequence_length":{"value":%(isl)d,"unit":"tokens"},'
    '"http_req_connection_overhead":{"value":0.0,"unit":"ms"},"http_req_total":{"value":%(e2el).6f,"unit":"ms"},'
    '"e2e_output_token_throughput":{"value":%(e2etp)r,"unit":"tokens/sec/user"},'
    '"osl_mismatch_diff_pct":{"value":0.0,"unit":"%%"},"decode_duration":{"value":%(dec).6f,"unit":"ms"},'
    '"inter_token_latency":{"value":%(itl)r,"unit":"ms"},"prefill_throughput_per_user":{"value":%(pftp)r,'
    '"unit":"tokens/sec/user"},"output_token_throughput_per_user":{"value":%(tpu)r,"unit":"tokens/sec/user"}}}\n'
)

# A warmup record and a failed one (HTTP 500), each in the layout of a real line
# (tests/fixtures/aiperf-5xx-warmup/aiperf/profile_export.jsonl): AIPerf's metric order differs between lines.
WARMUP = (
    '{"metadata":{"session_num":%(s)d,"x_request_id":"%(rid)s","x_correlation_id":"%(cid)s",'
    '"conversation_id":"synth-s0-%(s)04d","turn_index":%(t)d,"source_trace_id":"synth-s0-%(s)04d",'
    '"source_outer_idx":%(t)d,"source_kind":"weka_main","credit_issued_ns":%(c)d,"request_start_ns":%(st)d,'
    '"request_ack_ns":%(ack)d,"request_end_ns":%(end)d,"worker_id":"worker_91a877e1",'
    '"record_processor_id":"record_processor_1c91691b","benchmark_phase":"warmup","phase_name":"agentic.warmup",'
    '"phase_kind":"warmup","was_cancelled":false,"context_overflow_skip":false,"agent_depth":0,'
    '"root_correlation_id":"%(cid)s"},"metrics":{"http_req_data_received":{"value":1.009765625,"unit":"KB"},'
    '"output_sequence_length":{"value":1,"unit":"tokens"},"request_latency":{"value":%(e2el).6f,"unit":"ms"},'
    '"usage_prompt_tokens":{"value":%(isl)d,"unit":"tokens"},"http_req_connecting":{"value":22.038096,"unit":"ms"},'
    '"time_to_first_token":{"value":%(e2el).6f,"unit":"ms"},"http_req_waiting":{"value":%(ttft).6f,"unit":"ms"},'
    '"http_req_connection_reused":{"value":0,"unit":"ratio"},"http_req_chunks_sent":{"value":1,"unit":"count"},'
    '"http_req_chunks_received":{"value":1,"unit":"count"},"time_to_first_output_token":{"value":%(e2el).6f,'
    '"unit":"ms"},"http_req_dns_lookup":{"value":0.0,"unit":"ms"},"http_req_blocked":{"value":0.0,"unit":"ms"},'
    '"http_req_receiving":{"value":0.0,"unit":"ms"},"http_req_sending":{"value":22.946521,"unit":"ms"},'
    '"usage_completion_tokens":{"value":1,"unit":"tokens"},"input_sequence_length":{"value":%(isl)d,"unit":"tokens"},'
    '"usage_total_tokens":{"value":%(isl1)d,"unit":"tokens"},"http_req_duration":{"value":%(e2el).6f,"unit":"ms"},'
    '"output_token_count":{"value":1,"unit":"tokens"},"http_req_data_sent":{"value":6.1318359375,"unit":"KB"},'
    '"usage_prompt_cache_read_tokens":{"value":0,"unit":"tokens"},"osl_mismatch_diff_pct":{"value":0.0,"unit":"%%"},'
    '"e2e_output_token_throughput":{"value":%(e2etp)r,"unit":"tokens/sec/user"},'
    '"decode_duration":{"value":0.0,"unit":"ms"},"http_req_connection_overhead":{"value":22.038096,"unit":"ms"},'
    '"http_req_total":{"value":%(e2el).6f,"unit":"ms"},"prefill_throughput_per_user":{"value":%(pftp)r,'
    '"unit":"tokens/sec/user"}}}\n'
)
FAILED = (
    '{"metadata":{"session_num":%(s)d,"x_request_id":"%(rid)s","x_correlation_id":"%(cid)s",'
    '"conversation_id":"synth-s0-%(s)04d","turn_index":%(t)d,"source_trace_id":"synth-s0-%(s)04d",'
    '"source_outer_idx":%(t)d,"source_kind":"weka_main","credit_issued_ns":%(c)d,"request_start_ns":%(st)d,'
    '"request_end_ns":%(st)d,"worker_id":"worker_91a877e1","record_processor_id":"record_processor_1c91691b",'
    '"benchmark_phase":"profiling","phase_index":0,"profiling_index":0,"phase_name":"profiling",'
    '"phase_kind":"profiling","was_cancelled":false,"context_overflow_skip":false,"agent_depth":0,'
    '"root_correlation_id":"%(cid)s"},"metrics":{},"error":{"code":500,"type":"Internal Server Error",'
    '"message":"{\\"object\\": \\"error\\", \\"message\\": \\"injected server error\\", '
    '\\"type\\": \\"InternalServerError\\", \\"param\\": null, \\"code\\": 500}"}}\n'
)
WARMUP_RECORDS = 20
LAYOUT = "aiperf-0.13"   # the marker of data generated in this layout (older data is generated again)
FAILED_EVERY = 997   # one profiled request in ~1000 fails


def record_and_fields(rng: random.Random, r: int, conc: int, per_point: int) -> tuple[str, dict[str, object]]:
    """Record `r` of a point of `per_point` records (the first few warmup, the last `conc` cancelled at the
    cutoff, one in ~1000 failed, the rest successful profiled requests), and the fields of it that the samples
    writer reads, as JSON parsing gives them (without paying for parsing 2.6 KB per record)."""
    e2el = rng.lognormvariate(8.0, 0.6)
    ttft = e2el * rng.uniform(0.03, 0.2)
    osl = 300 + r % 700
    st = 1_796_095_325_475_917_901 + r * 10_000_000
    isl = 20000 + r % 5000
    cancelled = r >= per_point - conc
    values = {
        "s": r % conc, "rid": f"{r:08x}-349c-46b8-9799-{r:012x}", "cid": f"{r % conc:08x}-4553-48e7-b16a-0913c9136451",
        "t": r // conc, "c": st - 1_171_506, "st": st, "ack": st + 1_581_071, "end": st + int(e2el * 1e6),
        "cancelled": "true" if cancelled else "false", "e2el": e2el, "ttft": ttft,
        "tt2": 0.17862699999999998 + r % 3, "dec": e2el - ttft, "osl": osl, "isl": isl, "isl1": isl + 1,
        "tot": isl + osl, "cached": isl - 222, "kb": osl * 0.2551, "chunks": osl - 29,
        "icl": ICL[r % len(ICL)], "e2etp": osl / e2el * 1e3, "itl": (e2el - ttft) / (osl - 1),
        "pftp": isl / ttft * 1e3, "tpu": (osl - 1) / (e2el - ttft) * 1e3,
    }
    template = WARMUP if r < WARMUP_RECORDS else FAILED if r % FAILED_EVERY == 0 else PROFILING
    meta = {"benchmark_phase": "warmup" if template is WARMUP else "profiling", "was_cancelled": cancelled}
    fields: dict[str, object] = (
        {"metadata": meta, "metrics": {}, "error": {"code": 500}} if template is FAILED else
        {"metadata": meta, "metrics": {"request_latency": {"value": float(f"{e2el:.6f}"), "unit": "ms"},
                                       "time_to_first_token": {"value": float(f"{ttft:.6f}"), "unit": "ms"}}})
    return template % values, fields


def record_line(rng: random.Random, r: int, conc: int, per_point: int) -> str:
    """Record `r` of a point of `per_point` records, as AIPerf writes it (see `record_and_fields`)."""
    return record_and_fields(rng, r, conc, per_point)[0]


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


ICL = [",".join(repr(3.5 + (r + k) % 7 * 0.37123456789) for k in range(4)) for r in range(7)]


def generate_point(root: Path, i: int, per_point: int) -> int:
    rng = random.Random(7 * 1_000_003 + i)
    key, conc = f"bench-curve-{i // len(CONCS):02d}", CONCS[i % len(CONCS)]
    d = root / key / f"conc{conc}"
    (d / "aiperf").mkdir(parents=True, exist_ok=True)
    (d / f"bmk_agentic_{key}_conc{conc}.json").write_text(json.dumps(result(key, conc, rng)))
    records = d / "aiperf" / "profile_export.jsonl"
    with open(records, "w") as fh:
        lines, parsed = [], []
        for r in range(per_point):
            line, fields = record_and_fields(rng, r, conc, per_point)
            if r < 50 or r % 9973 == 0:   # the fields are what parsing the line gives
                assert kept_latencies(json.loads(line)) == kept_latencies(fields), (r, line)
            lines.append(line)
            parsed.append(fields)
            if len(lines) == 2000:
                fh.write("".join(lines))
                lines.clear()
        fh.write("".join(lines))
    source = stamp(records)   # what the point runner does when it finishes a point, from the parsed records
    write_samples_file(records, parsed, source)
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


def hidden_samples_files(root: Path) -> list[tuple[Path, Path]]:
    """Move every point's samples file aside (the report then parses the records); returns the moves to undo."""
    moves = [(p, p.with_name(p.name + ".hidden")) for p in (root / "runs").rglob(SAMPLES_FILE)]
    for src, dst in moves:
        src.rename(dst)
    return moves


def report_line(what: str, root: Path, judged: bool) -> None:
    shutil.rmtree(root / "report", ignore_errors=True)
    wall, cpu, peak, code = time_report(root)
    peak_mb = peak / 2 ** 20
    ok = code == 0 and wall <= 30 and peak_mb <= 1024
    verdict = f": {'OK' if ok else 'OVER TARGET'}" if judged else " (not judged)"
    print(f"{what}: {wall:.1f} s wall (incl. interpreter start), {cpu:.1f} s CPU, peak RSS {peak_mb:.0f} MB "
          f"(target <= 30 s, <= 1024 MB){verdict}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=None, help="where to generate (default: a temporary directory)")
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--keep", action="store_true", help="keep the generated data")
    ap.add_argument("--reuse", action="store_true", help="reuse data generated earlier in --dir with the same counts")
    ap.add_argument("--no-raw", action="store_true", help="skip the report over the records alone")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="report-bench-"))
    marker = root / "generated.json"
    wanted = {"points": args.points, "records": args.records, "layout": LAYOUT}
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
                  f"in {time.monotonic() - t0:.1f} s", flush=True)
        report_line("report, points as the harness leaves them", root, judged=True)
        if not args.no_raw:
            moves = hidden_samples_files(root)
            try:
                report_line(f"report, records parsed ({len(moves)} samples files moved aside)", root, judged=False)
            finally:
                for src, dst in moves:
                    dst.rename(src)
    finally:
        if not args.keep and not args.reuse:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
