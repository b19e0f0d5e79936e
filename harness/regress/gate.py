"""Pairing a baseline with a candidate and judging each metric of each point.

Points pair by config key and concurrency; each side of a pair holds every run of that point it selected (repeats,
nights), so a latency percentile pools their per-request samples (compare's bootstrap, with compare's rule that a
change no larger than the spread between one side's runs is within that spread) and a whole-run figure (throughput
per GPU, interactivity p90, J/token) is compared across runs by Welch's interval where each side has two runs or more.

A metric **regressed** when it moved the wrong way by more than the tolerance and the family-corrected p-value is
below 1 − level (its interval, corrected, excludes zero) and the change exceeds the repeats' spread; **improved** the
same the right way. Pairs whose client versions, scenarios or engines (simulated or real) differ are not comparable
unless allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from harness.report.analysis.confidence import Change, adjust, percentile_change, welch_change
from harness.report.analysis.noise import LEVEL, spread_between_runs
from harness.store.entry import Entry

# (name, title, better: "max" | "min", per-request sample and quantile, or None for a whole-run figure)
METRICS: tuple[tuple[str, str, str, tuple[str, float] | None], ...] = (
    ("tput_per_gpu", "throughput/GPU (tok/s)", "max", None),
    ("e2el_p50", "E2EL p50 (s)", "min", ("e2el", 0.5)),
    ("e2el_p90", "E2EL p90 (s)", "min", ("e2el", 0.9)),
    ("ttft_p90", "TTFT p90 (s)", "min", ("ttft", 0.9)),
    ("intvty_p90", "interactivity p90 (tok/s/user)", "max", None),
    ("j_per_token", "J/token", "min", None),
)
REGRESSION, IMPROVEMENT = "REGRESSION", "improvement"
WITHIN_NOISE, WITHIN_TOLERANCE, WITHIN_SPREAD = "within noise", "within tolerance", "within the repeats' spread"
# what must match between the two sides of a pair, and the flag that lets it differ
COMPARABLE: tuple[tuple[str, str, str], ...] = (
    ("client_version", "client version", "--allow-client-change"),
    ("client_name", "client", "--allow-client-change"),
    ("scenario", "scenario", "--allow-scenario-change"),
    ("engine", "engine (simulated vs real)", "--allow-scenario-change"),
)


@dataclass
class MetricCall:
    name: str
    title: str
    baseline: float | None
    candidate: float | None
    change: Change
    spread_pct: float | None = None
    adjusted_p: float | None = None
    call: str = ""
    sizes: tuple[int, int, str] = (0, 0, "")   # what each side's figure rests on: (baseline, candidate, "requests" or "runs")


@dataclass
class PointCall:
    config_key: str
    conc: int
    baseline: list[Entry]
    candidate: list[Entry]
    metrics: list[MetricCall] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.config_key} c{self.conc}"


@dataclass
class Gate:
    points: list[PointCall]
    only_baseline: list[tuple[str, int]]
    only_candidate: list[tuple[str, int]]
    not_comparable: list[str]
    tolerance_pct: float
    correction: str
    family: int

    @property
    def regressions(self) -> list[tuple[PointCall, MetricCall]]:
        return [(p, m) for p in self.points for m in p.metrics if m.call == REGRESSION]

    @property
    def improvements(self) -> list[tuple[PointCall, MetricCall]]:
        return [(p, m) for p in self.points for m in p.metrics if m.call == IMPROVEMENT]

    @property
    def unjudged(self) -> list[tuple[PointCall, MetricCall]]:
        """The metrics both sides have a value of but no interval (too few requests, one run a side)."""
        return [(p, m) for p in self.points for m in p.metrics if m.change.p is None]


def _values(entries: Sequence[Entry], name: str) -> list[float]:
    return [v for e in entries if (v := getattr(e, name)) is not None]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _pooled(entries: Sequence[Entry], sample: str) -> list[float]:
    return [v for e in entries for v in getattr(e, sample)]


def judge_metric(name: str, title: str, sample: tuple[str, float] | None, a: Sequence[Entry],
                 b: Sequence[Entry]) -> MetricCall | None:
    """The change of one metric between two sides' runs of a point; None when neither side measured it."""
    if sample is None:
        va, vb = _values(a, name), _values(b, name)
        if not va and not vb:
            return None
        return MetricCall(name, title, _mean(va), _mean(vb), welch_change(va, vb), sizes=(len(va), len(vb), "runs"))
    kind, q = sample
    pa, pb = _pooled(a, kind), _pooled(b, kind)
    if not pa and not pb and not _values(a, name) and not _values(b, name):
        return None
    change = percentile_change(pa, pb, q)
    spreads = [s for side in (a, b) if (s := spread_between_runs([list(getattr(e, kind)) for e in side], q)) is not None]
    base = float(_percentile(pa, q)) if pa else _mean(_values(a, name))
    cand = float(_percentile(pb, q)) if pb else _mean(_values(b, name))
    if change.observed_pct is None and base and cand is not None:
        change = replace(change, observed_pct=(cand - base) / abs(base) * 100.0)
    sizes = (len(pa), len(pb), "requests") if pa or pb else (len(_values(a, name)), len(_values(b, name)), "runs")
    return MetricCall(name, title, base, cand, change, max(spreads) if spreads else None, sizes=sizes)


