"""Comparing two runs of a config point by point: old -> new with percentage change, added and removed points.

A comparison pairs configs (`harness.report.results.configs`), not a report's curves: a curve gathers every config
of a series, and one concurrency of two configs is two points, not one changed point. Simulated and real
results, results of different images, and different arms (`harness.report.results.arms`: speculative decoding, KV
offloading, DP attention, disaggregation shape, and for InferenceX rows the recipe fingerprint) are never
compared as one config unless the caller allows it explicitly (`allow_mixed`): neither within one side (a
side whose config key spans two engines or images) nor across the two sides. When allowed, every
comparison that mixes them says so (`mixed`).

Each latency percentile of a point pair carries a distribution-free interval of B − A from the two points'
per-request records (`harness.report.analysis.quantile_diff`), or the reason it has none. Throughput per GPU has none: it is
one figure of the whole run (tokens over the run's wall time at a fixed concurrency), and the requests of a
closed loop share that time, so resampling requests would measure how output lengths vary, not the engine.
A point run more than once (`harness run --repeat N`) brings all its runs (`harness.report.results.repeats`): the
interval pools their requests, the value shown for that side is the percentile of the pooled requests, and the
spread between the runs is shown and weighed (`harness.report.analysis.noise`).
For a change within noise the comparison says how many requests per side, and what `--duration` at the
observed request rate, would resolve a given relative change (`harness.report.analysis.resolve`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.errors import UserError
from harness.point.state.variant import next_compare
from harness.report.analysis.noise import (
    LEVEL,
    NO_RECORDS,
    RESAMPLES,
    SEED,
    WHOLE_RUN,
    NoiseInterval,
    min_requests,
    no_interval,
    spread_between_runs,
)
from harness.report.analysis.quantile_diff import percentile_diff_interval
from harness.report.analysis.resolve import METHOD as RESOLVE_METHOD
from harness.report.analysis.resolve import duration_for, requests_per_side
from harness.report.analysis.table import TOTAL_PER_GPU, fmt
from harness.report.results.configs import Config, group_configs, latest_per_conc
from harness.report.results.load import PointResult
from harness.report.results.samples import RequestSamples

# (json name, column title, value) of each compared metric; direction tells which change is better.
METRICS: tuple[tuple[str, str, str], ...] = (
    ("total_tput_per_gpu", TOTAL_PER_GPU, "max"),
    ("e2el_p50", "E2EL p50 (s)", "min"),
    ("e2el_p75", "E2EL p75 (s)", "min"),
    ("e2el_p90", "E2EL p90 (s)", "min"),
    ("ttft_p50", "TTFT p50 (s)", "min"),
)


def metric_value(p: PointResult, name: str) -> float | None:
    if name == "total_tput_per_gpu":
        return p.total_tput_per_gpu
    metric, stat = name.rsplit("_", 1)
    return p.stat(metric, stat)


def pct_change(old: float | None, new: float | None) -> float | None:
    """Percentage change old -> new; None when either is missing or old is zero."""
    if old is None or new is None or old == 0:
        return None
    return (new - old) / abs(old) * 100.0


def _percentile_of(name: str) -> tuple[str, float] | None:
    """(per-request sample name, quantile) of a compared latency percentile (`e2el_p90` -> e2el, 0.9)."""
    metric, stat = name.rsplit("_", 1)
    if metric not in ("e2el", "ttft") or not stat.startswith("p") or not stat[1:].isdigit():
        return None
    return metric, int(stat[1:]) / 100.0


@dataclass(frozen=True)
class PointDelta:
    conc: int
    old: PointResult
    new: PointResult
    noise: Mapping[str, NoiseInterval] = field(default_factory=dict)   # metric -> interval (`with_noise`)

    def metric(self, name: str) -> dict[str, float | None]:
        """Old and new value of `name` and the change. A side run more than once shows the value its interval
        pools (the percentile over every run's requests); a side run once, its record's value."""
        o, n = metric_value(self.old, name), metric_value(self.new, name)
        iv = self.noise.get(name)
        if iv is not None and iv.observed is not None:
            o = iv.observed[0] if iv.runs_a > 1 else o
            n = iv.observed[1] if iv.runs_b > 1 else n
        pct = pct_change(o, n)
        return {"old": o, "new": n, "pct": None if pct is None else round(pct, 2)}


@dataclass(frozen=True)
class CurveComparison:
    config_key: str
    old: Config
    new: Config
    changed: list[PointDelta]
    added: list[int]
    removed: list[int]
    mixed: tuple[str, ...] = ()   # identity fields A and B (or `A: `/`B: ` one side) differ in (allow_mixed)


MIXED_WITHIN = "mixed within "
SamplesOf = Callable[[PointResult], Sequence[RequestSamples] | None]
DEFAULT_RESOLVE_PCT = 5.0


def _pooled(runs: Sequence[RequestSamples] | None, metric: str) -> tuple[list[float] | None, list[list[float]]]:
    """All runs' samples of `metric` as one sample (None without runs), and each run's."""
    if not runs:
        return None, []
    each = [list(getattr(r, metric)) for r in runs]
    return [v for run in each for v in run], each


def point_noise(old: Sequence[RequestSamples] | None, new: Sequence[RequestSamples] | None) -> dict[str, NoiseInterval]:
    """The interval of each compared metric for one point pair, from its two sides' per-request samples (one
    per run of the point: repeated runs are pooled, and their spread kept)."""
    out: dict[str, NoiseInterval] = {}
    for name, _, _ in METRICS:
        pq = _percentile_of(name)
        if pq is None:
            out[name] = no_interval(WHOLE_RUN)
            continue
        (a, runs_a), (b, runs_b) = _pooled(old, pq[0]), _pooled(new, pq[0])
        if a is None or b is None:
            out[name] = no_interval(NO_RECORDS, None if a is None else len(a), None if b is None else len(b))
            continue
        spreads = [x for x in (spread_between_runs(runs_a, pq[1]), spread_between_runs(runs_b, pq[1]))
                   if x is not None]
        out[name] = replace(percentile_diff_interval(a, b, pq[1]), runs_a=len(runs_a), runs_b=len(runs_b),
                            repeat_spread_pct=max(spreads) if spreads else None)
    return out


@dataclass(frozen=True)
class Resolution:
    """What would resolve a relative change `pct` of a percentile: requests per side, and the `--duration`
    of one run at the slower side's observed request rate (None where the rate is unknown)."""

    pct: float
    requests: int
    duration_s: float | None

    def text(self) -> str:
        when = "" if self.duration_s is None else f", --duration {math.ceil(self.duration_s)}"
        return f"±{self.pct:g}% needs ~{self.requests} req/side{when}"

    def as_json(self) -> dict[str, Any]:
        return {"pct": self.pct, "requests_per_side": self.requests,
                "duration_s": None if self.duration_s is None else round(self.duration_s, 1)}


