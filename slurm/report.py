"""The report at the end of a followed job (`submit --wait`, `follow`): built from the job's out dir
once the array has ended, written to `<out>/report/`, and its curve tables printed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.report import build_report
from harness.report.analysis.table import render_curve


def job_report(record: dict[str, Any]) -> tuple[list[str], Path | None]:
    """Build the report of a finished job: the lines to print (curve tables, then where the files are) and
    the HTML report's path.
    A job that left no result at all gets one line saying so (the job's exit status already tells)."""

    out_dir = Path(record["out_dir"])
    try:
        outputs = build_report([out_dir], out_dir / "report")
    except UserError as exc:
        return [f"report: not built ({exc})"], None
    lines: list[str] = []
    for curve in outputs.curves:
        lines += ["", render_curve(curve).rstrip("\n")]
    lines += ["", f"report: {outputs.html_path}", f"pr summary: {outputs.markdown_path}",
              f"csv: {outputs.csv_path}"]
    return lines, outputs.html_path
