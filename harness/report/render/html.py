"""One self-contained static HTML report, the PNGs embedded as base64, in reading order: the verdict table of
each curve (`harness.report.analysis.verdicts`), the Pareto coverage, the plots at full width, then the details (every
measured column, invalid points, warnings, fingerprints).

Laid out to fit a 1400 px window without horizontal scrolling, the first verdict table within its first
900 px: the page is at most 1360 px wide, table cells wrap (long reasons, image names and hashes break
anywhere; header words never break), the four frontier flags share one column, and a long fingerprint cell
(why no GPU was found) is cut, whole in its tooltip. When any point is simulated the title and a banner say
SIMULATED.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.point.record.cost import HOW_TO_PRICE
from harness.report.analysis.coverage import check14
from harness.report.analysis.curves import CURVE_DEFINITION, FRONTIER_AXES, Curve, power_text
from harness.report.analysis.goodput import render_goodput
from harness.report.analysis.table import (
    OUTPUT_PER_GPU,
    SIMULATED,
    TOTAL_PER_GPU,
    conc_cells,
    curve_notes,
    fmt,
    verdict,
)
from harness.report.analysis.thin import thin_note
from harness.report.analysis.verdicts import COLUMN_NOTE, COLUMNS, NUMERIC, footnotes, verdict_rows
from harness.report.render.plots import Positions
from harness.report.results.attributes import describe_point

_STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:1em auto;padding:0 1em;max-width:1360px;color:#222;font-size:14px;
     overflow-wrap:anywhere}
table{border-collapse:collapse;margin:0.5em 0 1.5em;width:100%;table-layout:auto}
th,td{border:1px solid #ccc;padding:3px 6px;overflow-wrap:anywhere;vertical-align:top}
th{background:#f6f6f6;font-weight:600;font-size:13px;overflow-wrap:normal}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.w{overflow-wrap:normal;word-break:keep-all}
tr.invalid{background:#fbe9e9;color:#777}
.on{font-weight:bold}img{width:100%;height:auto;border:1px solid #eee}
code{background:#f4f4f4;overflow-wrap:anywhere}
.sim{background:#fff3cd;border:2px solid #c99a00;padding:0.6em 1em;font-weight:600}
.tag{color:#555}
.plot{position:relative;margin:1em 0}.spot{position:absolute;width:14px;height:14px;margin:-7px 0 0 -7px;
     border-radius:50%}.spot:hover{outline:2px solid #1f6fb4}
"""


WHOLE_WORDS = frozenset({"valid", "publishable"})   # verdict columns: INVALID never breaks inside the word


def _e(value: object) -> str:
    return html.escape(str(value))


def _img(path: Path, links: Sequence[tuple[str, str, float, float]] = ()) -> str:
    """The PNG inlined; each `(href, title, x, y)` of `links` a link over the point drawn at that fraction of it."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    spots = "".join(f'<a class="spot" href="{_e(href)}" title="{_e(title)}" '
                    f'style="left:{100 * x:.2f}%;top:{100 * y:.2f}%"></a>' for href, title, x, y in links)
    return (f'<div class="plot"><img alt="{_e(path.name)}" src="data:image/png;base64,{data}">{spots}</div>'
            if spots else f'<p><img alt="{_e(path.name)}" src="data:image/png;base64,{data}"></p>')


def _cut(value: object, limit: int = 48) -> str:
    """A table cell cut to `limit` characters, the whole text in its tooltip."""
    text = str(value)
    if len(text) <= limit:
        return _e(text)
    return f'<span title="{_e(text)}">{_e(text[: limit - 1])}…</span>'


def _frontier_cell(c: Curve, pid: str, valid: bool) -> str:
    if not valid:
        return "-"
    on = [a.name for a in FRONTIER_AXES if pid in c.frontiers[a.name].frontier]
    return ", ".join(on) if on else "dominated"


def _heading(c: Curve) -> str:
    """The curve's name, marked SIMULATED (or with its engine label where it is not a GPU run)."""
    sim = f" <em>({SIMULATED})</em>" if c.simulated else \
        f" <em>({_e(c.engine_label)}; not GPU numbers)</em>" if c.engine_label else ""
    return _e(c.titled) + sim


