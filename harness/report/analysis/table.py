"""The plain-text curve table: one row per point, named by its identity in the curve."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.report.analysis.curves import Curve
from harness.report.analysis.goodput import render_goodput
from harness.report.analysis.thin import marked, thin_note
from harness.report.results.attributes import describe
from harness.report.results.load import PointResult, parse_result
from harness.report.results.points import load_results

# One vocabulary for throughput in every table the CLI prints (`harness.vocabulary`).
from harness.vocabulary import OUTPUT_PER_GPU as OUTPUT_PER_GPU
from harness.vocabulary import TOTAL_PER_GPU as TOTAL_PER_GPU

SIMULATED = "SIMULATED"

COLUMNS = ("conc", TOTAL_PER_GPU, OUTPUT_PER_GPU, "E2EL p50 (s)", "E2EL p90 (s)", "TTFT p50 (s)", "errors",
           "verdict")


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
    """`valid` or `INVALID (codes)`, then whether it may be published when the record says it
    (`valid; unofficial (AIPerf: unsafe_override)`)."""
    publish = f"; {p.publish_label}" if p.publish_label else ""
    if p.valid:
        return "valid" + publish
    codes = ",".join(r.code for r in p.invalid_reasons) or "unspecified"
    return f"INVALID ({codes})" + publish


def curve_title(c: Curve) -> str:
    """`quickstart-sim [tuned]  SIMULATED  image ...  overrides: ...` — the title over a curve's table."""
    parts = [c.titled]
    if c.simulated:
        parts.append(f"{SIMULATED} (engine {c.engine}; not hardware measurements)")
    if c.engine_label:
        parts.append(f"{c.engine_label.upper()} ({c.engine_label}; not GPU numbers)")
    parts.append(f"image {c.image or 'unknown'}")
    if c.variant:
        parts.append("overrides: " + (", ".join(c.overrides) or "none"))
    return "  ".join(parts)


def curve_notes(c: Curve) -> list[str]:
    """The point attributes the curve's points share and those that vary (`harness.report.results.attributes`), the
    `--note`s of its points, once each, and the harness commits that produced them."""

    notes = list(dict.fromkeys(p.note for p in c.points if p.note))
    commits = list(dict.fromkeys(p.harness_commit for p in c.points if p.harness_commit))
    out = describe(c.points)
    out += [f"note: {n}" for n in notes]
    if commits:
        out.append("harness commit: " + ", ".join(commits))
    return out


def conc_cells(c: Curve) -> list[str]:
    """The conc column of a curve's tables: each point's identity without its `c` (`24 (kv dram)`), marked where
    its place on the curve rests on little (`harness.report.analysis.thin`)."""

    return [marked(pid[1:], p) for pid, p in c.labelled()]


def render_curve(c: Curve) -> str:
    """A curve's title line, its notes, its table and the note on its marked points."""

    note = thin_note(c.labelled())
    return ("\n".join([f"== {curve_title(c)}", *curve_notes(c)]) + "\n" + render_table(c.points, conc_cells(c))
            + (note + "\n" if note else "") + render_goodput(list(zip(conc_cells(c), c.points))))


def ordered(points: Iterable[PointResult], cells: Sequence[str] | None) -> list[tuple[str, PointResult]]:
    """(conc cell, point): in the given order with `cells`, else by concurrency with the bare concurrency."""
    if cells is None:
        return [(str(p.conc), p) for p in sorted(points, key=lambda p: p.conc)]
    return list(zip(cells, points))


def table_rows(points: Iterable[PointResult], cells: Sequence[str] | None = None) -> list[tuple[str, ...]]:
    """One row per point; `cells` (parallel to `points`) names each point in the conc column."""
    return [
        (
            cell,
            fmt(p.total_tput_per_gpu, 1),
            fmt(p.output_tput_per_gpu, 1),
            fmt(p.stat("e2el", "p50")),
            fmt(p.stat("e2el", "p90")),
            fmt(p.stat("ttft", "p50")),
            fmt(p.errors),
            verdict(p),
        )
        for cell, p in ordered(points, cells)
    ]


def render_table(results: Iterable[PointResult | Mapping[str, Any] | Path | str],
                 cells: Sequence[str] | None = None) -> str:
    """A fixed-width table, sorted by concurrency unless `cells` names the points in their given order;
    numbers right-aligned, the verdict left-aligned."""
    rows = table_rows(as_points(results), cells)
    widths = [max(len(COLUMNS[i]), *(len(r[i]) for r in rows)) for i in range(len(COLUMNS))]

    def line(cells: tuple[str, ...]) -> str:
        parts = [c.rjust(w) for c, w in zip(cells[:-1], widths[:-1])] + [cells[-1]]
        return "  ".join(parts).rstrip()

    return "\n".join([line(COLUMNS), *(line(r) for r in rows)]) + "\n"