def request_rate(p: PointResult) -> float | None:
    """Successful requests per second of a point's newest run (its throughput window)."""
    if p.num_requests_successful is None or not p.window_seconds:
        return None
    return p.num_requests_successful / p.window_seconds


def resolution(d: PointDelta, name: str, pct: float) -> Resolution | None:
    """For a change within noise (an interval that contains zero): the requests per side (and `--duration`)
    that resolve a change of `pct` percent of A's percentile at the spread observed; None for any other
    interval (a change within the repeats' spread needs more runs, not more requests)."""
    iv = d.noise.get(name)
    if iv is None or iv.diff is None or not iv.diff[0] <= 0.0 <= iv.diff[1] or iv.observed is None \
            or iv.se_a is None or iv.se_b is None or iv.n_a is None or iv.n_b is None:
        return None
    n = requests_per_side(iv.se_a, iv.n_a, iv.se_b, iv.n_b, iv.observed[0] * pct / 100.0)
    if n is None:
        return None
    rates = [r for r in (request_rate(d.old), request_rate(d.new)) if r is not None]
    return Resolution(pct, n, duration_for(n, min(rates)) if rates else None)


def with_noise(comparisons: list[CurveComparison], samples_of: SamplesOf) -> list[CurveComparison]:
    """The comparisons with each point pair's intervals; `samples_of` gives a point's per-request samples,
    one per run (None: the point has no per-request records)."""
    return [replace(c, changed=[replace(d, noise=point_noise(samples_of(d.old), samples_of(d.new)))
                                for d in c.changed]) for c in comparisons]


def _identity(c: Config) -> str:
    return f"{'simulated' if c.simulated else 'real'} ({c.engine}), image {c.image or 'unknown'}"


def identity_differences(a: Config, b: Config) -> list[str]:
    """`field A vs B` for each identity field two configs differ in: engine kind, image, then the arm."""
    out = []
    if a.simulated != b.simulated:
        kind = {True: "simulated", False: "real"}
        out.append(f"engine {kind[a.simulated]} ({a.engine or '?'}) vs {kind[b.simulated]} ({b.engine or '?'})")
    if a.image != b.image:
        out.append(f"image {a.image or 'unknown'} vs {b.image or 'unknown'}")
    return out + a.arm.differences(b.arm)


