"""`harness run RECIPE --point cN`: one point on one fresh server (the hand-tuning path)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.point.run import PointOptions, PointOutcome
    from harness.recipe.plan import PointPlan
    from harness.recipe.schema import Recipe


def add_point_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `run` and `sweep`."""
    from launchers import launcher_kinds

    parser.add_argument("recipe", help="recipe YAML file")
    parser.add_argument("--out", default="runs", type=Path, help="output directory (default: runs)")
    parser.add_argument("--launcher", default="local", choices=launcher_kinds(), help="how the server starts")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SETTING=VALUE",
                        help="override a setting, e.g. args.hicache-size=160 (recorded in the result)")
    parser.add_argument("--duration", type=float, help="profiling window in seconds (overrides client.duration_s)")
    parser.add_argument("--unofficial", action="store_true",
                        help="a smoke run (local corpus, short window): AIPerf runs with --unsafe-override and the "
                             "results are marked unofficial, never publishable")
    add_corpus_cache_option(parser)
    parser.add_argument("--ready-timeout", type=float, help="seconds to wait for the server to become ready")
    add_stall_option(parser)
    parser.add_argument("--require-power", action="store_true", help="a point without valid power is invalid")
    parser.add_argument("--mount", action="append", default=[], help="container mount SRC:DST (repeatable)")
    parser.add_argument("--image-path", help="local .sqsh/.sif image to use instead of pulling the image")
    add_label_options(parser)
    from harness.commands.running.judging import add_price_options

    add_price_options(parser)


def add_corpus_cache_option(parser: argparse.ArgumentParser) -> None:
    """`--corpus-cache` (run, sweep, preflight of a local run)."""
    parser.add_argument("--corpus-cache", type=Path, metavar="DIR",
                        help="datasets cache holding the staged pinned corpus (default: HF_DATASETS_CACHE, else "
                             "HF_HOME/datasets; stage it with `harness traces stage`)")


def add_stall_option(parser: argparse.ArgumentParser) -> None:
    """`--stall-timeout` (run, sweep, submit)."""
    parser.add_argument("--stall-timeout", type=positive_seconds, metavar="S",
                        help="fail a point as server_stalled after S seconds without progress while requests are "
                             "in flight, or as client_stalled after S seconds without a record, a log line or CPU "
                             "time of the client (default: a tenth of the window, 60 to 300 s)")


