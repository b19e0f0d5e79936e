"""InferenceX's stability diagnostics for one point: fixed-window drift and how concentrated the workload is.

Reimplemented from InferenceX's `utils/agentic/aggregation/stability_metrics.py` (`compute_stability_metrics`)
and its helper `aggregation_common.percentile`, as read at commit 0a12c4223215bb5b93c2c9a6261a212a7badb999 of
SemiAnalysisAI/InferenceX ("add AgentX stability diagnostics", branch `codex/agentx-uncertainty-runner-mvp`;
not on its main branch when read). The branch's next commit (11dff3c1) adds a `convergence` block (cumulative
300 s checkpoints); that block is not computed here. Descriptive diagnostics for one run, not confidence
intervals:

- the inputs are InferenceX's: its loader keeps a record unless it is a warmup record (`metadata.benchmark_phase`
  present and not `profiling`) or carries an `error` (`inferencex_row.split_records`, the same rule the published
  row uses); trajectory counts and windows are over those records only;
- a request's time is `metadata.credit_issued_ns`, else `metadata.request_start_ns` (a record with neither is
  left out of the windows, not of the trajectory counts); windows of 600 s start at the earliest such time;
  `expected_window_count` = floor(configured duration / 600), and a request whose window index falls outside
  [0, expected) is dropped, so a point shorter than 600 s has no window at all (`expected_window_count` 0,
  `observed_window_count` 0, `min_window_requests` 0);
- `root_trajectory_*`: requests grouped by `metadata.source_trace_id`, else `conversation_id`, else "unknown";
  the Kish effective count n² / Σ countᵢ² and the largest group's share of n (0 with no request);
- `observed_ranges`, only with two or more windows (else {}): per window the p75 and p90 (linear interpolation
  between closest ranks) of TTFT and E2EL in seconds over values > 0, and interactivity as 1 / the window's ITL
  percentile; then `{"min", "max"}` of each over the windows (null where no window had a value), keyed
  `ttft`/`e2el`/`intvty` → `p75`/`p90`;
- every float rounded as InferenceX rounds its aggregate (`round_floats`, 5 places, whole numbers ≥ 1 as ints).

Where our data differs from InferenceX's inputs: InferenceX takes the configured duration from AIPerf's summary,
`input_config.loadgen.benchmark_duration`, else AIPerf's measured `benchmark_duration.avg`. The AIPerf this
harness pins writes its configured duration as `input_config.phases[].duration` instead, so InferenceX's reader
would fall back to the measured one (a 1200 s run measured at 1199.9 s counts one window, not two). Here the
configured duration is the client plan's `duration_s`, the value passed to AIPerf as `--benchmark-duration`,
which is what InferenceX means to read. Our only key beyond InferenceX's is `reason`: null when the windows
gave ranges, else why not (`duration_unknown`, where InferenceX would silently count no window;
`duration_shorter_than_window`; `no_requests`; `fewer_than_two_windows`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from harness.point.record.inferencex_row import percentile, split_records
from harness.point.record.inferencex_server_metrics import round_floats

WINDOW_SECONDS = 600.0
PERCENTILES = (75, 90)
_METRICS = {"ttft": "time_to_first_token", "e2el": "request_latency", "itl": "inter_token_latency"}

Record = Mapping[str, Any]
Range = dict[str, float] | None


def _to_float(value: Any) -> float | None:
    """InferenceX's `to_float`: float(value), None where that fails."""
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _metadata(record: Record) -> Mapping[str, Any]:
    metadata = record.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def _metric_ms(record: Record, key: str) -> float | None:
    metrics = record.get("metrics")
    metric = metrics.get(key) if isinstance(metrics, Mapping) else None
    return _to_float(metric.get("value") if isinstance(metric, Mapping) else metric)


