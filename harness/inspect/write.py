"""Write a point's inspect page and its JSON twin (the same name ending in `.json`, every series the page draws).

Both are written from redacted data: the point's own settings, names and notes as every artifact of the harness
(`harness.redact.redact_data`); the bulk (numeric series, and the request timeline's identifiers and error words
from AIPerf's records) string by string, each distinct string once. The twin is compact JSON: a long point's is tens
of MB."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.artifacts import write_bytes
from harness.inspect.findings import contrast
from harness.inspect.page import render_page
from harness.inspect.view import VIEW_SCHEMA_VERSION, PointView, build_view
from harness.redact import redact_data, redact_text

PAGE_NAME = "inspect.html"
_BULK = ("series", "requests", "time_split")


@dataclass(frozen=True)
class Inspected:
    html_path: Path
    json_path: Path
    views: list[PointView]
    contrast: list[str]


def default_page(point_dir: Path, vs: Path | None) -> Path:
    """`POINT/inspect.html`, or `POINT/inspect_vs_<other's directory name>.html`."""
    return Path(point_dir) / (PAGE_NAME if vs is None else f"inspect_vs_{Path(vs).name}.html")


@lru_cache(maxsize=65536)
def _text(value: str) -> str:
    return redact_text(value)


def _strings(value: Any) -> Any:
    """`value` with every string redacted as free text (numbers and structure as they are)."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {k: _strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return value if not value or not isinstance(value[0], (str, dict, list)) else [_strings(v) for v in value]
    return value


def redacted(view: PointView) -> PointView:
    """The view as it may leave the process."""
    small = redact_data({k: v for k, v in view.data.items() if k not in _BULK})
    bulk = {k: _strings(view.data[k]) for k in _BULK if k in view.data}
    return replace(view, data={**small, **bulk}, facts=redact_data(view.facts),
                   findings=[replace(f, text=redact_text(f.text), source=redact_text(f.source)) for f in view.findings])


def inspect_points(point_dir: Path, vs: Path | None = None, out: Path | None = None) -> Inspected:
    views = [redacted(build_view(point_dir))] + ([redacted(build_view(vs))] if vs is not None else [])
    lines = contrast(views[0].label, views[0].facts, views[1].label, views[1].facts) if len(views) == 2 else []
    html_path = Path(out) if out is not None else default_page(point_dir, vs)
    json_path = html_path.with_suffix(".json")
    twin = {"schema_version": VIEW_SCHEMA_VERSION, "points": [v.data for v in views], "contrast": lines}
    write_bytes(json_path, json.dumps(twin, separators=(",", ":"), ensure_ascii=False).encode())
    write_bytes(html_path, render_page(views).encode())
    return Inspected(html_path, json_path, views, lines)