# (curve index, point index) -> the point's inspect page, relative to the report
Links = Mapping[tuple[int, int], str]


def _cell(name: str, value: str, href: str | None) -> str:
    if href is not None and name == "conc":
        return f'<td class="n"><a href="{_e(href)}" title="inspect this point">{_e(value)}</a></td>'
    return (f'<td class="n">{_e(value)}</td>' if name in NUMERIC else
            f'<td class="w">{_e(value)}</td>' if name in WHOLE_WORDS else f"<td>{_e(value)}</td>")


def _verdict_section(c: Curve, ci: int = 0, links: Links | None = None) -> str:
    """The curve's name and identity, its verdict table (each point's cell a link to its inspect page) and the
    footnotes its marks need."""
    model = next((p.model for p in c.points if p.model), "unknown")   # a point without a record names none
    head = "".join(f'<th>{_e(h)}</th>' for h in COLUMNS)
    cells = conc_cells(c)
    href = {cell: (links or {}).get((ci, j)) for j, cell in enumerate(cells)}
    rows = "".join(
        f'<tr class="{"valid" if row.valid else "invalid"}">'
        + "".join(_cell(name, v, href.get(row.cells[0])) for name, v in zip(COLUMNS, row.cells))
        + "</tr>"
        for row in verdict_rows(c.points, cells)
    )
    variant = f" Variant <code>{_e(c.variant)}</code> of <code>{_e(c.variant_of)}</code>." if c.variant else ""
    series = f"Series <code>{_e(c.series.name)}</code>" if c.series else "Series unknown"
    configs = ", ".join(f"<code>{_e(n)}</code>" for n in c.config_names)

    thin = thin_note(c.labelled())
    notes = "".join(f'<p class="tag">{_e(n)}</p>' for n in [*footnotes(c.points), *([thin] if thin else [])])
    return (f"<h3>{_heading(c)}</h3><p>{series}{'; configs ' + configs if configs else ''}. "
            f"Image <code>{_e(c.image or 'unknown')}</code>, engine "
            f"<code>{_e(c.engine)}</code>, model <code>{_e(model)}</code>.{variant}</p>"
            f'<table class="verdict"><tr>{head}</tr>{rows}</table>{notes}')


def _coverage_section(c: Curve) -> str:
    """Per frontier axis: how many valid points are on the frontier, which are dominated."""
    items = "".join(
        f"<li><code>{a.name}</code>: {c.frontiers[a.name].coverage} on the frontier; dominated: "
        f"{_e(', '.join(c.frontiers[a.name].dominated) or 'none')}</li>"
        for a in FRONTIER_AXES
    )

    items += "".join(f"<li>Check 14 (InferenceX's upper_right count): {_e(v.status)}, {_e(v.evidence)}</li>"
                     for v in check14(c))
    return f"<h3>{_heading(c)}</h3><ul>{items}</ul>"


