"""Time panels as inline SVG (no script, no font, no network): lines, steps, dots, lane bars and phase bands on a
shared time axis. Drawing is downsampled to the panel's pixels (a line keeps each pixel column's min and max, so
no peak is lost; lane bars closer than a pixel merge); the data behind a page is never thinned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

WIDTH = 1240
LEFT, RIGHT, TOP, BOTTOM = 64, 150, 22, 26
MAX_DOTS = 6000
PALETTE = ("#1f6fb4", "#d9480f", "#2b8a3e", "#862e9c", "#c92a2a", "#5c940d", "#0b7285", "#e67700")
BAND_COLORS = {"server start": "#e9ecef", "server loading": "#dee2e6", "ready": "#f1f3f5",
               "client start + warm-up": "#fff3bf", "profiling": "#ebfbee", "grace": "#ffe8cc", "drain": "#ffe3e3",
               "teardown": "#f8f0fc"}


@dataclass
class Line:
    label: str
    t: Sequence[float]
    y: Sequence[float | None]
    color: str
    step: bool = False
    dash: bool = False


@dataclass
class Dots:
    label: str
    t: Sequence[float]
    y: Sequence[float]
    color: str
    marker: str = "circle"     # circle | cross
    tips: Sequence[str] | None = None


@dataclass
class Bars:
    """Lane rows: `rows[i]` is a list of (start, end) on the time axis."""

    label: str
    rows: Sequence[Sequence[tuple[float, float]]]
    color: str


@dataclass
class HLine:
    label: str
    y: float
    color: str


@dataclass
class Span:
    """A stretch of the time axis drawn as two vertical dashed lines (a window) with its label."""

    label: str
    start: float
    end: float
    color: str


@dataclass
class Band:
    name: str
    start: float
    end: float


@dataclass
class Panel:
    title: str
    y_label: str
    items: list[Line | Dots | Bars | HLine | Span] = field(default_factory=list)
    height: int = 190
    y_max: float | None = None
    log_y: bool = False


def _nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step) + 1)]


def _fmt(v: float) -> str:
    if abs(v) >= 10_000:
        return f"{v / 1000:.0f}k"
    if abs(v) >= 100 or v == int(v):
        return f"{v:.0f}"
    return f"{v:.2g}"


def _downsample(t: Sequence[float], y: Sequence[float | None], x0: float, x1: float,
                px: int) -> tuple[list[float], list[float | None]]:
    """At most ~2 points per pixel column: each column's first, min and max (a gap stays a gap)."""
    if len(t) <= 2 * px:
        return list(t), list(y)
    scale = px / (x1 - x0) if x1 > x0 else 1.0
    out_t: list[float] = []
    out_y: list[float | None] = []
    col: int | None = None
    lo = hi = None
    lo_t = hi_t = 0.0
    for ti, yi in zip(t, y, strict=False):
        c = int((ti - x0) * scale)
        if c != col:
            if lo is not None:
                pair = sorted(((lo_t, lo), (hi_t, hi)))
                out_t += [pair[0][0], pair[1][0]]
                out_y += [pair[0][1], pair[1][1]]
            col, lo, hi, lo_t, hi_t = c, yi, yi, ti, ti
            if yi is None:
                out_t.append(ti)
                out_y.append(None)
                lo = hi = None
            continue
        if yi is None:
            continue
        if lo is None or yi < lo:
            lo, lo_t = yi, ti
        if hi is None or yi > hi:
            hi, hi_t = yi, ti
    if lo is not None:
        out_t += [lo_t, hi_t]
        out_y += [lo, hi]
    return out_t, out_y


