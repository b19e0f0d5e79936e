"""`harness compare A B [--json] [--allow-mixed] [--resolve PCT]`: per point, old (A) -> new (B), with a
bootstrap interval of B - A for each latency percentile from the points' per-request records (all runs of a
point run with `--repeat N`), and for a change within noise the requests (and `--duration`) that would
resolve a change of PCT percent.

`harness compare RUN --variant NAME`: the recipe's own points of RUN (A) against the tuned variant NAME (B),
each variant point paired with its baseline point.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.artifacts import print_json

if TYPE_CHECKING:
    from harness.report.analysis.compare import CurveComparison
    from harness.report.analysis.spread import Spread
    from harness.report.results.load import PointResult
    from harness.report.results.samples import RequestSamples


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", type=Path, metavar="A", help="the old run: a directory (searched recursively) or a result file")
    parser.add_argument("b", type=Path, metavar="B", nargs="?",
                        help="the new run: a directory (searched recursively) or a result file")
    parser.add_argument("--variant", metavar="NAME",
                        help="compare the tuned variant NAME of run A (variants/NAME/) with A's baseline points")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--resolve", type=_percent, default=5.0, metavar="PCT",
                        help="for a change within noise, say how many requests per side (and what --duration) "
                             "would resolve a change of PCT percent of A's percentile (default 5)")
    parser.add_argument("--allow-mixed", action="store_true",
                        help="allow simulated and real results, different images or different arms (speculative "
                             "decoding, KV offloading, DP attention, disaggregation shape, recipe fingerprint) "
                             "in one compared curve; the output names what differs")
    from harness.commands.running.judging import add_price_options, add_slo_option

    add_slo_option(parser, "judge both sides' points at this per-request SLO, recomputed from their per-request "
                           "records (e.g. 'ttft<=0.5,e2el<=10'): attainment (95%% Wilson intervals) and goodput")
    add_price_options(parser)


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage such as 5") from None
    if not 0 < value <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage above 0 and at most 1000")
    return value


def main(args: argparse.Namespace) -> int:
    from harness.commands.running.judging import price_of, slo_of
    from harness.errors import UserError
    from harness.report.analysis.compare import (
        compare_points,
        comparison_json,
        render_comparison,
        variant_sides,
        with_noise,
    )
    from harness.report.analysis.compare_goodput import goodput_lines, goodput_pair_json
    from harness.report.analysis.goodput import judge
    from harness.report.results.points import load_results_noted

    if (args.b is None) == (args.variant is None):
        raise UserError("compare: give two runs (A B) or one run and --variant NAME")
    slo, price = slo_of(args), price_of(args)
    sides = []
    notes: list[str] = []
    for name, path in (("A", args.a), ("B", args.b)) if args.b is not None else (("A", args.a),):
        points, side_notes = load_results_noted([path])
        if not points:
            raise UserError(f"{path}: no result files found for {name} (expected bmk_agentic_*.json below it)")
        points, judged = judge(points, slo, price, f"{name}: ")
        sides.append(points)
        notes += [f"{name}: {n}" for n in side_notes] + judged
    if args.variant is not None:
        sides = list(variant_sides(sides[0], args.variant))
        if not args.json:
            print(f"A = {args.a} as the recipe is written; B = its variant {args.variant}")
    # A variant is compared with its own recipe on purpose: the arms it changes are named, not refused.
    comparisons, only_a, only_b = compare_points(sides[0], sides[1],
                                                 allow_mixed=args.allow_mixed or args.variant is not None)
    comparisons = with_noise(comparisons, _samples_of)
    repeats = [[(_repeat_spreads(d.old), _repeat_spreads(d.new)) for d in c.changed] for c in comparisons]
    if args.json:
        body = comparison_json(comparisons, only_a, only_b, args.resolve)
        for c_json, c_repeats in zip(body["comparisons"], repeats):
            for p_json, (a, b) in zip(c_json["points"], c_repeats):
                p_json["repeats"] = {"a": _repeats_json(a), "b": _repeats_json(b)}
        for c_json, c in zip(body["comparisons"], comparisons):
            for p_json, d in zip(c_json["points"], c.changed):
                p_json["goodput"] = goodput_pair_json(d.old, d.new)
        print_json({"schema_version": 1, **body, "notes": notes})
    else:
        for n in notes:
            print(f"note: {n}")
        print(render_comparison(comparisons, only_a, only_b, variant=args.variant is not None,
                                resolve_pct=args.resolve), end="")
        print(_repeat_lines(comparisons, repeats), end="")
        print(goodput_lines(comparisons), end="")
    return 0


def _repeat_spreads(point: PointResult) -> list[Spread]:
    """Each metric of a point over its repeated runs (`harness.report.results.repeats`), for the Student-t interval of
    its mean; empty for a point run once."""
    from harness.report.analysis.spread import spreads
    from harness.report.results.repeats import repeat_records

    records = repeat_records(point.point_dir)
    return spreads(records) if records else []


def _repeats_json(rows: list[Spread]) -> dict[str, Any] | None:
    from harness.report.analysis.spread import repeats_json

    return None if not rows else repeats_json(rows, len(rows[0].values), [])["metrics"]


def _repeat_lines(comparisons: list[CurveComparison], repeats: list[list[tuple[list[Spread], list[Spread]]]]) -> str:
    """Per point run more than once on a side: each metric's mean with its Student-t 95 % interval, A and B."""
    from harness.report.analysis.spread import INTERVALS_TITLE, interval_lines

    lines = [line for c, c_repeats in zip(comparisons, repeats) for d, sides in zip(c.changed, c_repeats)
             for side, rows in zip("AB", sides) for line in interval_lines(f"c{d.conc} {side}", rows)]
    return "" if not lines else "\n" + INTERVALS_TITLE + "\n" + "\n".join(lines) + "\n"


def _samples_of(point: PointResult) -> list[RequestSamples] | None:
    """The per-request samples of each run of a point (its repeats, `harness.report.results.repeats`), or None when
    it has no per-request records."""
    from harness.report.results.repeats import run_samples

    return run_samples(point.point_dir, _run_samples) or None


def _run_samples(run_dir: Path) -> RequestSamples | None:
    from harness.report.results.samples import load_request_samples, record_file

    path = record_file(run_dir)
    return None if path is None else load_request_samples(path)