def _curve_section(c: Curve) -> str:
    """The curve's details: variant and notes, every measured column with its frontier flags, invalid points,
    warnings, fingerprints."""
    head = ["conc", TOTAL_PER_GPU, OUTPUT_PER_GPU, "E2EL p50 (s)", "E2EL p75 (s)", "E2EL p90 (s)",
            "TTFT p50 (s)", "requests ok/total", "errors", "cancelled at cutoff", "power", "verdict",
            "on frontier"]
    rows = []
    for (pid, p), cell in zip(c.labelled(), conc_cells(c)):
        ok = f"{fmt(p.num_requests_successful)}/{fmt(p.num_requests_total)}"
        cells = [cell, fmt(p.total_tput_per_gpu, 1), fmt(p.output_tput_per_gpu, 1),
                 fmt(p.stat("e2el", "p50")), fmt(p.stat("e2el", "p75")), fmt(p.stat("e2el", "p90")),
                 fmt(p.stat("ttft", "p50")), ok, fmt(p.errors), fmt(p.cancelled_at_cutoff)]
        reasons = "; ".join(f"{r.code}: {r.message}" for r in p.invalid_reasons)
        frontier = _frontier_cell(c, pid, p.valid)
        rows.append(
            f'<tr class="{"valid" if p.valid else "invalid"}">'
            + "".join(f'<td class="n">{_e(v)}</td>' for v in cells)
            + f"<td>{_e(power_text(p))}</td><td class=\"w\" title=\"{_e(reasons)}\">{_e(verdict(p))}</td>"
            + f'<td class="{"" if frontier in ("-", "dominated") else "on"}">{_e(frontier)}</td></tr>'
        )
    invalid = "".join(
        f"<li>{_e(pid)}: {_e('; '.join(f'{r.code}: {r.message}' for r in p.invalid_reasons) or 'unspecified')}</li>"
        for pid, p in c.labelled() if not p.valid
    )
    fp_rows = "".join(
        f"<tr><td class=\"n\">{_e(cell)}</td><td>{_e(describe_point(p))}</td>"
        f"<td>{_e(p.fingerprint.get('host', '-'))}</td>"
        f"<td>{_cut(p.fingerprint.get('gpus', '-'))}</td><td>{_e(p.fingerprint.get('sglang_version', '-'))}</td>"
        f"<td>{_e(p.fingerprint.get('image', p.image) or '-')}</td>"
        f"<td><code>{_e((p.recipe_fingerprint or '-')[:16])}</code></td>"
        f"<td><code>{_e((p.harness_commit or '-')[:18])}</code></td></tr>"
        for p, cell in zip(c.points, conc_cells(c))
    )
    warnings = "".join(f"<li>{_e(w)}</li>" for w in c.warnings)
    variant = (f"<p class=\"tag\">Tuned variant <code>{_e(c.variant)}</code> of <code>{_e(c.variant_of)}</code>; "
               f"overrides: {_e(', '.join(c.overrides))}.</p>") if c.variant and c.overrides else \
        (f"<p class=\"tag\">Tagged run <code>{_e(c.variant)}</code> of <code>{_e(c.variant_of)}</code>: the recipe "
         "as written, no overrides.</p>") if c.variant else ""
    notes = "".join(f"<p class=\"tag\">{_e(n)}</p>" for n in curve_notes(c))
    return (
        f"<h3>{_heading(c)}</h3>{variant}{notes}"
        f"<table><tr>{''.join(f'<th>{_e(h)}</th>' for h in head)}</tr>{''.join(rows)}</table>"
        + (f"<h4>Invalid points</h4><ul>{invalid}</ul>" if invalid else "")
        + (f"<h4>Warnings</h4><ul>{warnings}</ul>" if warnings else "")
        + "<h4>Points and fingerprints</h4><table><tr><th>conc</th><th>attributes</th><th>host</th><th>GPUs</th>"
        "<th>SGLang</th>"
        f"<th>image</th><th>recipe fingerprint</th><th>harness commit</th></tr>{fp_rows}</table>"
    )


def _spots(curves: Sequence[Curve], links: Links, where: Positions) -> list[tuple[str, str, float, float]]:
    return [(links[key], f"inspect {c.ids[key[1]]} of {c.key}", x, y) for key, (x, y) in where.items()
            if key in links and 0 <= x <= 1 and 0 <= y <= 1 for c in (curves[key[0]],)]


def report_title(curves: Sequence[Curve], title: str = "Agentic sweep report") -> str:
    """The report's title, starting with SIMULATED when any point is simulated."""
    return f"{SIMULATED}: {title}" if any(c.simulated for c in curves) else title