class _Frame:
    def __init__(self, x0: float, x1: float, y0: float, y1: float, height: int, log_y: bool):
        self.x0, self.x1, self.y0, self.y1, self.h, self.log = x0, x1, y0, y1, height, log_y
        self.pw = WIDTH - LEFT - RIGHT
        self.ph = height - TOP - BOTTOM

    def x(self, t: float) -> float:
        return LEFT + (t - self.x0) / (self.x1 - self.x0) * self.pw if self.x1 > self.x0 else LEFT

    def y(self, v: float) -> float:
        if self.log:
            lo, hi = math.log10(max(self.y0, 1e-9)), math.log10(max(self.y1, 1e-9))
            frac = (math.log10(max(v, self.y0, 1e-9)) - lo) / (hi - lo) if hi > lo else 0.0
        else:
            frac = (v - self.y0) / (self.y1 - self.y0) if self.y1 > self.y0 else 0.0
        return TOP + self.ph * (1 - min(max(frac, 0.0), 1.05))


def _y_range(panel: Panel) -> tuple[float, float]:
    values: list[float] = []
    for item in panel.items:
        if isinstance(item, Line):
            values += [v for v in item.y if v is not None]
        elif isinstance(item, Dots):
            values += list(item.y)
        elif isinstance(item, HLine):
            values.append(item.y)
    hi = panel.y_max if panel.y_max is not None else (max(values) if values else 1.0)
    if panel.log_y:
        positive = [v for v in values if v > 0]
        return (min(positive) if positive else 1e-3) * 0.8, max(hi, 1e-3) * 1.25
    return 0.0, (hi * 1.08 if hi > 0 else 1.0)


def render_panel(panel: Panel, x_range: tuple[float, float], bands: Sequence[Band] = ()) -> str:
    """One panel as an `<svg>` element."""
    x0, x1 = x_range
    bars = [i for i in panel.items if isinstance(i, Bars)]
    if bars:
        rows = max(len(b.rows) for b in bars)
        height = max(panel.height, TOP + BOTTOM + min(rows, 128) * 6 + 10)
        y0, y1 = 0.0, float(max(rows, 1))
    else:
        height = panel.height
        y0, y1 = _y_range(panel)
    f = _Frame(x0, x1, y0, y1, height, panel.log_y and not bars)
    out = [f'<svg class="panel" role="img" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
           f'xmlns="http://www.w3.org/2000/svg"><title>{escape(panel.title)}</title>']
    for band in bands:
        a, b = max(band.start, x0), min(band.end, x1)
        if b > a:
            out.append(f'<rect x="{f.x(a):.1f}" y="{TOP}" width="{f.x(b) - f.x(a):.1f}" height="{f.ph}" '
                       f'fill="{BAND_COLORS.get(band.name, "#f8f9fa")}"><title>{escape(band.name)}</title></rect>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{f.pw}" height="{f.ph}" fill="none" stroke="#adb5bd"/>')
    for tick in _nice_ticks(x0, x1, 10):
        xx = f.x(tick)
        out.append(f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{TOP}" y2="{TOP + f.ph}" stroke="#e9ecef"/>'
                   f'<text x="{xx:.1f}" y="{height - 8}" font-size="11" text-anchor="middle">{_fmt(tick)}</text>')
    if not bars:
        ticks = ([10.0 ** e for e in range(math.floor(math.log10(y0)), math.ceil(math.log10(y1)) + 1)]
                 if f.log else _nice_ticks(y0, y1, 4))
        for tick in ticks:
            if not y0 <= tick <= y1:
                continue
            yy = f.y(tick)
            out.append(f'<line x1="{LEFT}" x2="{LEFT + f.pw}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#f1f3f5"/>'
                       f'<text x="{LEFT - 6}" y="{yy + 4:.1f}" font-size="11" text-anchor="end">{_fmt(tick)}</text>')
    out.append(f'<text x="{LEFT}" y="14" font-size="12" font-weight="bold">{escape(panel.title)}</text>'
               f'<text x="{LEFT + f.pw}" y="14" font-size="11" text-anchor="end" fill="#495057">'
               f'{escape(panel.y_label)}; x: seconds from the window start</text>')
    for item in panel.items:
        out.append(_item(item, f))
    out.append(_legend(panel.items))
    out.append("</svg>")
    return "".join(out)


