"""The inspect page: one self-contained HTML file (inline style and SVG, no script, no font, no network) that leads
with the findings and draws one or two points on shared axes. Every panel names its source; a panel whose input is
missing is replaced by one line saying why."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from harness.inspect.svg_chart import PALETTE, Band, Bars, Dots, HLine, Line, Panel, Span, render_panel
from harness.inspect.view import PointView, view_of

_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:16px 24px;color:#212529;max-width:1260px}
h1{font-size:22px;margin:4px 0} h2{font-size:17px;margin:22px 0 6px;border-bottom:1px solid #dee2e6}
.banner{padding:8px 12px;border-radius:4px;margin:8px 0;font-weight:600}
.bad{background:#ffe3e3;border:1px solid #ffa8a8}.sim{background:#fff3bf;border:1px solid #ffe066}
ul.findings li{margin:4px 0} .rule{font-family:monospace;font-size:12px;color:#495057}
.kind-cause{color:#c92a2a;font-weight:600}.kind-warning{color:#e67700;font-weight:600}.kind-note{color:#495057}
table{border-collapse:collapse;font-size:13px;margin:6px 0}td,th{border:1px solid #dee2e6;padding:3px 8px;
text-align:left}th{background:#f1f3f5}.absent{color:#868e96;font-style:italic;margin:2px 0}
.src{color:#868e96;font-size:12px;overflow-wrap:anywhere} svg.panel{display:block;margin:6px 0;max-width:100%;height:auto}
table.wide{width:100%;table-layout:fixed}table.wide th{overflow-wrap:anywhere;font-size:12px}
"""


def _colors(i: int, many: bool) -> tuple[str, str, str, str]:
    """The colours of a panel's first to fourth series of the i-th point, none of them the red of failed requests.
    On one point's page each series has its own hue (blue, orange, green, purple); beside another point each point
    has its own pair (blue and green, orange and purple) and a pair's two series are told apart by dash."""
    if not many:
        return PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3]
    main, second = (PALETTE[0], PALETTE[2]) if i == 0 else (PALETTE[1], PALETTE[3])
    return main, main, second, second


def _name(v: PointView, many: bool, what: str) -> str:
    return f"{v.label} {what}" if many else what


def _x_range(views: Sequence[PointView]) -> tuple[float, float]:
    lo, hi = 0.0, 1.0
    for v in views:
        for band in v.data.get("series", {}).get("phases") or []:
            if band["name"] in ("client start + warm-up", "AIPerf warmup"):
                lo = min(lo, band["start_s"])
            if band["end_s"] is not None and band["name"] not in ("teardown",):
                hi = max(hi, band["end_s"])
        for r in v.data.get("requests") or []:
            hi = max(hi, r["end_s"])
            lo = min(lo, r["start_s"])
    return lo - 1.0, hi + 1.0


def _bands(v: PointView) -> list[Band]:
    return [Band(b["name"], b["start_s"], b["end_s"]) for b in v.data["series"].get("phases") or []
            if b["end_s"] is not None and not b["name"].startswith(("AIPerf", "requested"))]


def _load_panel(views: Sequence[PointView], many: bool) -> Panel:
    p = Panel("Requests: in flight and waiting at the client, running and queued at the server", "requests")
    for i, v in enumerate(views):
        in_flight, waiting, running, queued = _colors(i, many)
        client = v.data["series"]["client"]
        p.items.append(Line(_name(v, many, "client in flight"), client["in_flight"]["t"], client["in_flight"]["n"],
                            in_flight, step=True))
        if client["waiting"]["t"]:
            p.items.append(Line(_name(v, many, "client waiting"), client["waiting"]["t"], client["waiting"]["n"],
                                waiting, step=True, dash=True))
        server = v.data["series"]["server"]
        if server:
            p.items.append(Line(_name(v, many, "server running"), server["t"],
                                [x and x.get("avg") for x in server.get("num_running_reqs") or []], running))
            p.items.append(Line(_name(v, many, "server queued"), server["t"],
                                [x and x.get("max") for x in server.get("num_queue_reqs") or []], queued, dash=True))
        elif v.data["series"]["batch_log"]:   # no /metrics: SGLang's own batch lines say the same, less often
            batch = v.data["series"]["batch_log"]
            p.items.append(Line(_name(v, many, "server running (log)"), batch["t"], batch["running_req"], running))
            p.items.append(Line(_name(v, many, "server queued (log)"), batch["t"], batch["queue_req"], queued,
                                dash=True))
    return p


