"""Scale of the results store (SQLite): ingest, history and regress, against its targets.

1. ingest 100,000 points (1,000 runs of 100 points, 10 per-request E2EL and TTFT samples each: 1M samples of each)
   through the store's write path (`harness.store.ingest.write_entries`: one transaction per run, each entry with a
   record, row, settings and fingerprint of realistic shape) into a fresh SQLite file; target ≤ 60 s;
2. `history` of one point over its 1,000 runs (the query, every run's order-statistic interval and the change marks, as
   `harness history` computes its table); target ≤ 1 s; the PNG and page are timed apart;
3. `regress` of 100 points × 10 runs a side (`last=10,skip=10` vs `last=10`: loading 2,000 entries with their samples,
   then the gate); target ≤ 10 s.

Reading point directories from disk is not in (1): it is timed per point at the end (`read_entry` of a synthetic
point directory), so the whole ingest of N directories is about N times that plus (1)'s per-point figure.

    .venv/bin/python benchmarks/store_bench.py [--runs 1000] [--points 100] [--samples 10] [--db PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.history.render import table, write  # noqa: E402
from harness.history.series import histories  # noqa: E402
from harness.regress.gate import gate  # noqa: E402
from harness.store.db import open_store  # noqa: E402
from harness.store.entry import Entry, read_entry  # noqa: E402
from harness.store.ingest import write_entries  # noqa: E402
from harness.store.location import parse  # noqa: E402
from harness.store.select import select_entries  # noqa: E402

T0 = 1_790_000_000 * 10**9
LATENCY = {"latency": {m: {s: 0.123456789 * (i + 1) for i, s in enumerate(("mean", "p50", "p75", "p90", "p95", "p99",
                                                                          "std"))}
                       for m in ("ttft", "e2el", "itl", "tpot", "intvty")}}


def run_entries(run: int, concs: list[int], rng: np.random.Generator, samples: int) -> list[Entry]:
    """One run's entries: every point's samples drawn at once, their percentiles taken along the rows."""
    medians = np.log(2.0 + np.asarray(concs) / 50)[:, None]
    e2el = rng.lognormal(medians, 0.3, (len(concs), samples))
    p50, p90 = np.percentile(e2el, 50, axis=1), np.percentile(e2el, 90, axis=1)
    tput = 1000 - np.asarray(concs) + rng.normal(0, 10, len(concs))
    settings = {"image": "lmsysorg/sglang:v0.5.23-cu130", "engine": "sglang", "sglang_version": "0.5.23",
                "args": {"tp-size": 8, "mem-fraction-static": 0.85, "chunked-prefill-size": 8192,
                         "max-running-requests": 256 if run < 500 else 128},
                "env": {"NCCL_DEBUG": "WARN"}, "client": {"scenario": "agentx", "duration_s": 3600}}
    out = []
    for i, conc in enumerate(concs):
        record = {"schema_version": 1, "config_key": "bench", "conc": conc, "state": "completed", "attempt": f"r{run}",
                  "request_metrics": LATENCY, "validity": {"valid": True, "reasons": []},
                  "client": {"tool": {"name": "agentx-harness", "version": "1.0.12"}}}
        out.append(Entry(
            entry_key=f"bench-{run}-{conc}", config_key="bench", point=f"c{conc}", conc=conc, state="completed",
            attempt=f"r{run}", valid=True, started_at_ns=T0 + run * 86_400 * 10**9 + conc, engine="sglang",
            image="lmsysorg/sglang:v0.5.23-cu130", sglang_version="0.5.23", client_name="agentx-harness",
            client_version="1.0.12", scenario="agentic-coding/agentx", recipe_revision="0123456789ab", host="node1",
            hardware="h200 8x NVIDIA H200", recipe_fingerprint="f" * 64, settings_hash=str(run >= 500),
            tput_per_gpu=float(tput[i]), e2el_p50=float(p50[i]), e2el_p90=float(p90[i]),
            ttft_p90=float(p90[i] / 10), intvty_p90=30.0, n_requests=samples, record=record,
            row={"conc": conc, "hw": "h200"}, settings=settings,
            fingerprints={"fingerprint_agg_w0.json": {"hostname": "node1", "gpu": {"count": 8}}},
            e2el=e2el[i].tolist(), ttft=(e2el[i] / 10).tolist()))
    return out


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--points", type=int, default=100)
    parser.add_argument("--samples", type=int, default=10, help="per-request samples per point")
    parser.add_argument("--db", type=Path, help="the SQLite file (default: a fresh one in a temporary directory)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="store-bench-"))
    db = args.db or tmp / "results.sqlite3"
    location = parse(str(db))
    assert location is not None
    rng = np.random.default_rng(0)
    concs = list(range(1, args.points + 1))
    total = args.runs * args.points
    with open_store(location) as store:
        built = 0.0
        t = time.perf_counter()
        for run in range(args.runs):
            b = time.perf_counter()
            entries = run_entries(run, concs, rng, args.samples)
            built += time.perf_counter() - b
            write_entries(store, f"/runs/night{run}", entries)
        took = time.perf_counter() - t - built
        size = os.path.getsize(db) / 2**20
        print(f"ingest: {total:,} points, {total * args.samples:,} samples of E2EL and of TTFT in {took:.1f} s "
              f"({took / total * 1e6:.0f} µs a point; building the entries in memory took {built:.1f} s more); "
              f"store {size:.0f} MiB; target 60 s: {'OK' if took <= 60 else 'OVER'}")

        t = time.perf_counter()
        found = histories(select_entries(store, {"config": "bench", "point": "c4"}, light=True), "e2el_p90")
        text = table(found)
        took = time.perf_counter() - t
        marks = sum(1 for r in found[0].rows if r.marks)
        print(f"history: c4 over {len(found[0].rows):,} runs ({marks} change marked, {len(text.splitlines())} lines) "
              f"in {took:.2f} s; target 1 s: {'OK' if took <= 1 else 'OVER'}")
        t = time.perf_counter()
        write(found, tmp / "history")
        print(f"history: its PNG and page in {time.perf_counter() - t:.2f} s more")

        t = time.perf_counter()
        base = select_entries(store, "last=10,skip=10", baseline=True)
        cand = select_entries(store, "last=10")
        loaded = time.perf_counter() - t
        result = gate(base, cand)
        took = time.perf_counter() - t
        print(f"regress: {len(result.points)} points x 10 runs a side ({len(base) + len(cand):,} entries, "
              f"{result.family} comparisons, {len(result.regressions)} regressions) in {took:.2f} s (loading "
              f"{loaded:.2f} s); target 10 s: {'OK' if took <= 10 else 'OVER'}")

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.store_support import latencies, write_point

    point = write_point(tmp / "point", e2el=latencies(1000, 5.0, 1))
    t = time.perf_counter()
    for _ in range(100):
        read_entry(point)
    print(f"reading one point directory (record, status, plan, row, 1,000 per-request records): "
          f"{(time.perf_counter() - t) * 10:.1f} ms")
    print(f"peak memory {peak_mb():.0f} MiB; files in {tmp}")


if __name__ == "__main__":
    main()
