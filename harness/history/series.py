"""A point's history: per store run, the metric over that run's entries (its repeats pooled), a 95 % interval, and a
mark where the image, SGLang, the client, the recipe's settings or the hardware changed since the run before.

A latency percentile's interval is distribution-free, as compare's (`harness.report.analysis.noise.quantile_bounds`:
order statistics of the run's pooled per-request samples bound the percentile below and above, each missing with
probability at most 2.5 %; an end is open where the requests are too few to bound it); a whole-run figure's is the
Student-t
interval over the run's repeats (none for a single run). Failed and invalid entries are rows with their state and no
value; they carry no line in the picture and never a mark's "before".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from harness.report.analysis.confidence import mean_interval
from harness.report.analysis.noise import LEVEL, MIN_REQUESTS, quantile_bounds
from harness.store.changes import changes
from harness.store.entry import Entry

# metric name -> (title, per-request sample and quantile, or None for a whole-run figure)
METRICS: dict[str, tuple[str, tuple[str, float] | None]] = {
    "e2el_p90": ("E2EL p90 (s)", ("e2el", 0.9)),
    "e2el_p50": ("E2EL p50 (s)", ("e2el", 0.5)),
    "ttft_p90": ("TTFT p90 (s)", ("ttft", 0.9)),
    "tput_per_gpu": ("throughput/GPU (tok/s)", None),
    "intvty_p90": ("interactivity p90 (tok/s/user)", None),
    "j_per_token": ("J/token", None),
}
WATCHED = ("image", "SGLang", "client", "setting", "hardware", "scenario")
_KEYS = ("image", "sglang_version", "client_name", "client_version", "settings_hash", "hardware", "scenario")


def _signature(entries: Sequence[Entry]) -> set[tuple[object, ...]]:
    """What a mark watches, per entry: the runs differ in it only where these differ (cheaper than `changes`)."""
    return {tuple(getattr(e, k) for k in _KEYS) for e in entries}


@dataclass
class HistoryRow:
    run_id: int
    started_at_ns: int
    entries: list[Entry]
    state: str                     # completed (some valid run) | failed | invalid
    value: float | None = None
    low: float | None = None
    high: float | None = None
    marks: list[str] = field(default_factory=list)


@dataclass
class History:
    config_key: str
    point: str
    metric: str
    rows: list[HistoryRow]


def _value(entries: Sequence[Entry], metric: str) -> tuple[float | None, float | None, float | None]:
    _title, sample = METRICS[metric]
    if sample is not None:
        kind, q = sample
        pooled = np.asarray([v for e in entries for v in getattr(e, kind)], dtype=np.float64)
        if len(pooled) == 0:
            values = [v for e in entries if (v := getattr(e, metric)) is not None]
            return (float(np.mean(values)) if values else None), None, None
        value = float(np.percentile(pooled, 100 * q))
        if len(pooled) < MIN_REQUESTS:
            return value, None, None
        low, high = quantile_bounds(pooled, q, 1.0 - (1.0 - LEVEL) / 2.0)
        return value, (low if math.isfinite(low) else None), (high if math.isfinite(high) else None)
    values = [float(v) for e in entries if (v := getattr(e, metric)) is not None]
    if not values:
        return None, None, None
    iv = mean_interval(values)
    return (iv.mean, iv.low, iv.high) if iv else (values[0], None, None)


def histories(entries: Sequence[Entry], metric: str) -> list[History]:
    """One history per (config key, point), its rows in time order."""
    groups: dict[tuple[str, str], dict[int, list[Entry]]] = {}
    for e in entries:
        groups.setdefault((e.config_key, e.point), {}).setdefault(e.run_id or 0, []).append(e)
    out = []
    for (config_key, point), runs in sorted(groups.items()):
        rows = []
        for run_id, group in runs.items():
            good = [e for e in group if e.in_baseline]
            state = "completed" if good else ("invalid" if any(e.state == "completed" for e in group) else
                                              group[0].state)
            row = HistoryRow(run_id, min(e.started_at_ns or 0 for e in group), group, state)
            if good:
                row.value, row.low, row.high = _value(good, metric)
            rows.append(row)
        rows.sort(key=lambda r: (r.started_at_ns, r.run_id))
        previous: list[Entry] | None = None
        for row in rows:   # a failed or invalid run is neither marked nor the "before" of a mark
            good = [e for e in row.entries if e.in_baseline]
            if not good:
                continue
            if previous is not None and _signature(previous) != _signature(good):
                row.marks = [c for c in changes(previous, good) if c.startswith(WATCHED)]
            previous = good
        out.append(History(config_key, point, metric, rows))
    return out