def _percentile(xs: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs, dtype=np.float64), 100 * q))


def comparability(a: Sequence[Entry], b: Sequence[Entry], allowed: set[str]) -> list[str]:
    """What keeps two sides apart (`client version 1.0.12 vs 1.0.13 (--allow-client-change)`), unless allowed."""
    out = []
    for attr, label, flag in COMPARABLE:
        sa, sb = {getattr(e, attr) for e in a}, {getattr(e, attr) for e in b}
        if sa != sb and flag not in allowed:
            out.append(f"{label} {_show(sa)} vs {_show(sb)} (pass {flag} to compare them anyway)")
    return out


def _show(values: set[object]) -> str:
    return "/".join(sorted(str(v) for v in values))


def gate(baseline: Sequence[Entry], candidate: Sequence[Entry], *, tolerance_pct: float = 5.0,
         correction: str = "holm", allowed: set[str] | None = None, level: float = LEVEL,
         metrics: Sequence[tuple[str, str, str, tuple[str, float] | None]] = METRICS) -> Gate:
    """Every point both sides measured, judged metric by metric, with the family of p-values corrected."""
    def by_point(entries: Sequence[Entry]) -> dict[tuple[str, int], list[Entry]]:
        out: dict[tuple[str, int], list[Entry]] = {}
        for e in entries:
            if e.in_baseline:
                out.setdefault((e.config_key, e.conc), []).append(e)
        return out

    a, b = by_point(baseline), by_point(candidate)
    points: list[PointCall] = []
    refused: list[str] = []
    for key in sorted(a.keys() & b.keys()):
        why = comparability(a[key], b[key], allowed or set())
        if why:
            refused += [f"{key[0]} c{key[1]}: {w}" for w in why]
            continue
        point = PointCall(key[0], key[1], a[key], b[key])
        for name, title, _better, sample in metrics:
            call = judge_metric(name, title, sample, a[key], b[key])
            if call is not None:
                point.metrics.append(call)
        points.append(point)
    tested = [m for p in points for m in p.metrics if m.change.p is not None]
    for m, adj in zip(tested, adjust([m.change.p for m in tested if m.change.p is not None], correction)):
        m.adjusted_p = adj
    better = {name: how for name, _t, how, _s in metrics}
    for p in points:
        for m in p.metrics:
            m.call = classify(m, better[m.name], tolerance_pct, 1.0 - level)
    return Gate(points, sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys()), refused, tolerance_pct, correction,
                len(tested))


def classify(m: MetricCall, better: str, tolerance_pct: float, alpha: float) -> str:
    change = m.change
    if change.p is None or m.adjusted_p is None or change.observed_pct is None:
        return change.reason or "no interval"
    if m.adjusted_p >= alpha:
        return WITHIN_NOISE
    if m.spread_pct is not None and abs(change.observed_pct) <= m.spread_pct:
        return WITHIN_SPREAD
    if abs(change.observed_pct) <= tolerance_pct:
        return WITHIN_TOLERANCE
    worse = change.observed_pct < 0 if better == "max" else change.observed_pct > 0
    return REGRESSION if worse else IMPROVEMENT


