"""PNG plots (matplotlib, Agg backend): the Pareto view and latency by concurrency."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.artifacts import write_figure
from harness.report.analysis.curves import CURVE_DEFINITION, FRONTIER_AXES, Y_LABEL, Axis, Curve, y_value
from harness.report.analysis.table import SIMULATED
from harness.report.analysis.thin import MARK, is_thin, marked
from harness.report.analysis.verdicts import few_requests
from harness.report.results.attributes import UNNAMED, offloaded
from harness.report.results.configs import config_name
from harness.report.results.load import PointResult
from harness.report.results.samples import RequestSamples

BOX_CAPTION = "box: p25–p75 of the point's requests, line: median, whiskers: p5–p95"


@dataclass(frozen=True)
class Quantiles:
    """Box statistics of one point's per-request latencies (seconds)."""

    p5: float
    p25: float
    p50: float
    p75: float
    p95: float
    n: int


def quantiles(samples: Sequence[float]) -> Quantiles | None:
    import numpy as np

    if len(samples) == 0:
        return None
    arr = np.asarray(samples, dtype=np.float64)
    p5, p25, p50, p75, p95 = (float(v) for v in np.percentile(arr, [5, 25, 50, 75, 95]))
    return Quantiles(p5=p5, p25=p25, p50=p50, p75=p75, p95=p95, n=int(arr.size))


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(c: Curve) -> str:
    return c.label


def title(curves: Sequence[Curve], text: str) -> str:
    """A plot title; it starts with SIMULATED when any curve is simulated."""

    sim = [c for c in curves if c.simulated]
    if not sim:
        return text
    which = "" if len(sim) == len(curves) else f" ({len(sim)} of {len(curves)} curves)"
    return f"{SIMULATED}{which}: {text}"


def point_label(pid: str, p: PointResult) -> str:
    """The point's identity (`c8`, `c24 (kv dram)`) with the tables' mark where its place on the curve rests on
    little (`c2 ◊`, `harness.report.analysis.thin`), and `(13 req)` where its p90 rests on too few requests
    (`harness.report.analysis.verdicts`)."""
    text = marked(pid, p)
    return f"{text} ({p.num_requests_successful} req)" if few_requests(p, 90) else text


def marker(p: PointResult) -> str:
    """A square for a point that offloads KV cache, a circle otherwise: one line, two kinds of point."""
    return "s" if offloaded(p) else "o"


LEGEND_FONT_PT = 7
LEGEND_WRAP = 150        # characters of a legend entry per line (a 12-inch figure holds about 220 at 7 pt)
FOOTER_IN = 0.3          # the curve definition's two lines of small print
Y_LABEL_WRAP = 48        # the throughput axis label in lines that fit the axis's height


def _finish(fig: Any, handles: Sequence[Any] = (), names: Sequence[str] = ()) -> None:
    """The legend under the axes (its long entries wrapped) and the curve definition in small print under it;
    the figure grows by the legend's height, so no text leaves it and no legend covers a point."""
    wrapped = [textwrap.fill(n, LEGEND_WRAP, subsequent_indent="    ") for n in names]
    lines = sum(w.count("\n") + 1 for w in wrapped)
    legend_in = (lines * LEGEND_FONT_PT * 1.45 / 72 + 0.15) if wrapped else 0.0
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + legend_in)
    total = height + legend_in
    bottom = (legend_in + FOOTER_IN) / total
    fig.text(0.005, 0.005, textwrap.fill(CURVE_DEFINITION, 170), fontsize=6, color="0.4", ha="left", va="bottom")
    fig.tight_layout(rect=(0, bottom, 1, 1))
    if wrapped:
        fig.legend(list(handles), wrapped, loc="upper left", bbox_to_anchor=(0.01, bottom), fontsize=LEGEND_FONT_PT,
                   frameon=False, borderaxespad=0.0)


@dataclass(frozen=True)
class Label:
    """A point's label on a plot: where (data coordinates), what, in which color, and how far above the point
    it is drawn (points of text)."""

    x: float
    y: float
    text: str
    color: str
    dy: float = 4.0


def _position(value: float, low: float, high: float, log: bool) -> float:
    """`value` as a fraction of the axis from `low` to `high` (on a log axis, of its logarithmic span)."""
    import math

    if log and value > 0 and low > 0:
        value, low, high = math.log10(value), math.log10(low), math.log10(high)
    return 0.0 if high == low else (value - low) / (high - low)


def place_labels(labels: Sequence[Label], log_x: bool = False, log_y: bool = False, near: float = 0.03,
                 step: float = 10.0) -> list[Label]:
    """Labels that never overprint: one label of the same text at (nearly) the same spot is drawn once, and
    different labels near one spot (within `near` of either axis's span) are stacked `step` points apart."""
    if not labels:
        return []
    xs, ys = [lb.x for lb in labels], [lb.y for lb in labels]
    spot = [(_position(lb.x, min(xs), max(xs), log_x), _position(lb.y, min(ys), max(ys), log_y)) for lb in labels]
    placed: list[tuple[tuple[float, float], Label]] = []
    for (u, v), lb in zip(spot, labels):
        close = [other for (ou, ov), other in placed if abs(ou - u) <= near and abs(ov - v) <= near]
        if any(other.text == lb.text for other in close):
            continue   # the same label at the same spot (a repeat, or a variant measuring alike): drawn once
        placed.append(((u, v), Label(lb.x, lb.y, lb.text, lb.color, lb.dy + step * len(close))))
    return [lb for _, lb in placed]


