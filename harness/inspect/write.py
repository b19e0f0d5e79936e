"""Write a point's inspect page and its JSON twin (the same name ending in `.json`, every series the page draws).

The twin is written first (compact JSON, redacted by `harness.artifacts.write_bulk_json`: a long point's is tens of
MB), and the page is drawn from what was written, so it shows nothing the twin does not."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.artifacts import write_bulk_json, write_bytes
from harness.inspect.findings import contrast
from harness.inspect.page import render_page
from harness.inspect.view import VIEW_SCHEMA_VERSION, PointView, build_view, view_of

PAGE_NAME = "inspect.html"
BULK = ("series", "requests", "time_split")   # numbers, and the identifiers of AIPerf's and the simulator's records


@dataclass(frozen=True)
class Inspected:
    html_path: Path
    json_path: Path
    views: list[PointView]     # as written
    contrast: list[str]


def default_page(point_dir: Path, vs: Path | None) -> Path:
    """`POINT/inspect.html`, or `POINT/inspect_vs_<other's directory name>.html`."""
    return Path(point_dir) / (PAGE_NAME if vs is None else f"inspect_vs_{Path(vs).name}.html")


def inspect_points(point_dir: Path, vs: Path | None = None, out: Path | None = None) -> Inspected:
    views = [build_view(point_dir)] + ([build_view(vs)] if vs is not None else [])
    lines = contrast(views[0].label, views[0].facts, views[1].label, views[1].facts) if len(views) == 2 else []
    html_path = Path(out) if out is not None else default_page(point_dir, vs)
    json_path = html_path.with_suffix(".json")
    twin = write_bulk_json(json_path, {"schema_version": VIEW_SCHEMA_VERSION, "points": [v.data for v in views],
                                       "contrast": lines}, BULK)
    write_bytes(html_path, render_page(twin).encode())
    return Inspected(html_path, json_path, [view_of(d) for d in twin["points"]], twin["contrast"])