def _item(item: Line | Dots | Bars | HLine | Span, f: _Frame) -> str:
    if isinstance(item, Span):
        return "".join(f'<line x1="{f.x(x):.1f}" x2="{f.x(x):.1f}" y1="{TOP}" y2="{TOP + f.ph}" stroke="{item.color}" '
                       f'stroke-dasharray="5 3" stroke-width="2"><title>{escape(item.label)}</title></line>'
                       for x in (item.start, item.end) if f.x0 <= x <= f.x1)
    if isinstance(item, HLine):
        yy = f.y(item.y)
        return (f'<line x1="{LEFT}" x2="{LEFT + f.pw}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="{item.color}" '
                f'stroke-dasharray="6 4" stroke-width="1.5"><title>{escape(item.label)}</title></line>')
    if isinstance(item, Line):
        t, y = _downsample(item.t, item.y, f.x0, f.x1, f.pw)
        paths: list[list[str]] = []
        cur: list[str] = []
        prev_y: float | None = None
        for ti, yi in zip(t, y, strict=False):
            if yi is None:
                if cur:
                    paths.append(cur)
                cur, prev_y = [], None
                continue
            if item.step and prev_y is not None:
                cur.append(f"{f.x(ti):.1f},{f.y(prev_y):.1f}")
            cur.append(f"{f.x(ti):.1f},{f.y(yi):.1f}")
            prev_y = yi
        if cur:
            paths.append(cur)
        dash = ' stroke-dasharray="4 3"' if item.dash else ""
        return "".join(f'<polyline fill="none" stroke="{item.color}" stroke-width="1.4"{dash} '
                       f'points="{" ".join(p)}"/>' for p in paths)
    if isinstance(item, Dots):
        idx = list(range(len(item.t)))
        if len(idx) > MAX_DOTS:
            step = len(idx) / MAX_DOTS
            idx = [int(i * step) for i in range(MAX_DOTS)]
        parts = []
        for i in idx:
            xx, yy = f.x(item.t[i]), f.y(item.y[i])
            tip = f"<title>{escape(item.tips[i])}</title>" if item.tips is not None else ""
            if item.marker == "cross":
                parts.append(f'<path d="M{xx - 4:.1f},{yy - 4:.1f}L{xx + 4:.1f},{yy + 4:.1f}M{xx - 4:.1f},'
                             f'{yy + 4:.1f}L{xx + 4:.1f},{yy - 4:.1f}" stroke="{item.color}" stroke-width="2">'
                             f'{tip}</path>')
            else:
                parts.append(f'<circle cx="{xx:.1f}" cy="{yy:.1f}" r="2.6" fill="{item.color}" '
                             f'fill-opacity="0.75">{tip}</circle>')
        return "".join(parts)
    rows = item.rows
    row_h = f.ph / max(len(rows), 1)
    px = (f.x1 - f.x0) / f.pw if f.pw else 1.0
    parts = []
    for r, spans in enumerate(rows):
        merged: list[list[float]] = []
        for a, b in sorted(spans):
            if merged and a - merged[-1][1] < px:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        top = TOP + r * row_h + row_h * 0.15
        for a, b in merged:
            xa, xb = f.x(max(a, f.x0)), f.x(min(b, f.x1))
            if xb >= xa:
                parts.append(f'<rect x="{xa:.1f}" y="{top:.1f}" width="{max(xb - xa, 0.8):.1f}" '
                             f'height="{max(row_h * 0.7, 0.8):.1f}" fill="{item.color}"/>')
    return "".join(parts)


def _legend(items: Sequence[Line | Dots | Bars | HLine | Span]) -> str:
    out = []
    for i, item in enumerate(items):
        y = TOP + 4 + i * 15
        x = WIDTH - RIGHT + 10
        out.append(f'<rect x="{x}" y="{y}" width="12" height="8" fill="{item.color}"/>'
                   f'<text x="{x + 16}" y="{y + 8}" font-size="11">{escape(item.label[:22])}</text>')
    return "".join(out)
