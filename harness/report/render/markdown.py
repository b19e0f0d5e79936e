"""A markdown summary for pull requests: the verdict table of each curve first, then its Pareto coverage,
the plots and the details."""

from __future__ import annotations

import html
from collections.abc import Sequence

from harness.point.record.cost import HOW_TO_PRICE
from harness.report.analysis.coverage import check14
from harness.report.analysis.curves import CURVE_DEFINITION, FRONTIER_AXES, Curve
from harness.report.analysis.goodput import goodput_markdown
from harness.report.analysis.table import SIMULATED, conc_cells, curve_notes
from harness.report.analysis.thin import thin_note
from harness.report.analysis.verdicts import COLUMN_NOTE, COLUMNS, NUMERIC, footnotes, verdict_rows


def _text(value: object) -> str:
    """A value as markdown text: HTML escaped (as in report.html), table pipes escaped, on one line."""
    return " ".join(html.escape(str(value), quote=False).replace("|", "\\|").split())


def _code(value: object) -> str:
    """A value as a markdown code span (which renders no HTML), on one line and without backticks."""
    return "`" + " ".join(str(value).replace("`", "'").split()) + "`"


def _ids(ids: Sequence[str]) -> str:
    return _text(", ".join(ids)) if ids else "none"


def coverage_lines(c: Curve) -> list[str]:
    """One bullet per axis: coverage, frontier points, dominated points, excluded points; then the curve's
    Check 14 result per reviewed percentile (`harness.report.analysis.coverage`), as `harness check --results`
    prints it."""
    lines = []
    for axis in FRONTIER_AXES:
        f = c.frontiers[axis.name]
        line = (f"- `{axis.name}`: {f.coverage} on the frontier ({_ids(f.frontier)}); "
                f"dominated: {_ids(f.dominated)}")
        if f.excluded:
            line += f"; excluded: {_ids(f.excluded)}"
        lines.append(line)

    lines += [f"- Check 14 (InferenceX's upper_right count): {v.status}, {_text(v.evidence)}" for v in check14(c)]
    return lines


def _heading(c: Curve) -> str:
    sim = f" ({SIMULATED})" if c.simulated else f" ({c.engine_label}; not GPU numbers)" if c.engine_label else ""
    return f"### {_text(c.titled)}{sim}"


def _identity(c: Curve) -> list[str]:
    """The curve's series, configs, image and engine, and what a variant or tagged run changes."""
    series = f"Series {_code(c.series.name)} (model/scenario/GPU+framework/precision)" if c.series else "Series unknown"
    configs = ", ".join(_code(n) for n in c.config_names)
    out = [f"{series}{'; configs ' + configs if configs else ''}. Image {_code(c.image or 'unknown')}, engine "
           f"{_code(c.engine)}.", ""]
    if c.variant and c.overrides:
        out += [f"Tuned variant {_code(c.variant)} of {_code(c.variant_of)}; overrides: "
                + ", ".join(_code(o) for o in c.overrides) + ".", ""]
    elif c.variant:
        out += [f"Tagged run {_code(c.variant)} of {_code(c.variant_of)}: the recipe as written, no overrides.", ""]
    return out


def verdict_lines(c: Curve) -> list[str]:
    """The curve's verdict table (`harness.report.analysis.verdicts`) and the footnotes its marks need."""
    out = ["| " + " | ".join(COLUMNS) + " |",
           "|" + "|".join("---:" if name in NUMERIC else "---" for name in COLUMNS) + "|"]
    for row in verdict_rows(c.points, conc_cells(c)):
        out.append("| " + " | ".join(_text(cell) for cell in row.cells) + " |")

    thin = thin_note(c.labelled())
    notes = footnotes(c.points) + ([thin] if thin else [])
    return [*out, *([""] + [_text(n) for n in notes] if notes else [])]


def _details(c: Curve) -> list[str]:
    """What the verdict table leaves out: notes, cancelled requests, power, warnings."""
    out: list[str] = []
    if curve_notes(c):
        out += [*(f"- {_text(n)}" for n in curve_notes(c))]
    cancelled = [(pid, p) for pid, p in c.labelled() if p.cancelled_at_cutoff]
    if cancelled:
        out.append("- requests cancelled at the end-of-run cutoff: "
                   + ", ".join(f"{_text(pid)}: {p.cancelled_at_cutoff}" for pid, p in cancelled))
    power = [(pid, p) for pid, p in c.labelled() if p.power_valid is False and not p.simulated]
    if power:
        out.append("- power invalid: " + ", ".join(
            f"{_text(pid)} ({_text(','.join(p.power_invalid_reasons) or 'unspecified')})" for pid, p in power))
    if c.simulated:
        out.append("- power: not measured (simulator).")
    out += [f"- warning: {_text(w)}" for w in c.warnings]
    return out


def render_markdown(curves: Sequence[Curve], plots: Sequence[str] = ()) -> str:
    """The report in markdown: the verdict table of each curve first, then the Pareto coverage, then the
    plots (`plots`: image paths relative to the markdown file), then the details."""
    title = "Agentic sweep report"
    out: list[str] = [f"# {SIMULATED}: {title}" if any(c.simulated for c in curves) else f"# {title}", "",
                      _text(CURVE_DEFINITION), ""]
    out += ["## Verdicts", "", _text(COLUMN_NOTE), ""]
    for c in curves:
        out += [_heading(c), "", *_identity(c), *verdict_lines(c), ""]
    judged = [(c, goodput_markdown(list(zip(conc_cells(c), c.points)))) for c in curves]
    out += ["## SLO attainment, goodput and cost", ""]
    if any(lines for _, lines in judged):
        out += [line for c, lines in judged if lines for line in (_heading(c), "", *lines, "")]
    if not any(p.cost for c in curves for p in c.points):
        out += [_text(HOW_TO_PRICE), ""]
    out += ["## Pareto coverage", "", "x-axis vs total throughput per GPU; invalid points are excluded.", ""]
    for c in curves:
        out += [_heading(c), "", *coverage_lines(c), ""]
    if plots:
        out += ["## Plots", "", *(f"![{_text(name)}]({name})" for name in plots), ""]
    details = [(c, _details(c)) for c in curves]
    if any(lines for _, lines in details):
        out += ["## Details", ""]
        for c, lines in details:
            if lines:
                out += [_heading(c), "", *lines, ""]
    return "\n".join(out).rstrip() + "\n"
