"""One self-contained static HTML report: tables, verdicts, fingerprints, and the PNGs embedded as base64."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from harness.report.curves import FRONTIER_AXES, Curve
from harness.report.table import fmt, verdict

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}th,td{border:1px solid #ccc;padding:3px 8px}
td.n{text-align:right;font-variant-numeric:tabular-nums}tr.invalid{background:#fbe9e9;color:#777}
.on{font-weight:bold}img{max-width:100%;border:1px solid #eee}code{background:#f4f4f4}
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<p><img alt="{_e(path.name)}" src="data:image/png;base64,{data}"></p>'


def _curve_section(c: Curve) -> str:
    on = {a.name: set(c.frontiers[a.name].frontier) for a in FRONTIER_AXES}
    head = ["conc", "tok/s/GPU", "out tok/s/GPU", "E2EL p50 (s)", "E2EL p75 (s)", "E2EL p90 (s)",
            "TTFT p50 (s)", "requests ok/total", "errors", "cancelled at cutoff", "power", "verdict",
            *(f"frontier {a.name}" for a in FRONTIER_AXES)]
    rows = []
    for p in c.points:
        ok = f"{fmt(p.num_requests_successful)}/{fmt(p.num_requests_total)}"
        power = "-" if p.power_valid is None else ("valid" if p.power_valid else
                                                   "invalid (" + ",".join(p.power_invalid_reasons) + ")")
        cells = [str(p.conc), fmt(p.total_tput_per_gpu, 1), fmt(p.output_tput_per_gpu, 1),
                 fmt(p.stat("e2el", "p50")), fmt(p.stat("e2el", "p75")), fmt(p.stat("e2el", "p90")),
                 fmt(p.stat("ttft", "p50")), ok, fmt(p.errors), fmt(p.cancelled_at_cutoff)]
        frontier_cells = ["on" if p.conc in on[a.name] else ("-" if not p.valid else "dominated")
                          for a in FRONTIER_AXES]
        reasons = "; ".join(f"{r.code}: {r.message}" for r in p.invalid_reasons)
        rows.append(
            f'<tr class="{"valid" if p.valid else "invalid"}">'
            + "".join(f'<td class="n">{_e(v)}</td>' for v in cells)
            + f"<td>{_e(power)}</td><td title=\"{_e(reasons)}\">{_e(verdict(p))}</td>"
            + "".join(f'<td class="{"on" if v == "on" else ""}">{v}</td>' for v in frontier_cells)
            + "</tr>"
        )
    coverage = "".join(
        f"<li><code>{a.name}</code>: {c.frontiers[a.name].coverage} on the frontier; dominated: "
        f"{_e(', '.join(f'c{x}' for x in c.frontiers[a.name].dominated) or 'none')}</li>"
        for a in FRONTIER_AXES
    )
    invalid = "".join(
        f"<li>c{p.conc}: {_e('; '.join(f'{r.code}: {r.message}' for r in p.invalid_reasons) or 'unspecified')}</li>"
        for p in c.invalid
    )
    fp_rows = "".join(
        f"<tr><td class=\"n\">{p.conc}</td><td>{_e(p.fingerprint.get('host', '-'))}</td>"
        f"<td>{_e(p.fingerprint.get('gpus', '-'))}</td><td>{_e(p.fingerprint.get('sglang_version', '-'))}</td>"
        f"<td>{_e(p.fingerprint.get('image', p.image) or '-')}</td>"
        f"<td><code>{_e((p.recipe_fingerprint or '-')[:16])}</code></td></tr>"
        for p in c.points
    )
    warnings = "".join(f"<li>{_e(w)}</li>" for w in c.warnings)
    sim = " <em>(simulated)</em>" if c.simulated else ""
    return (
        f"<h2>{_e(c.config_key)}{sim}</h2><p>Image <code>{_e(c.image or 'unknown')}</code>, engine "
        f"<code>{_e(c.engine)}</code>, model <code>{_e(c.points[0].model)}</code>.</p>"
        f"<table><tr>{''.join(f'<th>{_e(h)}</th>' for h in head)}</tr>{''.join(rows)}</table>"
        f"<h3>Pareto coverage</h3><ul>{coverage}</ul>"
        + (f"<h3>Invalid points</h3><ul>{invalid}</ul>" if invalid else "")
        + (f"<h3>Warnings</h3><ul>{warnings}</ul>" if warnings else "")
        + "<h3>Fingerprints</h3><table><tr><th>conc</th><th>host</th><th>GPUs</th><th>SGLang</th>"
        f"<th>image</th><th>recipe fingerprint</th></tr>{fp_rows}</table>"
    )


def render_html(curves: Sequence[Curve], pngs: Sequence[Path], title: str = "Agentic sweep report") -> str:
    """The whole report as one HTML string; every image is inlined, nothing is fetched."""
    body = "".join(_img(p) for p in pngs) + "".join(_curve_section(c) for c in curves)
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{_e(title)}</h1>{body}</body></html>\n"
    )
