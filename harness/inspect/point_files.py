"""What one point directory kept, read for `harness inspect`: each input present, or absent with the reason.

A point may have failed, been cancelled or still be running, and an older client may have written another
layout: every input is optional, and an absent one names why (its panel says so). A file that is there but cannot
be read as what it should be is one `UserError` naming the file (never a traceback).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.inputs.json_input import read_json_object
from harness.point.replay import aiperf
from harness.point.servers.server_logs import SIM_TRUTH_LOG as TRUTH_FILE
from harness.power.samples import PowerSample, read_power_csv

RECORD_FILE = "point_result.json"
STATUS_FILE = "status.json"
POWER_FILE = "power.csv"
SERVER_LOG = "server.log"
MAX_SERVER_METRICS_BYTES = 4 * 1024 * 1024 * 1024   # AIPerf's scrape export of a long point can be GiBs
MAX_LOG_BYTES = 256 * 1024 * 1024


@dataclass
class PointFiles:
    """A point directory's inputs. `absent` maps an input's name to why it is not there."""

    point_dir: Path
    status: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)      # AIPerf's per-request records
    summary: dict[str, Any] | None = None                              # AIPerf's profile_export_aiperf.json
    server_metrics: dict[str, Any] | None = None                       # AIPerf's server_metrics_export.json
    power: list[PowerSample] = field(default_factory=list)
    server_log: str | None = None
    truth: list[dict[str, Any]] = field(default_factory=list)          # the simulator's truth log
    absent: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """`c8` (with the variant or config key where the directory names one)."""
        conc = (self.record or self.status or {}).get("conc")
        return f"c{conc}" if conc is not None else self.point_dir.name


# What inspect reads of AIPerf's per-request records and server-metrics export (a long point's files are hundreds of
# MB; the rest is dropped as they are read)
RECORD_METADATA = ("benchmark_phase", "credit_issued_ns", "request_start_ns", "request_end_ns", "x_request_id",
                   "x_correlation_id", "root_correlation_id", "conversation_id", "source_trace_id", "worker_id",
                   "was_cancelled")
RECORD_METRICS = ("time_to_first_token", "request_latency", "inter_token_latency", "input_sequence_length",
                  "output_sequence_length", "usage_prompt_cache_read_tokens")
GAUGES = ("num_running_reqs", "num_queue_reqs", "kv_used_tokens", "max_total_num_tokens", "token_usage",
          "cache_hit_rate", "spec_accept_length", "gen_throughput")
COUNTERS = ("evicted_tokens", "prompt_tokens", "num_retracted_requests", "generation_tokens")
LABELLED = ("cached_tokens", "realtime_tokens")   # counters split by a label (cache_source, mode)
HISTOGRAMS = ("queue_time_seconds", "time_to_first_token_seconds", "e2e_request_latency_seconds")
SERVER_METRICS = (*GAUGES, *COUNTERS, *LABELLED, *HISTOGRAMS)


# a record's per-chunk latency list (one value per streamed chunk: most of a long answer's line), which inspect does
# not read, cut from the line before it is parsed (a line it does not match is parsed whole)
_CHUNKS = re.compile(r'"inter_chunk_latency":\{"value":\[[-0-9.,eE ]*\],"unit":"ms"\},')


def slim_record(record: dict[str, Any]) -> dict[str, Any]:
    """An AIPerf record with only what inspect reads (its metadata's times and ids, six metrics, its error)."""
    meta = record.get("metadata")
    metrics = record.get("metrics")
    out: dict[str, Any] = {
        "metadata": {k: meta[k] for k in RECORD_METADATA if k in meta} if isinstance(meta, dict) else meta,
        "metrics": {k: metrics[k] for k in RECORD_METRICS if k in metrics} if isinstance(metrics, dict) else metrics}
    if record.get("error") is not None:
        out["error"] = record["error"]
    return out


def slim_server_metrics(export: dict[str, Any]) -> dict[str, Any]:
    """The export with only the series inspect reads; histograms keep their window totals, not their slices."""
    out = dict(export)
    for section in ("metrics", "warmup_metrics"):
        metrics = export.get(section)
        if not isinstance(metrics, dict):
            continue
        kept: dict[str, Any] = {}
        for name, metric in metrics.items():
            base = str(name).removeprefix("sglang:").removesuffix("_total")
            if base not in SERVER_METRICS:
                continue
            if base in HISTOGRAMS and isinstance(metric, dict):
                metric = {**metric, "series": [{k: v for k, v in series.items() if k != "timeslices"}
                                               if isinstance(series, dict) else series
                                               for series in metric.get("series") or []]}
            kept[name] = metric
        out[section] = kept
    return out


def _json_lines(path: Path, what: str, keep: Callable[[dict[str, Any]], dict[str, Any]] | None = None
                ) -> list[dict[str, Any]]:
    """JSON lines (each passed through `keep`); a truncated last line (a killed writer) is skipped, any other bad
    line is an error."""
    out: list[dict[str, Any]] = []
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as exc:
        raise UserError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(_CHUNKS.sub("", line) if keep is not None else line)
        except ValueError:
            if number == len(lines):
                continue
            raise UserError(f"{path}:{number}: not a JSON line of {what}") from None
        if isinstance(value, dict):
            out.append(value if keep is None else keep(value))
    return out


def read_point_files(point_dir: Path) -> PointFiles:
    """Every input of `point_dir` that is there; `UserError` when the directory is not a point's."""
    pdir = Path(point_dir)
    if not pdir.is_dir():
        raise UserError(f"{pdir}: not a directory (give a point's directory, e.g. runs/quickstart-sim/conc4)")
    pf = PointFiles(point_dir=pdir)
    art = pdir / "aiperf"
    if (pdir / STATUS_FILE).exists():
        pf.status = read_json_object(pdir / STATUS_FILE, "point status")
    else:
        pf.absent["status"] = f"no {STATUS_FILE}: phases unknown"
    if (pdir / RECORD_FILE).exists():
        pf.record = read_json_object(pdir / RECORD_FILE, "point record")
    else:
        pf.absent["record"] = f"no {RECORD_FILE}: the point has no record yet (running, or it ended before the client)"
    if pf.status is None and pf.record is None:
        raise UserError(f"{pdir}: neither {STATUS_FILE} nor {RECORD_FILE}: not a point's directory "
                        "(give one like runs/quickstart-sim/conc4)")
    records = art / aiperf.RECORDS_FILE
    if records.exists():
        pf.requests = _json_lines(records, "AIPerf per-request records", slim_record)
    else:
        pf.absent["requests"] = f"no aiperf/{aiperf.RECORDS_FILE}: the client left no per-request records"
    if (art / aiperf.SUMMARY_FILE).exists():
        pf.summary = read_json_object(art / aiperf.SUMMARY_FILE, "AIPerf summary")
    else:
        pf.absent["summary"] = f"no aiperf/{aiperf.SUMMARY_FILE}: AIPerf wrote no summary (stopped early)"
    metrics = art / aiperf.SERVER_METRICS_FILE
    if metrics.exists():
        pf.server_metrics = slim_server_metrics(read_json_object(metrics, "AIPerf server-metrics export",
                                                                 MAX_SERVER_METRICS_BYTES))
        if not aiperf.has_sglang_series(pf.server_metrics):
            pf.absent["server_metrics"] = f"aiperf/{aiperf.SERVER_METRICS_FILE} holds no sglang: series"
    else:
        pf.absent["server_metrics"] = (f"no aiperf/{aiperf.SERVER_METRICS_FILE}: the server's /metrics was not "
                                       "scraped (no --enable-metrics, or an older client)")
    _read_power(pf)
    log = pdir / SERVER_LOG
    if log.exists():
        with open(log, "rb") as fh:
            pf.server_log = fh.read(MAX_LOG_BYTES).decode("utf-8", errors="replace")
    else:
        pf.absent["server_log"] = f"no {SERVER_LOG}"
    truth = pdir / TRUTH_FILE
    if truth.exists():
        pf.truth = _json_lines(truth, "simulator truth log")
    else:
        pf.absent["truth"] = ("the server is not the simulator" if (pf.record or pf.status or {}).get("engine") != "sim"
                              else f"no {TRUTH_FILE}: the simulator kept no truth log for this point")
    return pf


def _read_power(pf: PointFiles) -> None:
    path = pf.point_dir / POWER_FILE
    if not path.exists():
        pf.absent["power"] = f"no {POWER_FILE}: power was not sampled"
        return
    parsed = read_power_csv(path)
    pf.power = parsed.samples
    if not pf.power:
        sampler = read_json_object(path.with_suffix(".sampler.json"), "power sampler status") \
            if path.with_suffix(".sampler.json").exists() else {}
        why = sampler.get("reason") or "; ".join(p.code for p in parsed.problems) or "no samples"
        pf.absent["power"] = f"{POWER_FILE} has no samples: {why}"
