"""`harness report RUN_DIR... [--out DIR] [--json]`: tables, Pareto frontiers, plots and HTML."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from harness.artifacts import print_json

if TYPE_CHECKING:
    from harness.report.analysis.curves import Curve


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR",
                        help="directories searched recursively for result files (or result files themselves)")
    parser.add_argument("--out", type=Path, default=None,
                        help="where to write the report (default: RUN_DIR/report for one directory, "
                             "./report otherwise)")
    parser.add_argument("--json", action="store_true", help="print the report JSON on stdout instead of tables")
    parser.add_argument("--no-records", action="store_true",
                        help="do not read per-request files (no latency distributions in the plots)")
    from harness.commands.running.judging import add_price_options, add_slo_option

    add_slo_option(parser, "judge every point at this per-request SLO, recomputed from its per-request records "
                           "(e.g. 'ttft<=0.5,e2el<=10,intvty>=20'): attainment and goodput per point")
    add_price_options(parser)


def default_out(run_dirs: list[Path]) -> Path:
    if len(run_dirs) == 1 and run_dirs[0].is_dir():
        return run_dirs[0] / "report"
    return Path("report")


def main(args: argparse.Namespace) -> int:
    from harness.commands.running.judging import price_of, slo_of
    from harness.report import build_report
    from harness.report.analysis.curves import CURVE_DEFINITION
    from harness.report.analysis.report_json import report_json
    from harness.report.analysis.table import render_curve
    from harness.report.render.markdown import coverage_lines
    from harness.report.render.plain import plain
    from harness.report.results.evals import eval_lines

    out_dir = args.out or default_out(args.run_dirs)
    outputs = build_report(args.run_dirs, out_dir, with_records=not args.no_records, slo=slo_of(args),
                           price=price_of(args))
    if args.json:
        from harness.report.results.evals import eval_json

        evals = {k: eval_json(outputs.evals.get(k)) for c in outputs.curves for k in c.config_keys}
        print_json({**report_json(outputs.curves), "evals": evals, "notes": outputs.notes})
        _store(args, sys.stderr)
        return 0
    lines = [CURVE_DEFINITION, *(f"note: {n}" for n in outputs.notes)]
    for c in outputs.curves:
        lines.append(render_curve(c).rstrip("\n"))
        lines.append("Pareto coverage:")
        lines += ["  " + line[2:] for line in coverage_lines(c)]
        lines += [f"warning: {w}" for w in c.warnings]
        lines += eval_lines(c.config_keys, outputs.evals, c.simulated)
        lines.append("")
    print("\n".join(plain(line) for line in lines))   # the lines shared with report.md, without their Markdown
    if not any(p.cost for c in outputs.curves for p in c.points):
        from harness.point.record.cost import HOW_TO_PRICE

        print(HOW_TO_PRICE)
    repeats = _repeat_lines(outputs.curves)
    if repeats:
        print(repeats)
    print(f"report: {outputs.html_path}")
    print(f"markdown: {outputs.markdown_path}")
    print(f"json: {outputs.json_path}")
    print(f"csv: {outputs.csv_path}")
    _store(args, sys.stdout)
    return 0


def _repeat_lines(curves: list[Curve]) -> str:
    """Each point run with `--repeat N`: its metrics' means over the runs with their Student-t 95 % intervals."""
    from harness.report.analysis.spread import INTERVALS_TITLE, interval_lines, spreads
    from harness.report.results.repeats import repeat_records

    lines = []
    for c in curves:
        for p in c.points:
            records = repeat_records(p.point_dir) if p.recorded else []
            lines += interval_lines(f"{p.config_key or p.curve_key} c{p.conc}", spreads(records)) if records else []
    return "" if not lines else INTERVALS_TITLE + "\n" + "\n".join(lines) + "\n"


def _store(args: argparse.Namespace, out: TextIO) -> None:
    """The run directories reported on, into the results store in use (`HARNESS_DB=off` skips it)."""
    from harness.store.auto import ingest_after

    ingest_after([Path(p) for p in args.run_dirs], out=out)
