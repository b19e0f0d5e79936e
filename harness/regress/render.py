"""The gate in words: the terminal text and the Markdown of the GitHub job summary (`--markdown`)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.regress.gate import REGRESSION, Gate, MetricCall
from harness.report.analysis.confidence import CORRECTIONS

EXIT_NONE, EXIT_REGRESSION, EXIT_NOT_COMPARABLE = 0, 1, 4


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.1f}%"


def _interval(m: MetricCall) -> str:
    c = m.change
    return "-" if c.low_pct is None or c.high_pct is None else f"[{c.low_pct:+.1f}, {c.high_pct:+.1f}]%"


def _sizes(m: MetricCall) -> str:
    n_a, n_b, what = m.sizes
    return f"{n_a} vs {n_b} {what}" if what else "-"


def _p(v: float | None) -> str:
    return "-" if v is None else ("<0.0001" if v < 1e-4 else f"{v:.4f}")


def _runs(entries: Sequence[object]) -> int:
    return len({getattr(e, "entry_key", None) for e in entries})


def headline(g: Gate, baseline: str, candidate: str) -> str:
    return (f"regress: baseline {baseline} vs candidate {candidate}; tolerance {g.tolerance_pct:g}%; 95% intervals "
            f"(latency percentiles: compare's distribution-free interval of the pooled per-request samples; whole-run "
            f"figures: Welch "
            f"over runs), {CORRECTIONS[g.correction]}-corrected over {g.family} comparisons")


def conclusion(g: Gate) -> tuple[str, int]:
    if g.not_comparable:
        return "gate: NOT COMPARABLE: " + "; ".join(g.not_comparable), EXIT_NOT_COMPARABLE
    if not g.points:
        return "gate: NOT COMPARABLE: the two sides have no point in common", EXIT_NOT_COMPARABLE
    if g.regressions:
        names = ", ".join(f"{p.name} {m.title}" for p, m in g.regressions)
        return f"gate: REGRESSION in {len(g.regressions)} of {g.family} comparisons: {names}", EXIT_REGRESSION
    better = f"; improved: {', '.join(f'{p.name} {m.title}' for p, m in g.improvements)}" if g.improvements else ""
    unjudged = (f"; not judged, no interval: {', '.join(f'{p.name} {m.title} [{m.change.reason}]' for p, m in g.unjudged)}"
                if g.unjudged else "")
    return (f"gate: no regression (every judged change within noise or within tolerance){better}{unjudged}",
            EXIT_NONE)


def text(g: Gate, baseline: str, candidate: str, changed: Sequence[str]) -> str:
    lines = [headline(g, baseline, candidate)]
    lines.append("what changed (baseline -> candidate):" if changed else "what changed: nothing recorded")
    lines += [f"  {c}" for c in changed]
    for p in g.points:
        reqs = sum(len(e.e2el) for e in p.baseline), sum(len(e.e2el) for e in p.candidate)
        lines += ["", f"{p.name}  (runs {_runs(p.baseline)} vs {_runs(p.candidate)}, requests {reqs[0]} vs {reqs[1]})",
                  f"  {'metric':<31} {'baseline':>9} {'candidate':>9} {'n':>20} {'change':>8} {'95% interval':>18} "
                  f"{'p (adj.)':>8}  call"]
        for m in p.metrics:
            lines.append(f"  {m.title:<31} {_num(m.baseline):>9} {_num(m.candidate):>9} {_sizes(m):>20} "
                         f"{_pct(m.change.observed_pct):>8} {_interval(m):>18} {_p(m.adjusted_p):>8}  {m.call}")
    for key, side in ((g.only_baseline, "baseline"), (g.only_candidate, "candidate")):
        if key:
            lines.append(f"only in the {side}: " + ", ".join(f"{k} c{c}" for k, c in key))
    lines += ["", conclusion(g)[0]]
    return "\n".join(lines) + "\n"


def markdown(g: Gate, baseline: str, candidate: str, changed: Sequence[str]) -> str:
    line, status = conclusion(g)
    icon = {EXIT_NONE: "✅", EXIT_REGRESSION: "❌", EXIT_NOT_COMPARABLE: "⚠️"}[status]
    out = [f"## Regression gate {icon}", "", f"**{line.removeprefix('gate: ')}**", "",
           headline(g, f"`{baseline}`", f"`{candidate}`"), ""]
    if changed:
        out += ["### What changed", "", "```", *changed, "```", ""]
    for p in g.points:
        out += [f"### {p.name}", "", "| metric | baseline | candidate | n | change | 95% interval | p (adj.) | call |",
                "|---|---:|---:|---:|---:|---:|---:|---|"]
        for m in p.metrics:
            v = f"**{m.call}**" if m.call == REGRESSION else m.call
            out.append(f"| {m.title} | {_num(m.baseline)} | {_num(m.candidate)} | {_sizes(m)} | {_pct(m.change.observed_pct)} | "
                       f"{_interval(m)} | {_p(m.adjusted_p)} | {v} |")
        out.append("")
    return "\n".join(out)
