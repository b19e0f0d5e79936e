"""`build_report`: result files in, report files out (JSON, PNGs, HTML, markdown)."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from harness.artifacts import staged_dir, write_json, write_text
from harness.errors import UserError
from harness.inspect.write import inspect_points
from harness.recipe.pricing import Price
from harness.recipe.request_slo import RequestSlo
from harness.report.analysis.curves import FRONTIER_AXES, Curve, group_curves
from harness.report.analysis.goodput import judge
from harness.report.analysis.report_json import report_json
from harness.report.render.cost_plot import plot_cost_frontier
from harness.report.render.csv_export import render_csv
from harness.report.render.html import render_html
from harness.report.render.markdown import render_markdown
from harness.report.render.plots import Positions, Quantiles, plot_latency_by_conc, plot_pareto, sample_quantiles
from harness.report.results.evals import EvalSummary, eval_html, eval_json, eval_markdown, newest_evals
from harness.report.results.load import PointResult
from harness.report.results.points import load_results_noted
from harness.report.results.repeats import repeat_block
from harness.report.results.samples import load_request_samples, record_file


@dataclass(frozen=True)
class ReportOutputs:
    """Where the report went, and the curves it was built from."""

    png_paths: list[Path]
    html_path: Path
    markdown_path: Path
    json_path: Path
    csv_path: Path
    curves: list[Curve]
    evals: dict[str, EvalSummary] = field(default_factory=dict)   # config_key -> its newest accuracy eval
    notes: list[str] = field(default_factory=list)   # e.g. fixed-sequence rows skipped in an agg_*.json


Distributions = dict[tuple[int, int], tuple[Quantiles | None, Quantiles | None]]


def distributions(curves: list[Curve]) -> Distributions:
    """(curve index, point index) -> (TTFT, E2EL) quantiles, for points with a per-request file beside them."""
    with reading_distributions(curves) as result:
        return result()


@contextmanager
def reading_distributions(curves: list[Curve]) -> Iterator[Callable[[], Distributions]]:
    """Start reading the points' per-request files (the bulk of a large report's time) in worker processes,
    one per CPU, while the caller draws what does not need them; the callable waits for the quantiles."""
    jobs = [((i, j), path) for i, c in enumerate(curves) for j, p in enumerate(c.points)
            if (path := record_file(p.point_dir)) is not None]
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if min(len(jobs), cpus) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield lambda: {key: _point_quantiles(path) for key, path in jobs}
        return
    with ProcessPoolExecutor(min(len(jobs), cpus), mp_context=multiprocessing.get_context("fork"),
                             initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        futures = [(key, pool.submit(_point_quantiles, path)) for key, path in jobs]
        yield lambda: {key: future.result() for key, future in futures}


_PR_SET_PDEATHSIG = 1   # <linux/prctl.h>


def die_with_parent(parent: int) -> None:
    """A worker's initializer: on Linux the worker is sent SIGKILL when `parent` (the process that started it)
    dies, by SIGKILL or otherwise, so a killed report leaves no worker holding its caller's pipes; a worker whose
    parent died before this ran exits at once."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        os._exit(1)


def _point_quantiles(path: Path) -> tuple[Quantiles | None, Quantiles | None]:
    return sample_quantiles(load_request_samples(path))


def build_report(run_dirs: list[Path], out_dir: Path, *, with_records: bool = True,
                 slo: RequestSlo | None = None, price: Price | None = None) -> ReportOutputs:
    """Read every result under `run_dirs` and write report.json, report.md, report.html and the PNGs
    (pareto.png: throughput/GPU vs E2EL p90; pareto_<axis>.png for the other axes; latency_by_conc.png; with a
    price, cost_frontier.png). `slo` and `price` judge every point anew (`harness.report.analysis.goodput`)."""
    run_dirs = [Path(d) for d in run_dirs]
    points, notes = load_results_noted(run_dirs)
    if not points:
        raise UserError(
            f"{', '.join(map(str, run_dirs))}: no result files found (expected bmk_agentic_*.json or "
            "InferenceX agentic aggregates somewhere below)"
        )
    points, judged = judge(points, slo, price)
    notes += judged
    curves = group_curves(points)
    final = Path(out_dir)
    if final.exists() and not final.is_dir():
        raise UserError(f"--out {final}: not a directory")
    with staged_dir(final, "report", merge=True) as out_dir:   # moved into --out only when every file is written
        pngs, evals = _write_report(run_dirs, out_dir, curves, notes, with_records)
    return ReportOutputs(png_paths=[final / p.name for p in pngs], html_path=final / "report.html",
                         markdown_path=final / "report.md", json_path=final / "report.json",
                         csv_path=final / "report.csv", curves=curves, evals=evals, notes=notes)


