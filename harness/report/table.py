"""The plain-text curve table: one row per concurrency point."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from harness.report.load import PointResult, load_results, parse_result

COLUMNS = ("conc", "tok/s/GPU", "E2EL p50 (s)", "E2EL p90 (s)", "TTFT p50 (s)", "errors", "verdict")


def as_points(results: Iterable[PointResult | Mapping[str, Any] | Path | str]) -> list[PointResult]:
    """Accept parsed points, result dicts, result files or run directories alike."""
    points: list[PointResult] = []
    for r in results:
        if isinstance(r, PointResult):
            points.append(r)
        elif isinstance(r, Mapping):
            points.append(parse_result(r, Path(str(r.get("config_key", "result")) + ".json")))
        else:
            points.extend(load_results([Path(r)]))
    return points


def fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def verdict(p: PointResult) -> str:
    if p.valid:
        return "valid"
    codes = ",".join(r.code for r in p.invalid_reasons) or "unspecified"
    return f"INVALID ({codes})"


def table_rows(points: Iterable[PointResult]) -> list[tuple[str, ...]]:
    return [
        (
            str(p.conc),
            fmt(p.total_tput_per_gpu, 1),
            fmt(p.stat("e2el", "p50")),
            fmt(p.stat("e2el", "p90")),
            fmt(p.stat("ttft", "p50")),
            fmt(p.errors),
            verdict(p),
        )
        for p in sorted(points, key=lambda p: p.conc)
    ]


def render_table(results: Iterable[PointResult | Mapping[str, Any] | Path | str]) -> str:
    """A fixed-width table sorted by concurrency; numbers right-aligned, the verdict left-aligned."""
    rows = table_rows(as_points(results))
    widths = [max(len(COLUMNS[i]), *(len(r[i]) for r in rows)) for i in range(len(COLUMNS))]

    def line(cells: tuple[str, ...]) -> str:
        parts = [c.rjust(w) for c, w in zip(cells[:-1], widths[:-1])] + [cells[-1]]
        return "  ".join(parts).rstrip()

    return "\n".join([line(COLUMNS), *(line(r) for r in rows)]) + "\n"