def _kv_panel(views: Sequence[PointView], many: bool) -> Panel | None:
    p = Panel("KV pool use (share of the pool) and prefix-cache hit rate per slice", "share 0..1", y_max=1.0)
    for i, v in enumerate(views):
        server = v.data["series"]["server"]
        if not server:
            continue
        pool, host, hit, trace = _colors(i, many)
        if server.get("token_usage"):
            p.items.append(Line(_name(v, many, "pool use (max)"), server["t"],
                                [x and x.get("max") for x in server["token_usage"]], pool))
        p.items.append(Line(_name(v, many, "hit rate"), server["t"], server["hit_rate"], hit, dash=True))
        if any(server.get("hit_rate_host") or []):   # a DRAM tier (HiCache) served some: device and host apart
            p.items.append(Line(_name(v, many, "hit rate (host)"), server["t"], server["hit_rate_host"], host,
                                dash=True))
        theory = v.facts.get("theoretical_hit_rate")
        if theory:
            p.items.append(HLine(_name(v, many, "trace's hit rate"), theory["value"], trace))
    return p if p.items else None


def _evict_panel(views: Sequence[PointView], many: bool) -> Panel | None:
    p = Panel("Tokens per slice: evicted from the pool, prefilled (computed), served from cache", "tokens / slice")
    for i, v in enumerate(views):
        server = v.data["series"]["server"]
        if not server:
            continue
        evicted, _, prefilled, hits = _colors(i, many)
        for key, what, color, dash in (("evicted_tokens", "evicted", evicted, False),
                                       ("prefill_compute_tokens", "prefilled", prefilled, False),
                                       ("cached_tokens_device", "cache hits", hits, True)):
            if server.get(key):
                p.items.append(Line(_name(v, many, what), server["t"], server[key], color, dash=dash))
    return p if p.items else None


def _latency_panel(views: Sequence[PointView], many: bool) -> Panel:
    p = Panel("Each request's TTFT and E2EL (second colour) at its end; x: failed or cancelled",
              "seconds (log)", log_y=True)
    for i, v in enumerate(views):
        main, _, second, _ = _colors(i, many)
        reqs = [r for r in v.data["requests"] if r["ok"] and r["ttft_ms"]]
        tips = [_tip(r) for r in reqs]
        p.items.append(Dots(_name(v, many, "TTFT"), [r["end_s"] for r in reqs], [r["ttft_ms"] / 1e3 for r in reqs],
                            main, tips=tips))
        p.items.append(Dots(_name(v, many, "E2EL"), [r["end_s"] for r in reqs], [r["e2el_ms"] / 1e3 for r in reqs],
                            second, tips=tips))
        bad = [r for r in v.data["requests"] if not r["ok"] or r["cancelled"]]
        if bad:
            p.items.append(Dots(_name(v, many, "failed/cancelled"), [r["end_s"] for r in bad],
                                [max((r["e2el_ms"] or 1.0) / 1e3, 1e-3) for r in bad], PALETTE[4], marker="cross",
                                tips=[f"{r['error'] or 'cancelled'}" for r in bad]))
        cut = v.facts.get("cancelled_at_cutoff")
        end = (v.data.get("window") or {}).get("duration_s")
        if cut and cut["value"] and end is not None:   # AIPerf keeps no record of them: one mark where they were cut
            p.items.append(Dots(_name(v, many, f"{cut['value']} cancelled at cutoff"), [end], [1.0], PALETTE[4],
                                marker="cross", tips=[f"{cut['value']} requests cancelled at the end of the window "
                                                      f"({cut['source']})"]))
    return p


def _tip(r: dict[str, Any]) -> str:
    def n(x: float | None) -> str:
        return "-" if x is None else f"{x:,.0f}"

    return (f"{r['phase']} lane {r['lane']}: TTFT {r['ttft_ms'] / 1e3:.2f} s, E2EL {r['e2el_ms'] / 1e3:.2f} s, "
            f"ISL {n(r['isl'])}, OSL {n(r['osl'])}, cached {n(r['cached_tokens'])}")