def _pair_arm_mismatches(old: dict[str, Config], new: dict[str, Config], only_old: list[str],
                         only_new: list[str]) -> list[tuple[str, Config, Config]]:
    """Configs left unpaired that share a base key (one on each side): the same config in another arm."""
    pairs = []
    for base in sorted({old[k].base_key for k in only_old} & {new[k].base_key for k in only_new}):
        olds = [k for k in only_old if old[k].base_key == base]
        news = [k for k in only_new if new[k].base_key == base]
        if len(olds) == 1 and len(news) == 1:
            pairs.append((f"{olds[0]} -> {news[0]}", old[olds[0]], new[news[0]]))
            only_old.remove(olds[0])
            only_new.remove(news[0])
    return pairs


def _merge_by_key(configs: list[Config], side: str, allow_mixed: bool) -> dict[str, Config]:
    by_key: dict[str, list[Config]] = {}
    for c in configs:
        by_key.setdefault(c.key, []).append(c)
    merged: dict[str, Config] = {}
    for key, group in by_key.items():
        diffs = sorted({d for c in group[1:] for d in identity_differences(group[0], c)})
        if len(group) > 1 and not allow_mixed:
            raise UserError(
                f"{side}: {key}: results of different engines, images or arms ({'; '.join(diffs)}); "
                "pass --allow-mixed to compare them as one curve"
            )
        if len(group) == 1:
            merged[key] = group[0]
        else:
            # Explicitly allowed: one curve, the newest result per concurrency.
            points, warnings = latest_per_conc(p for c in group for p in c.points)
            warnings = [f"{MIXED_WITHIN}{side}: {d}" for d in diffs] + warnings
            merged[key] = Config(config_key=group[0].config_key, variant=group[0].variant,
                                 overrides=group[0].overrides, image=" + ".join(sorted({c.image for c in group})),
                                 engine="/".join(sorted({c.engine for c in group})),
                                 simulated=any(c.simulated for c in group), points=points, warnings=warnings,
                                 arm=group[-1].arm, named_by_arm=group[-1].named_by_arm)
    return merged


def compare_points(
    old_points: Sequence[PointResult], new_points: Sequence[PointResult], *, allow_mixed: bool = False
) -> tuple[list[CurveComparison], list[str], list[str]]:
    """Pair configs by key (the same config in another arm, or the only config of each side, when no key
    matches) and compare them point by point.

    Returns the comparisons and the config keys found only in the old and only in the new side. A pair that
    differs in engine kind, image or arm is refused (one line naming the fields) unless `allow_mixed`.
    """
    old = _merge_by_key(group_configs(old_points), "A", allow_mixed)
    new = _merge_by_key(group_configs(new_points), "B", allow_mixed)
    pairs = [(k, old[k], new[k]) for k in sorted(old.keys() & new.keys())]
    only_old, only_new = sorted(old.keys() - new.keys()), sorted(new.keys() - old.keys())
    pairs += _pair_arm_mismatches(old, new, only_old, only_new)
    if not pairs and len(old) == 1 and len(new) == 1:
        (ko, co), (kn, cn) = next(iter(old.items())), next(iter(new.items()))
        pairs, only_old, only_new = [(f"{ko} -> {kn}" if ko != kn else ko, co, cn)], [], []
    out: list[CurveComparison] = []
    for key, a, b in pairs:
        diffs = identity_differences(a, b)
        if diffs and not allow_mixed:
            raise UserError(
                f"{key}: A and B differ in {'; '.join(diffs)}; pass --allow-mixed to compare them as one curve"
            )
        a_by, b_by = {p.conc: p for p in a.points}, {p.conc: p for p in b.points}
        out.append(
            CurveComparison(
                config_key=key,
                old=a,
                new=b,
                changed=[PointDelta(c, a_by[c], b_by[c]) for c in sorted(a_by.keys() & b_by.keys())],
                added=sorted(b_by.keys() - a_by.keys()),
                removed=sorted(a_by.keys() - b_by.keys()),
                mixed=tuple(diffs) + tuple(w.removeprefix(MIXED_WITHIN) for w in (*a.warnings, *b.warnings)
                                           if w.startswith(MIXED_WITHIN)),
            )
        )
    return out, only_old, only_new