def _wide(values: Sequence[float]) -> bool:
    """Positive values spanning more than 20x: the axis is drawn on a log scale (`_log_if_wide`)."""
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > 20


# (curve index, point index) -> where the point is drawn, as fractions of the image (0,0 top left)
Positions = dict[tuple[int, int], tuple[float, float]]


def plot_pareto(curves: Sequence[Curve], path: Path, axis: Axis = FRONTIER_AXES[0],
                positions: Positions | None = None) -> Path:
    """Throughput per GPU against one x metric (`pareto_figure`), saved to `path`; `positions`, when given, is
    filled with where each drawn point lies in the image (for links over it)."""
    plt = _pyplot()
    fig = pareto_figure(curves, axis)
    write_figure(path, fig)
    if positions is not None:
        positions.update(drawn_positions(fig, curves, axis))
    plt.close(fig)
    return path


def drawn_positions(fig: Any, curves: Sequence[Curve], axis: Axis) -> Positions:
    """Each plotted point's place in the saved image, as fractions of its width and height from the top left."""
    ax = fig.axes[0]
    width, height = fig.bbox.width, fig.bbox.height
    out: Positions = {}
    for i, c in enumerate(curves):
        for j, p in enumerate(c.points):
            x, y = axis.value(p), y_value(p)
            if x is None or y is None:
                continue
            px, py = ax.transData.transform((x, y))
            out[(i, j)] = (float(px / width), float(1 - py / height))
    return out


def pareto_figure(curves: Sequence[Curve], axis: Axis = FRONTIER_AXES[0]) -> Any:
    """Throughput per GPU against one x metric; each curve's frontier drawn through the points of all its
    configs, points labelled by their identity (and their request count where it is too small for a p90;
    `place_labels` keeps labels from overprinting), KV-offload points as squares on the same line, invalid
    points as grey crosses; the title says which corner is better."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(12, 5.5), dpi=110)   # the page's full width
    labels: list[Label] = []
    invalid_labels: list[Label] = []
    for i, c in enumerate(curves):
        color = f"C{i % 10}"
        frontier = set(c.frontiers[axis.name].frontier)
        fx, fy = [], []
        for pid, p in c.labelled():
            x, y = axis.value(p), y_value(p)
            if x is None or y is None:
                continue
            if not p.valid:
                ax.scatter([x], [y], marker="x", color="0.55", zorder=3)
                invalid_labels.append(Label(x, y, f"{pid} (invalid)", "0.45", -10.0))
                continue
            ax.scatter([x], [y], marker=marker(p), color=color, alpha=0.45, zorder=2)
            if pid in frontier:
                fx.append(x)
                fy.append(y)
                ax.scatter([x], [y], marker=marker(p), color=color, zorder=4)
            labels.append(Label(x, y, point_label(pid, p), color))
        if fx:
            order = sorted(range(len(fx)), key=lambda k: fx[k])
            ax.plot([fx[k] for k in order], [fy[k] for k in order], "-", color=color, zorder=4,
                    label=f"{_label(c)}  frontier {c.frontiers[axis.name].coverage}")
    every = labels + invalid_labels
    log_x, log_y = _wide([lb.x for lb in every]), _wide([lb.y for lb in every])
    for lb in place_labels(labels, log_x, log_y):
        ax.annotate(lb.text, (lb.x, lb.y), textcoords="offset points", xytext=(4, lb.dy), fontsize=8, color=lb.color)
    for lb in place_labels(invalid_labels, log_x, log_y, step=-10.0):
        ax.annotate(lb.text, (lb.x, lb.y), textcoords="offset points", xytext=(4, lb.dy), fontsize=7, color=lb.color)
    if any(offloaded(p) for c in curves for p in c.points if p.valid):
        ax.scatter([], [], marker="s", color="0.3", label="square: KV offload point")
        ax.scatter([], [], marker="o", color="0.3", label="circle: GPU-resident KV point")
    ax.set_xlabel(axis.label + ("  (lower is better)" if axis.direction == "min" else "  (higher is better)"))
    ax.set_ylabel(textwrap.fill(Y_LABEL, Y_LABEL_WRAP))
    better = "up and to the left" if axis.direction == "min" else "up and to the right"
    ax.set_title(title(curves, f"Throughput per GPU vs {axis.label}: {better} is better"))
    ax.grid(True, alpha=0.3)
    _log_if_wide(ax)
    _finish(fig, *ax.get_legend_handles_labels())
    return fig


def _log_if_wide(ax: Any) -> None:
    """Log scale on an axis whose positive data span more than 20x (curves of very different sizes)."""
    for column, set_scale in ((0, ax.set_xscale), (1, ax.set_yscale)):
        values = [float(v) for coll in ax.collections for v in coll.get_offsets()[:, column] if v > 0]
        if _wide(values):
            set_scale("log")


def lanes(curves: Sequence[Curve]) -> list[tuple[int, str, list[int]]]:
    """(curve index, config name, indices of its points): one line per config of each curve, so a curve that
    gathers several configs draws each config's latencies by concurrency without joining them."""
    out: list[tuple[int, str, list[int]]] = []
    for i, c in enumerate(curves):
        groups: dict[str, list[int]] = {}
        for j, p in enumerate(c.points):
            groups.setdefault(config_name(p), []).append(j)
        out += [(i, (name or UNNAMED) if len(groups) > 1 else "", idx) for name, idx in groups.items()]
    return out


