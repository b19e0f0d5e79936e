"""What a report's PNGs show: every text inside the figure (a long variant label wraps under the axes instead of
running off the page or over the points), and the tables' ◊ mark on a point whose place rests on little."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from harness.report.analysis.curves import Curve, group_curves
from harness.report.analysis.thin import MARK
from harness.report.render.plots import Quantiles, _pyplot, latency_figure, pareto_figure
from harness.report.results.points import load_results

FIX = Path(__file__).parent.parent / "fixtures" / "results"
LONG_VARIANT = ("burst_phase_starts=true", "warmup_requests_per_lane=1", "grace_s=20", "duration_s=45",
                "server.args.chunked-prefill-size=16384", "server.env.SGLANG_ENABLE_SPEC_V2=1")


def _curves() -> list[Curve]:
    curves = group_curves(load_results([FIX / "sim-run"]))
    long = dataclasses.replace(curves[0], variant="tuned", overrides=LONG_VARIANT)
    return [*curves, long]


def _outside(fig: Any) -> bool:
    """Whether what the figure draws (texts, legends, axes: its tight bounding box) leaves the figure (a pixel
    of slack)."""
    fig.canvas.draw()
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())   # inches
    width, height = fig.get_size_inches()
    slack = 1 / fig.dpi
    return drawn.x0 < -slack or drawn.y0 < -slack or drawn.x1 > width + slack or drawn.y1 > height + slack


def _legend_overlaps_axes(fig: Any) -> bool:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [lg.get_window_extent(renderer) for lg in fig.legends]
    return any(lg.overlaps(ax.get_window_extent(renderer)) for lg in legends for ax in fig.axes)


@pytest.mark.parametrize("figure", ["pareto", "latency"])
def test_every_text_stays_inside_the_figure_and_the_legend_off_the_axes(figure: str) -> None:
    curves = _curves()
    q = Quantiles(p5=0.1, p25=0.2, p50=0.3, p75=0.4, p95=0.5, n=20)
    fig = pareto_figure(curves) if figure == "pareto" else latency_figure(curves, {(0, 0): (q, q)})
    try:
        legend_texts = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
        assert any("server.env.SGLANG_ENABLE_SPEC_V2=1" in t and "\n" in t for t in legend_texts)  # wrapped
        assert not _outside(fig)
        assert not _legend_overlaps_axes(fig)
    finally:
        _pyplot().close(fig)


def test_the_checker_sees_a_text_that_leaves_the_figure() -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_ylabel("a label far too long for a three-inch axis to hold on one line, running off the figure")
    try:
        assert _outside(fig)
    finally:
        plt.close(fig)


def test_a_point_that_rests_on_little_carries_the_tables_mark() -> None:
    curves = group_curves(load_results([FIX / "sim-run"]))
    few = dataclasses.replace(curves[0].points[1], num_requests_successful=13)   # c2: 13 requests, valid
    curve = dataclasses.replace(curves[0], points=[curves[0].points[0], few, *curves[0].points[2:]])
    fig = pareto_figure([curve])
    try:
        annotations = [t.get_text() for t in fig.axes[0].texts]
        assert f"c2 {MARK} (13 req)" in annotations and "c4" in annotations
    finally:
        _pyplot().close(fig)
    fig = latency_figure([curve])
    try:
        assert [t.get_text() for t in fig.axes[0].get_xticklabels()][:3] == ["1", f"2 {MARK}", "4"]
    finally:
        _pyplot().close(fig)