def variant_sides(points: Sequence[PointResult], variant: str) -> tuple[list[PointResult], list[PointResult]]:
    """(the recipe's own points, the points of `variant` as if they were the recipe's): the two sides of
    `harness compare RUN --variant NAME`, so each variant point pairs with its baseline point directly."""
    import dataclasses

    baseline = [p for p in points if p.variant is None]
    tuned = [dataclasses.replace(p, variant=None) for p in points if p.variant == variant]
    if not tuned:
        known = sorted({p.variant for p in points if p.variant})
        raise UserError(f"--variant {variant}: no results of that variant (variants found: "
                        f"{', '.join(known) or 'none'})")
    if not baseline:
        raise UserError(f"--variant {variant}: no results of the recipe as written beside it to compare with",
                        hint=_two_runs_hint(points, variant))
    return baseline, tuned


def _two_runs_hint(points: Sequence[PointResult], variant: str) -> str:
    """The compare that works without the recipe's own points: against another variant's directory beside it,
    else after running the recipe as written into the same --out (`harness.point.state.variant.next_compare`;
    the recipe is `recipes/<config_key>.yaml` where that file is here, else RECIPE)."""
    import shlex
    from pathlib import Path

    mine = sorted({p.point_dir.parent for p in points if p.variant == variant})
    if len(mine) != 1:
        return ("compare the variant's own directory (variants/NAME below the run) with another run's: "
                "harness compare OTHER_RUN VARIANT_DIR")
    curve_dir = mine[0].parent.parent
    recipe = Path("recipes") / f"{curve_dir.name}.yaml"
    baseline = shlex.join(["harness", "sweep", str(recipe) if recipe.is_file() else "RECIPE", "--out",
                           str(curve_dir.parent)])
    return next_compare(curve_dir, variant, baseline)


def _noise_json(d: PointDelta, name: str, iv: NoiseInterval, resolve_pct: float) -> dict[str, Any]:
    found = resolution(d, name, resolve_pct)
    return {**iv.as_json(), "to_resolve": None if found is None else found.as_json()}


def comparison_json(comparisons: list[CurveComparison], only_old: list[str], only_new: list[str],
                    resolve_pct: float = DEFAULT_RESOLVE_PCT) -> dict[str, Any]:
    return {
        "comparisons": [
            {
                "config_key": c.config_key,
                "old": {"image": c.old.image, "engine": c.old.engine, "simulated": c.old.simulated,
                        "arm": c.old.arm.as_json()},
                "new": {"image": c.new.image, "engine": c.new.engine, "simulated": c.new.simulated,
                        "arm": c.new.arm.as_json()},
                "mixed": list(c.mixed),
                "points": [
                    {"conc": d.conc, "valid": {"old": d.old.valid, "new": d.new.valid},
                     **{name: d.metric(name) for name, _, _ in METRICS},
                     "noise": {name: _noise_json(d, name, iv, resolve_pct) for name, iv in d.noise.items()}}
                    for d in c.changed
                ],
                "added": c.added,
                "removed": c.removed,
            }
            for c in comparisons
        ],
        "only_in_a": only_old,
        "only_in_b": only_new,
        "noise_method": {"interval": "distribution-free interval of B - A: each side's percentile bounded by its "
                                     "order statistics (binomial), the four bounds at (1 - level) / 4 each",
                         "level": LEVEL, "resamples_for_resolve": RESAMPLES, "seed": SEED,
                         "min_requests": {name: min_requests(pq[1]) for name, _, _ in METRICS
                                          if (pq := _percentile_of(name)) is not None},
                         "repeats": "each side's runs pooled; a change within one side's spread between runs "
                                    "is within noise",
                         "to_resolve": RESOLVE_METHOD},
    }


def _cell(d: PointDelta, name: str) -> str:
    m = d.metric(name)
    digits = 1 if name == "total_tput_per_gpu" else 3
    pct = "" if m["pct"] is None else f" ({m['pct']:+.1f}%)"
    return f"{fmt(m['old'], digits)} -> {fmt(m['new'], digits)}{pct}"


def _span(lo: float, hi: float, unit: str, digits: int) -> str:
    return f"{lo:+.{digits}f}{unit} .. {hi:+.{digits}f}{unit}"


