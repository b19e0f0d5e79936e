"""`harness search RECIPE --slo EXPR`: the highest concurrency that meets a service level, and the capacity
there (agents per GPU, per node, per kW), its points on this host one at a time or, with `--cluster`, on Slurm
in rounds (`search_cluster`). See docs/search.md."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.point.run import PointOptions
    from harness.recipe.plan import PointPlan
    from harness.recipe.schema import Point, Recipe
    from harness.search.driver import Budget, SearchRun
    from harness.search.outcome import SearchSpec
    from harness.search.slo import Slo
    from harness.search.tested import TestedPoint


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.commands.running.run import add_point_options

    add_point_options(parser)
    parser.add_argument("--slo", action="append", required=True, metavar="EXPR",
                        help="a row metric, a comparison and a value, e.g. ttft_p90<=10 or intvty_p90>=20, or "
                             "attainment>=0.95 (the share of requests meeting per-request bounds, given as "
                             "another --slo 'ttft<=0.5,e2el<=10' or in the recipe) (repeatable: a point meets "
                             "the SLO when it is valid and every one holds)")
    parser.add_argument("--min-conc", type=_conc, default=1, metavar="N", help="lowest concurrency (default: 1)")
    parser.add_argument("--max-conc", type=_conc, default=256, metavar="N",
                        help="highest concurrency (default: 256)")
    parser.add_argument("--max-points", type=_count, default=DEFAULT_MAX_POINTS, metavar="N",
                        help="tests the search may run in all, re-tests of inconclusive points included; when they "
                             f"are spent the answer says where the boundary lies (default: {DEFAULT_MAX_POINTS})")
    parser.add_argument("--max-hours", type=_hours, metavar="H",
                        help="start no test after H hours; the answer then says where the boundary lies "
                             "(default: no bound)")
    parser.add_argument("--min-achieved-ratio", type=_ratio, default=None, metavar="R",
                        help="a point whose achieved concurrency is below R of its target is inconclusive "
                             "(default: 0.7)")
    parser.add_argument("--point-template", metavar="NAME",
                        help="take every tested point's settings from this recipe point, e.g. c8 (default: the "
                             "recipe's point nearest each concurrency)")
    from harness.commands.running import search_cluster

    search_cluster.add_arguments(parser)


DEFAULT_MAX_POINTS = 20


def _count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"expected a number of points from 1 to 1000, got {text!r}")
    return int(text)


def _hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 10_000:
        raise argparse.ArgumentTypeError(f"expected a number of hours above 0, got {text!r}")
    return value


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a ratio from 0 to 1, got {text!r}")
    return value


def _conc(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 100_000:
        raise argparse.ArgumentTypeError(f"expected a concurrency from 1 to 100000, got {text!r}")
    return int(text)


def main(args: argparse.Namespace) -> int:
    import dataclasses

    from harness.commands.running import search_cluster
    from harness.commands.running.judging import price_of, slo_of
    from harness.commands.running.run import check_out_dir, options_from_args, overrides_with_duration
    from harness.errors import UserError
    from harness.point.state.variant import variant_name
    from harness.recipe.load import load_recipe
    from harness.recipe.points import apply_overrides
    from harness.search.candidate import plan_at
    from harness.search.driver import run_rounds, run_search
    from harness.search.progress import Progress
    from harness.search.slo import ATTAINMENT, parse_slos

    slos = parse_slos(split_slos(args))
    if args.max_conc < args.min_conc:
        raise UserError(f"--max-conc {args.max_conc} is below --min-conc {args.min_conc}")
    search_cluster.check_args(args)
    base = load_recipe(args.recipe)
    if args.unofficial:
        base = base.model_copy(update={"client": base.client.model_copy(update={"unofficial": True})})
    recipe, points = apply_overrides(base, None, overrides_with_duration(args), args.recipe)
    request_slo = slo_of(args, recipe)
    if request_slo is None and any(s.metric == ATTAINMENT for s in slos):
        raise UserError("--slo attainment: needs per-request bounds, e.g. --slo 'ttft<=0.5,e2el<=10' (or slo: in "
                        "the recipe)")
    first = plan_at(recipe, points, args.min_conc, args.point_template, args.recipe)   # every input error now
    if args.cluster:
        profile = search_cluster.load_cluster(args, recipe, first)
        variant = variant_name(overrides_with_duration(args), args.tag)
    else:
        options = options_from_args(args, recipe)
        variant = options.variant
    check_out_dir(args.out)
    spec = _spec(args, recipe, first, slos, variant)
    price = price_of(args, recipe)
    if price is None and args.cluster and profile.pricing is not None:
        price = profile.pricing.price()   # on Slurm: the cluster profile's price, as its points' records have it
    spec = dataclasses.replace(spec, request_slo=None if request_slo is None else request_slo.text, price=price)
    out_file = search_dir(args.out, recipe.config_key, variant, slos, spec.request_slo) / "search.json"
    where = ""
    if args.cluster:
        width = search_cluster.round_size(args, profile)
        where = f" on {profile.name}, up to {width} per round"
    print(f"search: {' and '.join(s.text for s in slos)} over c{args.min_conc}..c{args.max_conc}{where} -> "
          f"{out_file}", flush=True)
    stop: list[int] = []
    rounds: list[dict[str, Any]] = []
    extra: dict[str, Any] = {"cluster": profile.name, "rounds": rounds} if args.cluster else {}
    budget = _budget(args)

    def test(conc: int, attempt: int) -> TestedPoint | None:
        at_recipe, at_points, at_options = (recipe, points, options) if attempt == 1 else \
            _retest_setting(args, base, recipe.client.duration_s, attempt)
        plan = plan_at(at_recipe, at_points, conc, args.point_template, args.recipe)
        if attempt > 1:
            print(f"[search] c{conc}: inconclusive; test {attempt} of {budget.attempts}: a "
                  f"{at_recipe.client.duration_s:g} s window{' again, on a fresh server' if attempt > 2 else ''}",
                  flush=True)
        return _test_point(args, at_recipe, plan, at_options, slos, stop)

    def write(run: SearchRun) -> dict[str, Any]:
        """search.json, the capacity counted on the boundary point's own GPUs and nodes."""
        import dataclasses

        at = run.state.boundary
        plan = first if at is None else plan_at(recipe, points, at, args.point_template, args.recipe)
        return _write(out_file, dataclasses.replace(spec, num_gpus=plan.resources.num_gpus,
                                                    nodes=plan.resources.nodes), run, extra)

    if args.cluster:
        test_round = search_cluster.round_tester(args, base, recipe, points, slos, variant, rounds, stop)
        progress = Progress()
        run = run_rounds(args.min_conc, args.max_conc, width, test_round, write, budget,
                         lambda count: print(f"[search] {progress.text(count)}", flush=True))
    else:
        progress = Progress()
        run = run_search(args.min_conc, args.max_conc, test, write, budget,
                         lambda count, conc: print(progress.line(count, conc), flush=True))
    doc = write(run)
    from harness.search.outcome import render_summary
    from harness.search.plot import PLOT_FILE, plot_search

    print()
    print(render_summary(doc), end="")
    print(f"search: {out_file}")
    if doc["points"]:
        print(f"plot:   {plot_search(doc, out_file.parent / PLOT_FILE, simulated=recipe.engine == 'sim')}")
    return stop[0] if stop else 0