def _session_panels(views: Sequence[PointView], many: bool) -> list[Panel]:
    out = []
    for i, v in enumerate(views):
        rows: dict[int, list[tuple[float, float]]] = {}
        for r in v.data["requests"]:
            rows.setdefault(r["lane"], []).append((r["start_s"], r["end_s"]))
        p = Panel(f"{v.label + ': ' if many else ''}sessions: one row per agent lane, its calls as bars "
                  "(gaps: thinking, tools, waiting for a credit)", "lanes", height=120)
        p.items.append(Bars(_name(v, many, "calls"), [rows[k] for k in sorted(rows)], _colors(i, many)[0]))
        out.append(p)
    return out


def _accept_panel(views: Sequence[PointView], many: bool) -> Panel | None:
    p = Panel("Speculative accept length (SGLang's Decode batch lines)", "tokens per verify step")
    for i, v in enumerate(views):
        batch = v.data["series"]["batch_log"]
        if batch and any(a is not None for a in batch["accept_len"]):
            p.items.append(Line(_name(v, many, "accept len"), batch["t"], batch["accept_len"], _colors(i, many)[0]))
    return p if p.items else None


def _power_panel(views: Sequence[PointView], many: bool) -> Panel | None:
    p = Panel("GPU power per GPU (NVML samples), AIPerf's window and the one InferenceX integrates over", "watts")
    for i, v in enumerate(views):
        power = v.data["series"]["power"]
        if not power:
            continue
        for j, (gpu, s) in enumerate(sorted(power["gpus"].items())):
            color = PALETTE[(2 * i + j) % len(PALETTE)]
            p.items.append(Line(_name(v, many, f"GPU {gpu[-6:]}"), s["t"], s["w"], color))
        end = (v.data.get("window") or {}).get("duration_s")
        if end is not None:
            p.items.append(Span(_name(v, many, "AIPerf window (UTC)"), 0.0, end, "#212529"))
            offset = v.facts.get("power_clock_offset")
            if offset:   # the summary's naive times as read: a skew shows as a second, shifted window
                p.items.append(Span(_name(v, many, f"integrated ({offset['value']:+.1f} s)"), offset["value"],
                                    offset["value"] + end, PALETTE[4]))
    return p if p.items else None


def _truth_panel(views: Sequence[PointView], many: bool) -> Panel | None:
    p = Panel("SIMULATOR GROUND TRUTH: each request's queue wait and prefill at the server, at its arrival",
              "seconds (log)", log_y=True)
    for i, v in enumerate(views):
        truth = v.data["series"]["truth"]
        if not truth:
            continue
        main, second = (PALETTE[3], PALETTE[2]) if i == 0 else (PALETTE[4], PALETTE[5])   # apart from each other
        q = [t for t in truth if t["queue_s"]]
        p.items.append(Dots(_name(v, many, "queue wait"), [t["arrival_s"] for t in q], [t["queue_s"] for t in q], main))
        pre = [t for t in truth if t["prefill_s"]]
        p.items.append(Dots(_name(v, many, "prefill"), [t["arrival_s"] for t in pre], [t["prefill_s"] for t in pre],
                            second))
    return p if p.items else None


def _findings_html(v: PointView, many: bool) -> str:
    head = f"<h2>{escape(v.label)}: findings</h2>" if many else "<h2>Findings</h2>"
    if not v.findings:
        return head + "<p>No rule fired: nothing in the series explains a reading beyond its load.</p>"
    items = "".join(f'<li><span class="kind-{f.kind}">{f.kind}</span> {escape(f.text)} '
                    f'<span class="rule">[{f.rule}; n={f.n}; {escape(f.source)}]</span></li>' for f in v.findings)
    return f'{head}<ul class="findings">{items}</ul>'


def _split_html(views: Sequence[PointView]) -> str:
    rows = []
    for v in views:
        for source, split in (v.data.get("time_split") or {}).items():
            if "reason" in split:
                rows.append(f"<tr><td>{escape(v.label)}</td><td>{escape(source)}</td>"
                            f'<td colspan="4" class="absent">{escape(split["reason"])}</td></tr>')
                continue
            cells = "".join(f"<td>{p['mean_s']:.3f} s ({(p['share'] or 0) * 100:.0f} %, n={p['n']})</td>"
                            for p in split["parts"])
            rows.append(f"<tr><td>{escape(v.label)}</td><td>{escape(split['source'])}</td>{cells}</tr>")
    return ("<h2>Where the time went (mean per request)</h2><table class='wide'><tr><th>point</th><th>source</th>"
            "<th>queue wait</th><th>prefill</th><th>decode</th><th>client</th></tr>" + "".join(rows) + "</table>")