def _noise_lines(changed: list[PointDelta], resolve_pct: float = DEFAULT_RESOLVE_PCT) -> list[str]:
    """The noise table under a comparison: per point and latency percentile, n of each side (with the runs
    pooled, and their spread, where a side has several), the interval of B - A in the metric's unit and in
    percent, whether it is noise, and for noise what would resolve a change of `resolve_pct` percent."""
    rows = []
    repeated = any(iv.runs_a > 1 or iv.runs_b > 1 for d in changed for iv in d.noise.values())
    resolvable = False
    for d in changed:
        ivs = [(title, d.noise[name]) for name, title, _ in METRICS
               if name in d.noise and d.noise[name].reason != WHOLE_RUN]
        if ivs and len({(iv.n_a, iv.n_b, iv.reason) for _, iv in ivs}) == 1 and ivs[0][1].diff is None:
            ivs = [("latency", ivs[0][1])]   # the same reason for every percentile: one row
        for title, iv in ivs:
            n_a, n_b = ("-" if n is None else str(n) for n in (iv.n_a, iv.n_b))
            if repeated:
                n_a, n_b = f"{n_a} ({iv.runs_a} runs)", f"{n_b} ({iv.runs_b} runs)"
            diff = "" if iv.diff is None else _span(*iv.diff, " s", 3)
            pct = "" if iv.pct is None else _span(*iv.pct, "%", 1)
            reading = iv.reading
            if iv.repeat_spread_pct is not None:
                reading += f" (runs spread {iv.repeat_spread_pct:.1f}%)"
            name = next((n for n, t, _ in METRICS if t == title), None)
            found = None if name is None else resolution(d, name, resolve_pct)
            if found is not None:
                reading += f"; {found.text()}"
                resolvable = True
            rows.append((str(d.conc), title, n_a, n_b, diff, pct, reading))
    if not rows:
        return []
    header = ("conc", "metric", "n_A", "n_B", "B - A (95%)", "B - A % (95%)", "reading")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    pooled = "; repeated runs pooled" if repeated else ""
    return [f"noise: distribution-free {LEVEL:.0%} interval of B - A from each point's per-request records "
            f"(order statistics{pooled}); {TOTAL_PER_GPU} is a {WHOLE_RUN}"] + \
        ([f"to resolve a change within noise: requests per side and --duration at the observed request rate "
          f"({RESOLVE_METHOD})"] if resolvable else []) + [
        "  ".join([r[0].rjust(widths[0]), r[1].ljust(widths[1]), r[2].rjust(widths[2]), r[3].rjust(widths[3]),
                   *(v.ljust(w) for v, w in zip(r[4:], widths[4:]))]).rstrip()
        for r in (header, *rows)]


def render_comparison(comparisons: list[CurveComparison], only_old: list[str], only_new: list[str],
                      variant: bool = False, resolve_pct: float = DEFAULT_RESOLVE_PCT) -> str:
    """The text of `compare`; with `variant` (B is a variant of A's recipe) the baseline points the variant
    did not run are named as such, not as removed."""
    lines: list[str] = []
    for c in comparisons:
        lines.append(f"== {c.config_key}: A {_identity(c.old)} -> B {_identity(c.new)}")
        if c.mixed:
            lines.append(f"mixed, compared as one curve as asked: {'; '.join(c.mixed)}")
        header = ("conc", *(title for _, title, _ in METRICS), "verdict")
        rows = []
        for d in c.changed:
            verdict = "valid" if d.old.valid and d.new.valid else (
                f"{'valid' if d.old.valid else 'INVALID'} -> {'valid' if d.new.valid else 'INVALID'}")
            rows.append((str(d.conc), *(_cell(d, name) for name, _, _ in METRICS), verdict))
        widths = [max([len(header[i]), *(len(r[i]) for r in rows)]) for i in range(len(header))]
        if not rows:
            lines.append("no concurrency in common: nothing to compare point by point")
        for r in (header, *rows) if rows else ():
            lines.append("  ".join([r[0].rjust(widths[0]), *(v.ljust(w) for v, w in zip(r[1:], widths[1:]))]).rstrip())
        lines += _noise_lines(c.changed, resolve_pct)
        added, removed = (", ".join(f"c{x}" for x in xs) or "none" for xs in (c.added, c.removed))
        lines.append(f"only in the variant: {added}; not run in the variant: {removed}" if variant
                     else f"added: {added}; removed: {removed}")
        lines.append("")
    if only_old:
        lines.append("curves only in A: " + ", ".join(only_old))
    if only_new:
        lines.append("curves only in B: " + ", ".join(only_new))
    return "\n".join(lines).rstrip() + "\n"