def _budget(args: argparse.Namespace) -> Budget:
    """`--max-points` and `--max-hours` (counted from now) as the search's budget."""
    import time

    from harness.search.driver import Budget

    t0 = time.monotonic()
    hours = args.max_hours

    def out_of_time() -> str | None:
        if hours is not None and time.monotonic() - t0 >= hours * 3600.0:
            return f"--max-hours {hours:g} spent"
        return None

    return Budget(max_points=args.max_points, out_of_time=out_of_time)


def _retest_setting(args: argparse.Namespace, base: Recipe, window_s: float,
                    attempt: int) -> tuple[Recipe, list[Point], PointOptions]:
    """The setting of an inconclusive point's re-test (`search_cluster.retest_setting`, the same on Slurm), with
    the options of its point run here."""
    import dataclasses

    from harness.commands.running.run import options_from_args
    from harness.commands.running.search_cluster import retest_setting

    recipe, points, _, variant = retest_setting(args, base, window_s, attempt)
    options = options_from_args(argparse.Namespace(**{**vars(args), "duration": 2 * window_s}), recipe)
    return recipe, points, dataclasses.replace(options, variant=variant)


def split_slos(args: argparse.Namespace) -> list[str]:
    """The `--slo`s that are conditions on a point (`ttft_p90<=2`, `attainment>=0.95`); per-request bounds among
    them (`ttft<=0.5,e2el<=10`) go to `args.request_slo`, joined (`harness.commands.running.judging.slo_of`)."""
    from harness.errors import UserError
    from harness.recipe.request_slo import is_request_bound

    bounds = [t for t in args.slo if is_request_bound(t)]
    args.request_slo = ",".join(bounds) if bounds else None
    conditions = [t for t in args.slo if not is_request_bound(t)]
    if not conditions:
        raise UserError("--slo: per-request bounds alone set no condition on a point; add one, e.g. "
                        "--slo attainment>=0.95 or --slo ttft_p90<=2")
    return conditions