def lane_colour(k: int, lanes_drawn: int) -> Any:
    """The colour of the `k`th line of the latency plot: each config of each curve its own (matplotlib's ten
    cycle colours, or tab20's twenty where more lines are drawn; past twenty they repeat)."""
    if lanes_drawn <= 10:
        return f"C{k}"
    return _pyplot().get_cmap("tab20")(k % 20)


def plot_latency_by_conc(
    curves: Sequence[Curve],
    path: Path,
    distributions: Mapping[tuple[int, int], tuple[Quantiles | None, Quantiles | None]] | None = None,
) -> Path:
    """TTFT and E2EL against concurrency: p50 (solid) and p90 (dashed) from the results, one line per config
    of a curve (KV-offload points as squares), and where per-request records exist a box per point (whiskers
    p5–p95, box p25–p75).

    `distributions` maps (curve index, point index) to (TTFT quantiles, E2EL quantiles).
    """
    plt = _pyplot()
    fig = latency_figure(curves, distributions)
    write_figure(path, fig)
    plt.close(fig)
    return path


def latency_figure(
    curves: Sequence[Curve],
    distributions: Mapping[tuple[int, int], tuple[Quantiles | None, Quantiles | None]] | None = None,
) -> Any:
    """The figure `plot_latency_by_conc` saves; its legend says what the boxes show when any are drawn."""
    plt = _pyplot()
    distributions = distributions or {}
    concs = sorted({p.conc for c in curves for p in c.points})
    pos = {conc: i for i, conc in enumerate(concs)}
    thin = {p.conc for c in curves for p in c.points if is_thin(p)}   # marked as the tables mark them
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), dpi=110)
    drawn = lanes(curves)
    width = 0.8 / max(1, len(drawn))
    boxed = False
    for ax, metric, name, slot in ((axes[0], "ttft", "TTFT", 0), (axes[1], "e2el", "E2EL", 1)):
        for k, (i, config, members) in enumerate(drawn):
            c, color = curves[i], lane_colour(k, len(drawn))
            offset = (k - (len(drawn) - 1) / 2) * width
            points = [(j, c.points[j]) for j in members]
            for stat, style in (("p50", "-"), ("p90", "--")):
                pts = [(pos[p.conc] + offset, p.stat(metric, stat), marker(p)) for _, p in points]
                pts = [(x, y, m) for x, y, m in pts if y is not None]
                if pts:
                    ax.plot([x for x, _, _ in pts], [y for _, y, _ in pts], style, color=color,
                            label=f"{c.key} · {config} [{c.engine}] {stat}" if config else f"{_label(c)} {stat}")
                    for x, y, m in pts:
                        ax.scatter([x], [y], marker=m, s=12, color=color, zorder=3)
            boxes, positions = [], []
            for j, p in points:
                q = distributions.get((i, j), (None, None))[slot]
                if q is None:
                    continue
                boxes.append({"med": q.p50, "q1": q.p25, "q3": q.p75, "whislo": q.p5, "whishi": q.p95,
                              "fliers": [], "label": str(p.conc)})
                positions.append(pos[p.conc] + offset)
            if boxes:
                boxed = True
                ax.bxp(boxes, positions=positions, widths=width * 0.8, showfliers=False, patch_artist=True,
                       boxprops={"facecolor": color, "alpha": 0.25}, medianprops={"color": color},
                       manage_ticks=False)
        for p in (p for c in curves for p in c.points if not p.valid):
            ax.axvline(pos[p.conc], color="0.8", lw=0.8, ls=":", zorder=0)
        ax.set_xticks(range(len(concs)), [f"{c} {MARK}" if c in thin else str(c) for c in concs])
        ax.set_xlabel("concurrency (sessions)")
        ax.set_ylabel(f"{name} (s; lower is better)")
        ax.set_title(title(curves, f"{name} by concurrency"))
        ax.grid(True, axis="y", alpha=0.3)
    handles, names = axes[1].get_legend_handles_labels()
    if boxed:   # say what the boxes show
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="0.5", alpha=0.25, edgecolor="0.3"))
        names.append(BOX_CAPTION)
    _finish(fig, handles, names)
    return fig


def sample_quantiles(samples: RequestSamples) -> tuple[Quantiles | None, Quantiles | None]:
    return quantiles(samples.ttft), quantiles(samples.e2el)