def _goodput_section(curves: Sequence[Curve]) -> str:
    """Each curve's attainment, goodput and cost table (`harness.report.analysis.goodput`), when any point has one;
    how to give a price when no point has a cost."""
    tables = [(c, render_goodput(list(zip(conc_cells(c), c.points)))) for c in curves]
    hint = "" if any(p.cost for c in curves for p in c.points) else f"<p>{_e(HOW_TO_PRICE)}</p>"
    return ('<h2 id="goodput">SLO attainment, goodput and cost</h2>' + hint
            + "".join(f"<h3>{_e(c.label)}</h3><pre>{_e(t)}</pre>" for c, t in tables if t))


def _repeats_section(curves: Sequence[Curve], repeats: Mapping[tuple[int, int], Mapping[str, Any]]) -> str:
    """Each point run with `--repeat N`: per metric the mean over the runs with its Student-t 95 % interval."""
    rows = []
    for (ci, pi), block in sorted(repeats.items()):
        c = curves[ci]
        for metric, m in block["metrics"].items():
            if "ci95" not in m:
                continue
            cv = "-" if m["cv_pct"] is None else f"{m['cv_pct']:.1f} %"
            rows.append(f"<tr><td>{_e(c.ids[pi])}</td><td>{_e(c.key)}</td><td>{_e(metric)}</td>"
                        f'<td class="n">{m["mean"]:.4g}</td><td class="n">[{m["ci95"][0]:.4g}, {m["ci95"][1]:.4g}]</td>'
                        f'<td class="n">{m["std"]:.3g}</td><td class="n">{cv}</td><td class="n">{m["se"]:.3g}</td>'
                        f'<td class="n">{m["n"]}</td></tr>')
    if not rows:
        return ""
    return ('<h2 id="repeats">Repeated points</h2><p class="tag">The mean over the runs of a point run with '
            "<code>--repeat N</code>, with its Student-t 95 % interval (mean ± t·s/√n).</p><table><tr><th>point</th>"
            "<th>curve</th><th>metric</th><th>mean</th><th>95 % interval</th><th>std</th><th>CV</th><th>SE</th>"
            f"<th>runs</th></tr>{''.join(rows)}</table>")


def render_html(curves: Sequence[Curve], pngs: Sequence[Path], title: str = "Agentic sweep report",
                links: Links | None = None, positions: Mapping[str, Positions] | None = None,
                repeats: Mapping[tuple[int, int], Mapping[str, Any]] | None = None) -> str:
    """The whole report as one HTML string: verdicts, Pareto coverage, plots, details; every image is
    inlined, nothing is fetched. `links`: each point's inspect page, linked from its verdict row and, where
    `positions` (PNG name -> where each point is drawn) says, from the point in the plot."""
    full = report_title(curves, title)
    banner = ""
    if any(c.simulated for c in curves):
        names = ", ".join(c.key for c in curves if c.simulated)
        banner = (f'<p class="sim">{SIMULATED}: {_e(names)} ran on the embedded simulator; its numbers are '
                  "not hardware measurements and power was not measured.</p>")
    body = (banner + f'<p class="tag">{_e(CURVE_DEFINITION)}</p>'
            + f'<h2 id="verdicts">Verdicts</h2><p class="tag">{_e(COLUMN_NOTE)}</p>'
            + "".join(_verdict_section(c, i, links) for i, c in enumerate(curves))
            + _goodput_section(curves)
            + '<h2 id="frontier">Pareto coverage</h2><p class="tag">x-axis vs total throughput per GPU; invalid '
            "points are excluded.</p>" + "".join(_coverage_section(c) for c in curves)
            + ('<h2 id="plots">Plots</h2>' + "".join(_img(p, _spots(curves, links or {}, (positions or {}).get(p.name, {}))) for p in pngs) if pngs else "")
            + _repeats_section(curves, repeats or {})
            + '<h2 id="details">Details</h2>' + "".join(_curve_section(c) for c in curves))
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_e(full)}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{_e(full)}</h1>{body}</body></html>\n"
    )
