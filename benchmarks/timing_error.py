"""The harness's own timing error: each request's TTFT and E2EL as the client recorded them, against the
simulator's truth log (its own receive and send times), at high concurrency.

For each concurrency it runs one point with `harness run` (the simulator serving `timing-h200-tp8.yaml`'s
`h200-tp8` profile, real AIPerf replaying), with `--sim-truth-log`, while it samples the CPU of every process of
the run once a second (the simulator, AIPerf's processes by role, the harness). Then it matches the client's
records to the truth log by request id and prints, per point:

- TTFT and E2EL error percentiles (|client - server|, ms) over the successful profiled requests;
- the requests, the achieved concurrency and the point's validity, from the point's record;
- the host (CPU model, cores) and each process group's CPU (mean and peak, in cores), with the whole host's busy
  and stolen CPU (`host:busy`, `host:steal`: load from outside the run, a hypervisor's other guests);
- each process group's resident memory (MiB): the median of the first and of the last tenth of the samples and
  the peak, so a long window shows whether the harness's, AIPerf's or the simulator's memory grows;
- where the slowest 1% of TTFT errors arise: each error is exactly `to_server` (the client's start stamp to the
  simulator's receive stamp: the client's `send`, up to the request's last byte, then `server_in`, the kernel and
  the simulator's event loop) plus `from_server` (the simulator's first-token write to the client reading it),
  all on the host's wall clock; with how many workers the tail spans, how bunched it is in time, and its prompt
  sizes. Each request's parts land in OUT/cN/requests.jsonl.

    python3 benchmarks/timing_error.py                                  # c48 and c64, 120 s windows
    python3 benchmarks/timing_error.py --conc 48 --duration 120 --set client.workers=16
    python3 benchmarks/timing_error.py --conc 64 --duration 900 --out /tmp/timing
    python3 benchmarks/timing_error.py --conc 256 512 --duration 120                 # the recipe's c256 and c512

`--set` passes settings to every point (`client.workers=N`, `client.record_processors=N`, ...), so one
command compares the client's configurations on the same server. A JSON summary lands in OUT/summary.json.
The error is what a point's published latency carries on top of the server's own: the target is p99 <= 2 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RECIPE = HERE / "timing-h200-tp8.yaml"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    """Every descendant of `pid` (from /proc's children lists)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = [int(x) for x in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            out += kids
            todo += kids
    return out


def _role(pid: int) -> str | None:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None
    if "harness.sim" in cmd or "sglang" in cmd:
        return "simulator"
    if "aiperf" in cmd or "aiperf" in comm.lower():
        low = comm.lower()
        for role in ("worker", "record", "timing", "dataset", "manager", "records"):
            if role in low:
                return f"aiperf:{role}"
        return "aiperf:main" if "profile" in cmd else f"aiperf:{comm.removeprefix('aiperf ')}"
    if "harness" in cmd:
        return "harness"
    return None


PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / 2**20


def _rss_mib(pid: int) -> float | None:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_MIB
    except (OSError, IndexError, ValueError):
        return None


def window_memory(samples: list[tuple[float, float]], start_s: float, end_s: float, requests: int) -> dict[str, Any]:
    """A role's resident memory inside the profiling window only (wall-clock seconds): its drift, as `rss_drift`,
    the median of each minute, so a plateau and a steady growth read apart, and the drift per request of the
    `requests` the window started (KiB), so a growth that follows the load reads apart from one that does not."""
    inside = [(t, mib) for t, mib in samples if start_s <= t <= end_s]
    if not inside:
        return {}
    minutes: dict[int, list[float]] = {}
    for t, mib in inside:
        minutes.setdefault(int((t - start_s) // 60), []).append(mib)
    drift = rss_drift([mib for _, mib in inside])
    return {**drift, "per_minute_mib": [round(statistics.median(v), 1) for _, v in sorted(minutes.items())],
            "growth_kib_per_request": round(drift["growth_mib"] * 1024 / requests, 2) if requests else None}


def rss_drift(samples: list[float]) -> dict[str, float]:
    """A process group's resident memory over a run (MiB): the median of its first and of its last tenth of the
    samples, their difference, and the peak. A flat memory has a growth near 0 however long the window."""
    tenth = max(1, len(samples) // 10)
    first, last = statistics.median(samples[:tenth]), statistics.median(samples[-tenth:])
    return {"first_mib": round(first, 1), "last_mib": round(last, 1), "growth_mib": round(last - first, 1),
            "peak_mib": round(max(samples), 1)}


def _cpu_ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])   # utime + stime


def _host_ticks() -> dict[str, int]:
    """The whole host's CPU ticks since boot: `host:busy` (every process, every core) and `host:steal` (time the
    hypervisor gave this VM's cores to others), from /proc/stat's first line."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9])
    return {"host:busy": user + nice + system + irq + softirq, "host:steal": steal}


def host_description() -> str:
    """The CPU model and core count: timing figures compare only between hosts of the same kind."""
    models = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
              if line.startswith("model name")]
    return f"{models[0] if models else 'unknown CPU'}, {os.cpu_count()} cores"


class CpuSampler(threading.Thread):
    """Once a second: CPU (cores) used by each role's processes since the last sample, and by the whole host
    (`host:busy`, which includes load from outside the run, and `host:steal`)."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root, self.stop_event = root, threading.Event()
        self.series: dict[str, list[float]] = {}
        self.rss: dict[str, list[tuple[float, float]]] = {}   # (wall-clock s, MiB) per role
        self._last: dict[int, int] = {}

    def run(self) -> None:
        last_t, last_host = time.monotonic(), _host_ticks()
        while not self.stop_event.wait(1.0):
            now, host = time.monotonic(), _host_ticks()
            used = {k: (host[k] - last_host[k]) / CLK_TCK / (now - last_t) for k in host}
            last_host = host
            rss: dict[str, float] = {}
            for pid in [self.root, *_children(self.root)]:
                role, ticks, mib = _role(pid), _cpu_ticks(pid), _rss_mib(pid)
                if role is None or ticks is None:
                    continue
                used[role] = used.get(role, 0.0) + (ticks - self._last.get(pid, ticks)) / CLK_TCK / (now - last_t)
                self._last[pid] = ticks
                rss[role] = rss.get(role, 0.0) + (mib or 0.0)
            wall = time.time()
            for role, mib in rss.items():
                self.rss.setdefault(role, []).append((wall, mib))
            for role, cores in used.items():
                self.series.setdefault(role, []).append(cores)
            last_t = now

    def summary(self) -> dict[str, dict[str, Any]]:
        return {role: {"mean_cores": round(statistics.fmean(v), 3), "peak_cores": round(max(v), 3),
                       **({"rss": rss_drift([mib for _, mib in self.rss[role]])} if self.rss.get(role) else {})}
                for role, v in sorted(self.series.items()) if v}

    def window(self, start_s: float, end_s: float, requests: int) -> dict[str, dict[str, Any]]:
        """Each role's memory inside the window (`window_memory`)."""
        return {role: w for role, samples in sorted(self.rss.items())
                if (w := window_memory(samples, start_s, end_s, requests))}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def request_error(record: dict[str, Any], truth: dict[str, Any]) -> dict[str, Any]:
    """One request's TTFT error split where it arises (ms; signed: the client's view minus the server's).

    Both sides stamp the host's wall clock, so the error is exactly `to_server + from_server`:
    `to_server`, the client's start stamp to the server's receive stamp, and `from_server`, the server's
    first-token write to the client reading it (the kernel and the client's event loop). `to_server` is the
    client's `send` (its start stamp to the request's last byte written: AIPerf's TTFT less its
    `http_req_waiting`, which runs from that byte to the first response byte) and `server_in` (that byte to the
    server's receive stamp: the kernel and the server's event loop reaching the request).
    """
    metrics, meta = record["metrics"], record["metadata"]
    ttft_ms = metrics["time_to_first_token"]["value"]
    start_ns = meta["request_start_ns"]
    send = ttft_ms - metrics["http_req_waiting"]["value"]
    to_server = (truth["arrival_ns"] - start_ns) / 1e6
    from_server = ttft_ms - (truth["first_token_sent_ns"] - start_ns) / 1e6
    return {"start_ns": start_ns, "worker": meta.get("worker_id"), "prompt_tokens": truth.get("prompt_tokens"),
            "ttft_err_ms": ttft_ms - (truth["first_token_sent_ns"] - truth["arrival_ns"]) / 1e6,
            "e2el_err_ms": metrics["request_latency"]["value"]
            - (truth["last_token_sent_ns"] - truth["arrival_ns"]) / 1e6,
            "to_server_ms": to_server, "send_ms": send, "server_in_ms": to_server - send,
            "from_server_ms": from_server}


def matched_requests(point_dir: Path, truth_path: Path) -> tuple[list[dict[str, Any]], int]:
    """Every successful profiled request of the point with its error parts, and how many had no truth."""
    truth = {}
    for line in truth_path.read_text().splitlines():
        t = json.loads(line)
        truth[t["request_id"]] = t
    rows, unmatched = [], 0
    for line in (point_dir / "aiperf" / "profile_export.jsonl").read_text().splitlines():
        r = json.loads(line)
        metrics, meta = r.get("metrics") or {}, r.get("metadata") or {}
        if r.get("error") or "time_to_first_token" not in metrics or meta.get("benchmark_phase") != "profiling":
            continue   # the window's requests only: warm-up calls are one-token and not published
        t = truth.get(meta.get("x_request_id"))
        if t is None or t.get("status") != "ok":
            unmatched += 1
            continue
        rows.append(request_error(r, t))
    return rows, unmatched


def tail_attribution(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Where the slowest 1% of TTFT errors arise: the mean of each part over the tail beside the median request,
    how many AIPerf workers the tail spans, and how bunched it is in time (its share in the busiest 10 s)."""
    cut = _pct([abs(r["ttft_err_ms"]) for r in rows], 0.99)
    tail = [r for r in rows if abs(r["ttft_err_ms"]) >= cut]
    parts = ("to_server_ms", "send_ms", "server_in_ms", "from_server_ms")
    starts = sorted(r["start_ns"] for r in tail)
    busiest = max(sum(1 for s in starts[i:] if s - t0 <= 10e9) for i, t0 in enumerate(starts))
    return {"requests": len(tail), "threshold_ms": round(cut, 3),
            "parts_ms": {p: {f"p{q * 100:g}": round(_pct([r[p] for r in rows], q), 3) for q in (0.5, 0.99, 0.999)}
                         for p in parts},
            "tail_mean_ms": {p: round(statistics.fmean(r[p] for r in tail), 3) for p in parts},
            "all_median_ms": {p: round(statistics.median(r[p] for r in rows), 3) for p in parts},
            "workers": len({r["worker"] for r in tail}), "workers_all": len({r["worker"] for r in rows}),
            "share_in_busiest_10s": round(busiest / len(tail), 3),
            "prompt_tokens_tail_median": statistics.median(r["prompt_tokens"] or 0 for r in tail),
            "prompt_tokens_all_median": statistics.median(r["prompt_tokens"] or 0 for r in rows)}


def timing_errors(point_dir: Path, truth_path: Path, out: Path) -> dict[str, Any]:
    """|client - server| TTFT and E2EL percentiles (ms) of every successful profiled request found in the truth
    log, and where the tail arises; each request's parts land in OUT/requests.jsonl."""
    rows, unmatched = matched_requests(point_dir, truth_path)
    if not rows:
        raise SystemExit(f"{point_dir}: no client record matched the truth log: nothing was measured")
    (out / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ttft = [abs(r["ttft_err_ms"]) for r in rows]
    e2el = [abs(r["e2el_err_ms"]) for r in rows]
    return {"requests": len(rows), "unmatched": unmatched,
            **{f"ttft_err_ms_p{int(q * 100)}": round(_pct(ttft, q), 3) for q in (0.5, 0.9, 0.99)},
            **{f"e2el_err_ms_p{int(q * 100)}": round(_pct(e2el, q), 3) for q in (0.5, 0.9, 0.99)},
            "tail": tail_attribution(rows)}


def run_point(conc: int, duration: float, out: Path, settings: list[str]) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    truth = out / "truth.jsonl"
    truth.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "harness", "run", str(RECIPE), "--point", f"c{conc}", "--duration", str(duration),
            "--out", str(out / "runs"), "--tag", "timing", "--set", f"sim_args.sim-truth-log={truth}"]
    for s in settings:
        argv += ["--set", s]
    log = (out / "harness-run.log").open("w")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    sampler = CpuSampler(proc.pid)
    sampler.start()
    rc = proc.wait()
    sampler.stop_event.set()
    sampler.join()
    records = sorted((out / "runs").rglob("point_result.json"), key=lambda p: p.stat().st_mtime)
    if rc not in (0, 3) or not records:   # 3: the point completed but is invalid (its verdict is printed)
        raise SystemExit(f"c{conc}: harness run exited {rc}; see {out / 'harness-run.log'}")
    record = json.loads(records[-1].read_text())
    errors = timing_errors(records[-1].parent, truth, out)
    starts = [json.loads(line)["start_ns"] / 1e9 for line in (out / "requests.jsonl").read_text().splitlines()]
    achieved = (record.get("achieved_concurrency") or {}).get("sessions")
    return {"conc": conc, "duration_s": duration, "settings": settings, **errors,
            "achieved_concurrency": None if achieved is None else round(achieved, 2),
            "valid": (record.get("validity") or {}).get("valid"),
            "host": host_description(), "cpu": sampler.summary(),
            "memory_in_window": sampler.window(min(starts), max(starts), len(starts))}


def _window_line(memory: dict[str, dict[str, Any]]) -> str:
    return "; ".join(f"{role} {m['first_mib']:.0f} -> {m['last_mib']:.0f} ("
                     + " ".join(f"{v:.0f}" for v in m["per_minute_mib"])
                     + (f"; {m['growth_kib_per_request']:.1f} KiB/request" if m["growth_kib_per_request"] else "") + ")"
                     for role, m in memory.items())


def _tail_line(t: dict[str, Any]) -> str:
    parts = ", ".join(f"{p.removesuffix('_ms')} {t['tail_mean_ms'][p]:.2f} ms (median request {t['all_median_ms'][p]:.2f})"
                      for p in t["tail_mean_ms"])
    spread = ", ".join(f"{p.removesuffix('_ms')} " + " / ".join(f"{v:.2f}" for v in q.values())
                       for p, q in t["parts_ms"].items())
    return (f"parts p50 / p99 / p99.9 (ms): {spread}\n  "
            f"slowest 1% (>= {t['threshold_ms']:.2f} ms, {t['requests']} requests): {parts}; "
            f"on {t['workers']} of {t['workers_all']} workers, {t['share_in_busiest_10s']:.0%} in the busiest 10 s, "
            f"prompt tokens median {t['prompt_tokens_tail_median']:.0f} (all {t['prompt_tokens_all_median']:.0f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conc", type=int, nargs="+", default=[48, 64])
    ap.add_argument("--duration", type=float, default=120.0, help="profiling window per point (s)")
    ap.add_argument("--set", dest="settings", action="append", default=[], metavar="SETTING=VALUE")
    ap.add_argument("--out", type=Path, default=Path("runs") / "timing-error")
    args = ap.parse_args()
    results = []
    print(f"host: {host_description()}", flush=True)
    for conc in args.conc:
        r = run_point(conc, args.duration, args.out / f"c{conc}", args.settings)
        results.append(r)
        cpu = ", ".join(f"{role} {v['mean_cores']:.2f}/{v['peak_cores']:.2f}" for role, v in r["cpu"].items())
        mem = ", ".join(f"{role} {v['rss']['first_mib']:.0f} -> {v['rss']['last_mib']:.0f} (peak {v['rss']['peak_mib']:.0f})"
                        for role, v in r["cpu"].items() if "rss" in v)
        print(f"c{conc} ({r['duration_s']:.0f} s, {' '.join(args.settings) or 'defaults'}): {r['requests']} requests, "
              f"achieved concurrency {r['achieved_concurrency']}, valid {r['valid']}\n"
              f"  TTFT error p50/p90/p99 {r['ttft_err_ms_p50']:.2f} / {r['ttft_err_ms_p90']:.2f} / "
              f"{r['ttft_err_ms_p99']:.2f} ms; E2EL error {r['e2el_err_ms_p50']:.2f} / {r['e2el_err_ms_p90']:.2f} / "
              f"{r['e2el_err_ms_p99']:.2f} ms\n  CPU cores mean/peak: {cpu}\n  memory MiB first -> last tenth: {mem}\n"
              f"  memory MiB in the window (first -> last tenth; per minute): {_window_line(r['memory_in_window'])}\n"
              f"  {_tail_line(r['tail'])}", flush=True)
    (args.out / "summary.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"summary: {args.out / 'summary.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
