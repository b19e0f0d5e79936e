"""A markdown summary for pull requests: per curve, its table and a "Pareto coverage" section."""

from __future__ import annotations

import html
from collections.abc import Sequence

from harness.report.curves import FRONTIER_AXES, Curve, varying_fields
from harness.report.table import COLUMNS, SIMULATED, curve_notes, table_rows


def _text(value: object) -> str:
    """A value as markdown text: HTML escaped (as in report.html), table pipes escaped, on one line."""
    return " ".join(html.escape(str(value)).replace("|", "\\|").split())


def _code(value: object) -> str:
    """A value as a markdown code span (which renders no HTML), on one line and without backticks."""
    return "`" + " ".join(str(value).replace("`", "'").split()) + "`"


def _concs(concs: Sequence[int]) -> str:
    return ", ".join(f"c{c}" for c in concs) if concs else "none"


def coverage_lines(c: Curve) -> list[str]:
    """One bullet per axis: coverage, frontier points, dominated points, excluded points."""
    lines = []
    for axis in FRONTIER_AXES:
        f = c.frontiers[axis.name]
        line = f"- `{axis.name}`: {f.coverage} on the frontier ({_concs(f.frontier)}); dominated: {_concs(f.dominated)}"
        if f.excluded:
            line += f"; excluded: {_concs(f.excluded)}"
        lines.append(line)
    return lines


def render_markdown(curves: Sequence[Curve]) -> str:
    title = "Agentic sweep report"
    out: list[str] = [f"# {SIMULATED}: {title}" if any(c.simulated for c in curves) else f"# {title}", ""]
    for c in curves:
        sim = f" ({SIMULATED})" if c.simulated else f" ({c.engine_label}; not GPU numbers)" if c.engine_label else ""
        out += [f"## {_text(c.key)}{sim}", "", f"Image {_code(c.image or 'unknown')}, engine {_code(c.engine)}.", ""]
        if c.variant and c.overrides:
            out += [f"Tuned variant {_code(c.variant)} of {_code(c.config_key)}; overrides: "
                    + ", ".join(_code(o) for o in c.overrides) + ".", ""]
        elif c.variant:
            out += [f"Tagged run {_code(c.variant)} of {_code(c.config_key)}: the recipe as written, no overrides.", ""]
        if curve_notes(c):
            out += [*(_text(n) for n in curve_notes(c)), ""]
        out.append("| " + " | ".join(COLUMNS) + " |")
        out.append("|" + "|".join("---:" if i < len(COLUMNS) - 1 else "---" for i in range(len(COLUMNS))) + "|")
        for row in table_rows(c.points, varying_fields(c.points)):
            out.append("| " + " | ".join(_text(cell) for cell in row) + " |")
        out.append("")
        out += ["### Pareto coverage", "", "x-axis vs total throughput per GPU; invalid points are excluded.", ""]
        out += coverage_lines(c)
        notes = [
            f"- c{p.conc}: " + "; ".join(_text(f"{r.code}: {r.message}" if r.message else r.code)
                                         for r in p.invalid_reasons)
            for p in c.invalid
        ]
        if notes:
            out += ["", "Invalid points:", "", *notes]
        cancelled = [p for p in c.points if p.cancelled_at_cutoff]
        if cancelled:
            out += ["", "Requests cancelled at the end-of-run cutoff: "
                    + ", ".join(f"c{p.conc}: {p.cancelled_at_cutoff}" for p in cancelled)]
        power = [p for p in c.points if p.power_valid is False and not p.simulated]
        if power:
            out += ["", "Power invalid: " + ", ".join(
                f"c{p.conc} ({_text(','.join(p.power_invalid_reasons) or 'unspecified')})" for p in power)]
        if c.simulated:
            out += ["", "Power: not measured (simulator)."]
        if c.warnings:
            out += ["", *(f"- warning: {_text(w)}" for w in c.warnings)]
        out.append("")
    return "\n".join(out).rstrip() + "\n"