def positive_seconds(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def add_label_options(parser: argparse.ArgumentParser) -> None:
    """`--tag` and `--note` (run, sweep, submit): recorded in every result and shown in reports."""
    parser.add_argument("--tag", help="name this run: results land in <out>/<config_key>/variants/NAME/ and the "
                                      "report draws them as their own series (default with --set: a name "
                                      "made from the overrides)")
    parser.add_argument("--note", help="free text recorded in the results and shown in reports")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.commands.running.judging import add_slo_option

    add_point_options(parser)
    add_slo_option(parser)
    parser.add_argument("--point", required=True, help="the point to run, e.g. c8")
    parser.add_argument("--repeat", type=_repeat_count, default=1, metavar="N",
                        help="run the point N times, each on a fresh server (earlier runs kept under "
                             "attempts/), then print the spread of its metrics over the runs")


def _repeat_count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise argparse.ArgumentTypeError(f"expected a whole number of runs from 1 to 100, got {text!r}")
    return int(text)


def options_from_args(args: argparse.Namespace, recipe: Recipe) -> PointOptions:
    from harness.commands.running.judging import price_of, slo_of
    from harness.point.record.validity import with_required_power
    from harness.point.run import PointOptions
    from harness.point.state.variant import variant_name
    from launchers.base import check_engine

    check_engine(args.launcher, recipe.engine, recipe.image)
    overrides = overrides_with_duration(args)
    return PointOptions(out_dir=args.out, launcher=args.launcher,
                        ready_timeout_s=args.ready_timeout or recipe.server.ready_timeout_s,
                        thresholds=with_required_power(recipe.validity, args.require_power), mounts=tuple(args.mount),
                        overrides=tuple(overrides), image_path=args.image_path, stall_timeout_s=args.stall_timeout,
                        variant=variant_name(overrides, args.tag), tag=args.tag, note=args.note,
                        slo=slo_of(args, recipe), price=price_of(args, recipe))


def local_preflight(recipe_path: str, recipe: Recipe, plans: list[PointPlan],
                    corpus_cache: Path | None = None, rehearse: str | None = None,
                    launcher: str = "local") -> list[PointPlan]:
    """Preflight for points run on this machine: the corpus, the client's tokenizer and AIPerf's own check of
    every point's client command (see harness.preflight). A refusal where the engine could not start here anyway
    (`launcher`'s program or SGLang missing) suggests the simulator rehearsal `rehearse`."""
    from harness import preflight
    from harness.commands.running.rehearsal import rehearsal_hint
    from harness.errors import UserError

    report = preflight.local(recipe, plans, recipe_path, corpus_cache)
    if not report.ok:
        raise UserError("preflight: " + "; ".join(f"{f.where}: {f.message}" for f in report.failures()),
                        rehearsal_hint(launcher, rehearse))
    return report.plans


def check_out_dir(out: Path) -> None:
    """`--out` exists (or is created) and takes files: checked before anything starts, one line if not."""
    import os
    import tempfile

    from harness.errors import UserError

    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserError(f"--out {out}: not a writable directory ({exc.strerror or exc})") from None


def warn_idle_overrides(recipe_path: str, point_names: list[str] | None, overrides: list[str], unofficial: bool,
                        plans: list[PointPlan], checked: list[str]) -> None:
    """A warning on stderr (one line each) for every `--set` among `checked` that changes no setting of the
    points (`harness.recipe.override_effect`)."""
    import sys

    from harness.recipe.override_effect import idle_overrides, idle_warning

    for text in idle_overrides(recipe_path, point_names, overrides, unofficial, plans, checked):
        print(f"warning: {idle_warning(text, plans)}", file=sys.stderr, flush=True)


def warn_abbreviated_flags(recipe_path: str, version: str, overrides: list[str]) -> None:
    """A warning on stderr (one line each) for every SGLang flag of the recipe or a `--set` written as a prefix of
    the flag it selects (`harness.recipe.load.abbreviated_flags`)."""
    import sys

    from harness.inputs.yaml_input import read_text
    from harness.recipe.load import abbreviated_flags

    for line in abbreviated_flags(read_text(recipe_path, "recipe"), recipe_path, overrides, version):
        print(f"warning: {line}", file=sys.stderr, flush=True)


def overrides_with_duration(args: argparse.Namespace) -> list[str]:
    """`--set`s, then `--duration S` as `client.duration_s=S` (a shortened window is a variant too)."""
    extra = [f"client.duration_s={args.duration:g}"] if args.duration else []
    return [*args.overrides, *extra]


def main(args: argparse.Namespace) -> int:
    from harness.point.outcome_text import describe_outcome
    from harness.point.record.result import point_dir
    from harness.point.run import run_point
    from harness.point.state.ownership import check_free
    from harness.point.state.status import read_status
    from harness.recipe.points import check_placeable, load_plans

    recipe, plans = load_plans(args.recipe, [args.point], overrides_with_duration(args), args.unofficial)
    warn_abbreviated_flags(args.recipe, recipe.server.sglang_version, args.overrides)
    warn_idle_overrides(args.recipe, [args.point], overrides_with_duration(args), args.unofficial, plans,
                        args.overrides)
    options = options_from_args(args, recipe)
    check_placeable(plans, options.launcher, args.recipe)
    pdir = point_dir(args.out, plans[0], options.variant)
    check_free(pdir)   # another writer of this point: refused at once, naming it
    rehearse = engine_rehearsal("run", args, recipe, [args.point])
    plans = local_preflight(args.recipe, recipe, plans, args.corpus_cache, rehearse, args.launcher)
    check_out_dir(args.out)
    prior = read_status(pdir)
    print(landing_line(plans[0].conc, pdir, options.variant, replaces=bool(prior and prior.get("state") == "completed")),
          flush=True)
    outcomes = []
    for i in range(args.repeat):
        if args.repeat > 1:
            print(f"run {i + 1} of {args.repeat}", flush=True)
        outcome = run_point(plans[0], options)
        outcomes.append(outcome)
        print(describe_outcome(outcome, rehearse))
        if outcome.exit_status not in (0, 1, 3):   # a signal or a user error: no further runs
            break
    if outcome.result is not None:
        print()
        print(point_table(outcome.point_dir), end="")
    if args.repeat > 1:
        print()
        print(repeat_summary(outcomes), end="")
    if outcome.result is not None and options.variant:
        print(compare_hint(args.out / recipe.config_key, options.variant,
                           baseline_command("run", args, [args.point])))
    if outcome.exit_status in (0, 1, 3) or len(outcomes) > 1:   # a signal or a user error: nothing to keep
        from harness.store.auto import ingest_after

        ingest_after([outcome.point_dir])
    return outcome.exit_status if len(outcomes) == 1 else worst_exit(o.exit_status for o in outcomes)


def engine_rehearsal(command: str, args: argparse.Namespace, recipe: Recipe, points: list[str]) -> str | None:
    """The simulator rehearsal of these points (`harness.commands.running.rehearsal`), for a recipe whose engine
    is not already the simulator."""
    from harness.commands.running.rehearsal import rehearsal_command

    if recipe.engine == "sim":
        return None
    return rehearsal_command(command, args.recipe, recipe, overrides_with_duration(args), points)


def repeat_summary(outcomes: list[PointOutcome]) -> str:
    """Where the runs are, and the spread of their metrics (`harness.report.analysis.spread`)."""
    from harness.report.analysis.spread import render, spreads

    records = [o.result for o in outcomes if o.result is not None]
    where = f"the runs: {outcomes[-1].point_dir} (the newest) and its attempts/ (the earlier ones)\n"
    text = where + render(spreads(records), len(records))
    if len(records) >= 2:
        from harness.artifacts import read_json, write_json
        from harness.report.analysis.spread import repeats_json

        attempts = [str(r.get("attempt")) for r in records]
        block = repeats_json(spreads(records), len(records), attempts)
        path = write_json(outcomes[-1].point_dir / "repeats.json", block)
        newest = outcomes[-1].point_dir / "point_result.json"
        if newest.is_file():   # the newest run's record carries the intervals over all its runs too
            write_json(newest, {**read_json(newest, "point record"), "repeats": block})
        text += f"repeats: {path}\n"
    return text


def worst_exit(statuses: Iterable[int]) -> int:
    """One exit status for several runs: a signal's, else failed (1), else invalid (3), else 0."""
    seen = list(statuses)
    for status in (s for s in seen if s not in (0, 1, 3)):
        return status
    return 1 if 1 in seen else 3 if 3 in seen else 0


def landing_line(conc: int, pdir: Path, variant: str | None, replaces: bool = False) -> str:
    """Where the point's results go, said before it starts (a variant never touches the baseline), and
    whether they replace a completed result there."""
    again = "; it replaces the completed result there, kept under attempts/" if replaces else ""
    if variant:
        return f"c{conc}: variant {variant} -> {pdir} (the recipe's own c{conc} is left as it is{again})"
    return f"c{conc}: the recipe as written -> {pdir}" + (f" ({again[2:]}; --tag NAME keeps both)" if again else "")


def compare_hint(curve_dir: Path, variant: str, run_baseline: str) -> str:
    """The command that pairs a variant's points with the recipe's own points; where `curve_dir` holds none of
    them yet, the one that compares it with another variant beside it, else `run_baseline` (the command that runs
    the recipe as written) followed by that compare (`harness.point.state.variant.next_compare`)."""
    import shlex

    from harness.point.state.variant import next_compare

    if any(curve_dir.glob("conc*/bmk_agentic_*.json")):
        return f"against the recipe's own points: harness compare {shlex.quote(str(curve_dir))} --variant " \
               f"{shlex.quote(variant)}"
    return next_compare(curve_dir, variant, run_baseline)


def baseline_command(command: str, args: argparse.Namespace, points: Sequence[str]) -> str:
    """`harness run|sweep RECIPE [--point(s) ...] --out OUT`: the recipe as written, into the same --out."""
    import shlex

    argv = ["harness", command, str(args.recipe)]
    if points:
        argv += ["--point", points[0]] if command == "run" else ["--points", *points]
    return shlex.join([*argv, "--out", str(args.out)])


def point_table(pdir: Path) -> str:
    """The numbers one point measured, as `sweep` prints a curve: title (SIMULATED, variant) and table."""
    from harness.report.analysis.curves import group_curves
    from harness.report.analysis.table import render_curve
    from harness.report.results.points import load_results

    return "".join(render_curve(c) for c in group_curves(load_results([pdir])))