def _stability_html(views: Sequence[PointView]) -> str:
    keys = ("window_seconds", "expected_window_count", "observed_window_count", "min_window_requests",
            "root_trajectory_count", "root_trajectory_kish_effective_count", "root_trajectory_largest_share")
    head = "".join(f"<th>{escape(k)}</th>" for k in keys)
    rows = []
    for v in views:
        s = v.data.get("stability") or {}
        rows.append(f"<tr><td>{escape(v.label)}</td>" + "".join(f"<td>{escape(_short(s.get(k)))}</td>" for k in keys)
                    + f"<td>{escape(_stability_reason(s))}</td></tr>")
    return ("<h2>Stability diagnostics (InferenceX's definitions; descriptive, not confidence intervals)</h2>"
            f"<table class='wide'><tr><th>point</th>{head}<th>why no ranges</th></tr>{''.join(rows)}</table>")


STABILITY_REASONS = {
    "duration_unknown": "the profiling window's length is unknown",
    "duration_shorter_than_window": "the profiling window is shorter than one {window} s window",
    "no_requests": "no request completed in the window",
    "fewer_than_two_windows": "the requests fall in fewer than two {window} s windows",
}


def _stability_reason(s: dict[str, Any]) -> str:
    """Why a point has no per-window ranges, in words (InferenceX's windows are 600 s: a shorter run has none)."""
    code = s.get("reason")
    if not code:
        return "—"
    words = STABILITY_REASONS.get(str(code), str(code))
    return words.format(window=_short(s.get("window_seconds")))


def _short(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.3f}"
    return "—" if x is None else str(x)


def render_page(twin: dict[str, Any]) -> str:
    """The HTML of a JSON twin (`harness.inspect.write`): one point, or two on shared axes."""
    views = [view_of(d) for d in twin["points"]]
    many = len(views) > 1
    title = " vs ".join(v.label for v in views)
    sim = any(v.data.get("simulated") for v in views)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{'SIMULATED: ' if sim else ''}inspect "
             f"{escape(title)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{'SIMULATED: ' if sim else ''}Inside {escape(title)}</h1>"]
    for v in views:
        d = v.data
        where = f"{d.get('config_key') or ''}{' / ' + d['variant'] if d.get('variant') else ''}"
        parts.append(f'<p class="src">{escape(v.label)}: {escape(where)} — {escape(d["point_dir"])}</p>')
        if d["state"] != "completed" or d.get("valid") is False:
            why = d.get("reason") or ", ".join(str(r) for r in d.get("invalid_reasons") or []) or "unknown"
            parts.append(f'<div class="banner bad">{escape(v.label)}: {escape(d["state"])}'
                         f'{"" if d.get("valid") is not False else ", invalid"}: {escape(why)} — '
                         "this page shows what the point kept</div>")
    if sim:
        parts.append('<div class="banner sim">Measured on the embedded simulator: timings are the simulator\'s, '
                     "not a GPU's.</div>")
    drawable = [v for v in views if v.data.get("window")]
    if many and len(drawable) == 2:
        lines = twin["contrast"]
        parts.append("<h2>Side by side</h2><ul>" + "".join(f"<li>{escape(x)}</li>" for x in lines) + "</ul>")
    for v in views:
        parts.append(_findings_html(v, many))
    absent = [f"{v.label}: {k}: {why}" for v in views for k, why in v.data["absent"].items()]
    if drawable:
        x_range = _x_range(drawable)
        bands = _bands(drawable[0])
        panels: list[Panel | None] = [_load_panel(drawable, many), _kv_panel(drawable, many),
                                      _evict_panel(drawable, many), _latency_panel(drawable, many),
                                      *_session_panels(drawable, many), _accept_panel(drawable, many),
                                      _power_panel(drawable, many), _truth_panel(drawable, many)]
        parts.append("<h2>Timeline</h2><p class='src'>Bands: the first point's phases (server start, warm-up, "
                     "profiling, grace, drain, teardown). Hover a dot for its request.</p>")
        parts += [render_panel(p, x_range, bands) for p in panels if p is not None]
        parts.append(_split_html(drawable))
        parts.append(_stability_html(drawable))
    if absent:
        parts.append("<h2>Not drawn</h2>" + "".join(f'<p class="absent">{escape(a)}</p>' for a in absent))
    parts.append("</body></html>")
    return "".join(parts)
