"""The latency plot draws each line (a config of a curve, a curve of another image) in a colour of its own."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from matplotlib.colors import to_hex

from harness.report.analysis.curves import group_curves
from harness.report.render.plots import _pyplot, lanes, latency_figure
from harness.report.results.points import load_results

FIX = Path(__file__).parent.parent / "fixtures" / "results"


def test_each_config_and_curve_has_its_own_colour() -> None:
    (curve,) = group_curves(load_results([FIX / "sim-run"]))
    renamed = [dataclasses.replace(p, config_key="quickstart-sim-b") if i % 2 else p for i, p in enumerate(curve.points)]
    two_configs = dataclasses.replace(curve, points=renamed)
    other_image = dataclasses.replace(curve, points=[dataclasses.replace(p, image="other:1") for p in curve.points])
    curves = [two_configs, other_image]
    assert len(lanes(curves)) == 3
    fig = latency_figure(curves)
    try:
        colours = [to_hex(line.get_color()) for line in fig.axes[0].lines if line.get_label().endswith(" p50")]
        assert len(colours) == 3 and len(set(colours)) == 3, colours
    finally:
        _pyplot().close(fig)