def search_dir(out: Path, config_key: str, variant: str | None, slos: list[Slo],
               request_slo: str | None = None) -> Path:
    """`<out>/<config_key>[/variants/<v>]/searches/<the SLO as a name>`: beside the points it tested (with an
    attainment condition, the per-request bounds are part of the name)."""
    from harness.point.state.variant import VARIANTS_DIR

    base = out / config_key / VARIANTS_DIR / variant if variant else out / config_key
    words = {"<=": "le", ">=": "ge", "<": "lt", ">": "gt"}
    name = "_".join(f"{s.name}-{words[s.op]}-{s.value:g}" for s in slos)
    if request_slo and any(s.stat == "" for s in slos):
        name += "_at_" + request_slo
    return base / "searches" / re.sub(r"[^A-Za-z0-9._=-]", "_", name)


def _spec(args: argparse.Namespace, recipe: Recipe, plan: PointPlan, slos: list[Slo],
          variant: str | None) -> SearchSpec:
    from harness.search.outcome import SearchSpec

    return SearchSpec(recipe=str(args.recipe), config_key=recipe.config_key, variant=variant, slos=tuple(slos),
                      min_conc=args.min_conc, max_conc=args.max_conc, num_gpus=plan.resources.num_gpus,
                      nodes=plan.resources.nodes)


def _test_point(args: argparse.Namespace, recipe: Recipe, plan: PointPlan, options: PointOptions,
                slos: list[Slo], stop: list[int]) -> TestedPoint | None:
    """One point on a fresh server (or the completed one of the same settings), read back as its outcome; None
    when the search must stop (its exit status is put in `stop`)."""
    from harness.commands.running.run import local_preflight
    from harness.point.record.result import point_dir
    from harness.point.sequence import run_sequence
    from harness.point.state.ownership import check_free
    from harness.recipe.points import check_placeable
    from harness.search.tested import achieved_ratio, read_tested, tested_line

    check_placeable([plan], options.launcher, args.recipe)
    pdir = point_dir(args.out, plan, options.variant)
    check_free(pdir)
    plan = local_preflight(args.recipe, recipe, [plan], args.corpus_cache)[0]
    done = run_sequence([plan], options)
    if done.stopped:
        stop.append(done.exit_status)
        return None
    tested = read_tested(pdir, plan.conc, slos, achieved_ratio(getattr(args, "min_achieved_ratio", None)),
                         options.slo)
    print(tested_line(tested), flush=True)
    return tested


def _write(path: Path, spec: SearchSpec, run: SearchRun, extra: dict[str, Any]) -> dict[str, Any]:
    """`search.json`; `extra`: a Slurm search's `cluster` and `rounds`."""
    from harness.artifacts import write_json
    from harness.search.outcome import search_json

    doc = {**search_json(spec, run.tested, run.state, run.complete, run.budget_reason), **extra}
    write_json(path, doc)
    return doc
