"""Sweep reports: curves, Pareto frontiers and coverage, plots, static HTML, markdown, and comparisons.

Results flow through three packages: `results` reads the records and unfinished points of one or more runs
and groups them into series and configs, `analysis` computes curves, frontiers, verdicts and comparisons,
and `render` writes the tables, plots, HTML, markdown and CSV.

    build_report(run_dirs, out_dir) -> ReportOutputs   # everything, written to out_dir
    render_table(results) -> str                        # the plain-text curve table
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.report.analysis.table import render_table
from harness.report.render import build

__all__ = ["ReportOutputs", "build_report", "render_table"]

if TYPE_CHECKING:
    from harness.report.analysis.table import render_table
    from harness.report.render.build import ReportOutputs, build_report


def __getattr__(name: str) -> Any:
    # Lazy, so importing the package (e.g. for the CLI) does not load matplotlib.
    if name in ("build_report", "ReportOutputs"):
        return getattr(build, name)
    if name == "render_table":
        return render_table
    raise AttributeError(name)