def _finite_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def request_time_ns(record: Record) -> int | None:
    """When the request was issued: `credit_issued_ns`, else `request_start_ns`; None with neither."""
    metadata = _metadata(record)
    for key in ("credit_issued_ns", "request_start_ns"):
        value = metadata.get(key)
        if _finite_number(value):
            return int(value)
    return None


def root_trajectory(record: Record) -> str:
    """The source trajectory a request replays: `source_trace_id`, else `conversation_id`, else "unknown"."""
    metadata = _metadata(record)
    source = metadata.get("source_trace_id") or metadata.get("conversation_id")
    return "unknown" if source is None or source == "" else str(source)


def _range(values: list[float]) -> Range:
    return {"min": min(values), "max": max(values)} if values else None


def observed_ranges(windows: Iterable[list[Record]]) -> dict[str, dict[str, Range]]:
    """Min and max over the windows of each window's p75/p90 TTFT and E2EL (s) and interactivity (1/ITL)."""
    per_window: dict[str, dict[int, list[float]]] = {name: {p: [] for p in PERCENTILES} for name in _METRICS}
    for records in windows:
        for name, key in _METRICS.items():
            values_ms = [v for v in (_metric_ms(r, key) for r in records) if v is not None and v > 0]
            if not values_ms:
                continue
            values_s = [v / 1000.0 for v in values_ms]
            for p in PERCENTILES:
                per_window[name][p].append(percentile(values_s, p))
    out: dict[str, dict[str, Range]] = {"ttft": {}, "e2el": {}, "intvty": {}}
    for p in PERCENTILES:
        out["ttft"][f"p{p}"] = _range(per_window["ttft"][p])
        out["e2el"][f"p{p}"] = _range(per_window["e2el"][p])
        out["intvty"][f"p{p}"] = _range([1.0 / v for v in per_window["itl"][p] if v > 0])
    return out


def _reason(duration_s: float | None, n_requests: int, windows: int) -> str | None:
    if duration_s is None or duration_s <= 0:
        return "duration_unknown"
    if duration_s < WINDOW_SECONDS:
        return "duration_shorter_than_window"
    if n_requests == 0:
        return "no_requests"
    return "fewer_than_two_windows" if windows < 2 else None


def stability_metrics(records: Iterable[Record], duration_s: float | None) -> dict[str, Any]:
    """InferenceX's `request_metrics.stability` block over a point's AIPerf per-request records (every line of
    `profile_export.jsonl`, warmup and failed ones included: InferenceX's filter is applied here), for a
    configured benchmark duration in seconds (None when unknown)."""
    kept, _ = split_records(records)
    trajectories = Counter(root_trajectory(r) for r in kept)
    n = sum(trajectories.values())
    squared = sum(c * c for c in trajectories.values())
    duration = _to_float(duration_s)
    expected = int(duration // WINDOW_SECONDS) if duration is not None and duration > 0 else 0

    timed = [(t, r) for r in kept if (t := request_time_ns(r)) is not None]
    windows: dict[int, list[Record]] = defaultdict(list)
    if timed and expected > 0:
        origin_ns = min(t for t, _ in timed)
        window_ns = WINDOW_SECONDS * 1e9
        for t, r in timed:
            index = int((t - origin_ns) // window_ns)
            if 0 <= index < expected:
                windows[index].append(r)
    sizes = [len(w) for w in windows.values()]
    block: dict[str, Any] = {
        "window_seconds": WINDOW_SECONDS,
        "expected_window_count": expected,
        "observed_window_count": len(windows),
        "min_window_requests": min(sizes) if sizes else 0,
        "root_trajectory_count": len(trajectories),
        "root_trajectory_kish_effective_count": n * n / squared if squared > 0 else 0.0,
        "root_trajectory_largest_share": max(trajectories.values(), default=0) / n if n else 0.0,
        "observed_ranges": observed_ranges(windows.values()) if len(windows) >= 2 else {},
    }
    rounded: dict[str, Any] = round_floats(block)
    rounded["reason"] = _reason(duration, n, len(windows))
    return rounded