def write_inspect_pages(curves: list[Curve], out_dir: Path, notes: list[str]) -> dict[tuple[int, int], str]:
    """Each point's inspect page (`harness.inspect`) and its JSON twin under `out_dir/inspect/`; the link of each,
    relative to the report. A point without a directory of its own (an InferenceX row) has none; one whose files
    cannot be read gets a note instead."""
    links: dict[tuple[int, int], str] = {}
    for i, c in enumerate(curves):
        for j, p in enumerate(c.points):
            pdir = p.point_dir
            if not ((pdir / "status.json").exists() or (pdir / "point_result.json").exists()):
                continue
            name = page_name(p)
            try:
                inspect_points(pdir, out=out_dir / "inspect" / name)
            except UserError as exc:
                notes.append(f"no inspect page for {c.ids[j]} of {c.key}: {exc}")
                continue
            links[(i, j)] = f"inspect/{name}"
    return links


def page_name(p: PointResult) -> str:
    """`<config key>[--<variant>]_conc<N>.html`, safe as one file name."""
    raw = f"{p.config_key}{'--' + p.variant if p.variant else ''}_conc{p.conc}"
    return re.sub(r"[^A-Za-z0-9._=,+-]", "_", raw)[:180] + ".html"


def _write_report(run_dirs: list[Path], out_dir: Path, curves: list[Curve], notes: list[str],
                  with_records: bool) -> tuple[list[Path], dict[str, EvalSummary]]:
    """Write the report's files into `out_dir`; the PNGs written and the evals shown."""
    positions: dict[str, Positions] = {}
    with reading_distributions(curves if with_records else []) as read_distributions:
        names = ["pareto.png", *(f"pareto_{a.name}.png" for a in FRONTIER_AXES[1:])]
        pngs = [plot_pareto(curves, out_dir / name, a, positions.setdefault(name, {}))
                for name, a in zip(names, FRONTIER_AXES)]
        links = write_inspect_pages(curves, out_dir, notes) if with_records else {}
        dist = read_distributions()
    pngs.append(plot_latency_by_conc(curves, out_dir / "latency_by_conc.png", dist))
    if any(p.cost for c in curves for p in c.points):
        pngs.append(plot_cost_frontier(curves, out_dir / "cost_frontier.png"))

    evals = newest_evals(run_dirs)
    keys = {k: all(c.simulated for c in curves if k in c.config_keys)   # config key -> only simulated curves
            for k in dict.fromkeys(k for c in curves for k in c.config_keys)}
    write_json(out_dir / "report.json",
               {**report_json(curves), "evals": {k: eval_json(evals.get(k)) for k in keys}, "notes": notes})
    write_text(out_dir / "report.md", render_markdown(curves, [p.name for p in pngs]) + "\n" + eval_markdown(keys, evals))
    repeats = {(i, j): block for i, c in enumerate(curves) for j, p in enumerate(c.points)
               if p.recorded and (block := repeat_block(p.point_dir)) is not None}
    page = render_html(curves, pngs, links=links, positions=positions, repeats=repeats)
    page = page.replace("</body>", eval_html(keys, evals) + "</body>", 1)
    write_text(out_dir / "report.html", page)

    write_text(out_dir / "report.csv", render_csv(curves))
    return pngs, evals
