"""`harness search --cluster PROFILE`: the search's points on Slurm, in rounds.

Each round (`harness.search.rounds.next_round`) is up to `--round-size` concurrencies (default: the profile's
`max_parallel`, else `DEFAULT_ROUND_SIZE`). Its points completed before with the same settings are read back as
they are; the others are submitted as ONE job array (`harness.submission`, the same plan file, batch script and job
record as `harness submit`), followed quietly until the array ends, then every point is read from its own record
as the local search reads it. A point that left no answer (cancelled, never started, its task lost) stops the
search: running it again resumes from the points completed so far.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.recipe.plan import PointPlan
    from harness.recipe.schema import Point, Recipe
    from harness.search.driver import RoundResult
    from harness.search.slo import Slo
    from slurm.profile import ClusterProfile

DEFAULT_ROUND_SIZE = 4
ANSWERED_STATES = ("completed", "failed")   # a point in any other state gave no answer: the search stops
NO_ANSWER = "harness_killed"   # a failed point whose task died under it (a node lost): no answer either
LOCAL_ONLY: dict[str, tuple[str, object]] = {   # attribute -> (flag, its default)
    "launcher": ("--launcher", "local"), "mount": ("--mount", []), "image_path": ("--image-path", None),
    "corpus_cache": ("--corpus-cache", None)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", metavar="PROFILE",
                        help="run the points on Slurm with this cluster profile (clusters/*.yaml), a round of "
                             "concurrencies at a time as one job array")
    parser.add_argument("--round-size", type=_round_size, metavar="N",
                        help="with --cluster: concurrencies per round (default: the profile's max_parallel, else "
                             f"{DEFAULT_ROUND_SIZE})")
    parser.add_argument("--interval", type=float, default=5.0, metavar="S",
                        help="with --cluster: seconds between polls of a round's job (default: 5)")


def _round_size(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"expected a round size from 1 to 64, got {text!r}")
    return int(text)


def check_args(args: argparse.Namespace) -> None:
    """The options that only a local search takes, refused with --cluster (and --round-size without it)."""
    from harness.errors import UserError

    if args.cluster is None:
        if args.round_size is not None:
            raise UserError("--round-size: only with --cluster (a local search tests one point at a time)")
        return
    for key, (flag, default) in LOCAL_ONLY.items():
        if getattr(args, key) != default:
            raise UserError(f"{flag}: not with --cluster (the cluster profile says how its points run)")


def load_cluster(args: argparse.Namespace, recipe: Recipe, first: PointPlan) -> ClusterProfile:
    """The profile, with the recipe checked against it: one line when the recipe cannot run there."""
    from harness.errors import UserError
    from launchers.base import SIM_REFUSED
    from slurm.profile import load_profile
    from slurm.render import check_fit

    profile = load_profile(args.cluster)
    if recipe.engine == "sim" and profile.launcher in SIM_REFUSED:
        raise UserError(f"--cluster {args.cluster}: engine sim cannot run with container.runtime "
                        f"{profile.container.runtime}: the simulator ships with the harness, not in the image "
                        f"{recipe.image} (a profile with runtime pyxis or none runs it; or --set engine=sglang)")
    check_fit(recipe, [first], profile, args.recipe)
    return profile


def round_size(args: argparse.Namespace, profile: ClusterProfile) -> int:
    return args.round_size or profile.max_parallel or DEFAULT_ROUND_SIZE


def round_tester(args: argparse.Namespace, recipe: Recipe, points: list[Point], slos: list[Slo],
                 variant: str | None, rounds: list[dict[str, Any]],
                 stop: list[int]) -> Callable[[int, list[int]], RoundResult]:
    """`test_round(number, concs)` for `harness.search.driver.run_rounds`: appends each round to `rounds` (as
    `search.json` lists them) and the exit status of a stopped search to `stop`."""
    from harness.point.record.result import point_dir
    from harness.point.sequence import completed_before
    from harness.search.candidate import plan_at
    from harness.search.driver import RoundResult
    from harness.search.tested import achieved_ratio, read_tested, tested_line

    out = Path(args.out).resolve()
    ratio = achieved_ratio(getattr(args, "min_achieved_ratio", None))

    def test_round(number: int, concs: list[int]) -> RoundResult:
        plans = [plan_at(recipe, points, c, args.point_template, args.recipe) for c in concs]
        fresh = [p for p in plans if completed_before(point_dir(out, p, variant), p) is None]
        entry: dict[str, Any] = {"round": number, "concs": concs,
                                 "reused": [p.conc for p in plans if p not in fresh], "job_id": None, "tasks": []}
        rounds.append(entry)
        print(f"[search] round {number}: {_names(concs)}"
              + (f" ({_names(entry['reused'])} completed before)" if entry["reused"] else ""), flush=True)
        if fresh:
            status = _run_job(args, recipe, fresh, variant, entry)
            if status is not None:
                stop.append(status)
        tested_points = [read_tested(point_dir(out, p, variant), p.conc, slos, ratio) for p in plans]
        answered = [v.state in ANSWERED_STATES and not _task_died(v.point_dir) for v in tested_points]
        for v, ok in zip(tested_points, answered, strict=True):
            print(tested_line(v) if ok else f"[search] c{v.conc}: no answer ({v.state}: "
                  f"{', '.join(v.invalid_reasons) or 'no record'}); the search stops", flush=True)
        given = tuple(v for v, ok in zip(tested_points, answered, strict=True) if ok)
        if len(given) < len(tested_points) and not stop:
            stop.append(1)
        return RoundResult(given, stopped=bool(stop))

    return test_round


def _task_died(pdir: Path) -> bool:
    from harness.point.state.status import read_status

    reason = (read_status(pdir) or {}).get("reason")
    return isinstance(reason, str) and reason.startswith(NO_ANSWER)


def _run_job(args: argparse.Namespace, recipe: Recipe, plans: list[PointPlan], variant: str | None,
             entry: dict[str, Any]) -> int | None:
    """Submit the round's points as one job array and follow it to its end; the exit status when the search
    must stop (interrupted, sbatch refused), else None."""
    import sys

    from harness.commands.running.run import overrides_with_duration
    from harness.errors import UserError
    from harness.search.outcome import SEARCH_FILE
    from harness.submission import PreflightFailed, SubmitRequest, submit
    from slurm import query
    from slurm.follow import follow

    req = SubmitRequest(recipe=args.recipe, cluster=args.cluster, overrides=tuple(overrides_with_duration(args)),
                        out_dir=Path(args.out).resolve(), ready_timeout_s=args.ready_timeout,
                        stall_timeout_s=args.stall_timeout, require_power=args.require_power,
                        tag=args.tag, note=args.note, unofficial=args.unofficial)
    try:
        record = submit(req, lambda line: print(f"preflight: {line}", file=sys.stderr), (recipe, plans))
    except PreflightFailed as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        raise UserError(f"preflight failed: round {entry['round']} not submitted ({SEARCH_FILE} keeps the rounds "
                        "before it)") from None
    except query.SlurmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if variant != req.variant:
        raise AssertionError(f"variant {variant} submitted as {req.variant}")
    entry["job_id"] = record["job_id"]
    entry["tasks"] = [{"conc": p["conc"], "task_id": p["task_id"]} for p in record["points"]]
    print(f"[search] round {entry['round']}: job {record['job_id']}: {_names([p.conc for p in plans])} "
          f"({len(plans)} array task{'s' if len(plans) > 1 else ''})", flush=True)
    try:
        follow(record, interval_s=args.interval, quiet=True, cancel_on_interrupt=True)
    except KeyboardInterrupt:
        print(f"[search] round {entry['round']}: job {record['job_id']} cancelled", flush=True)
        return 130
    print(f"[search] round {entry['round']}: job {record['job_id']} done", flush=True)
    return None


def _names(concs: list[int]) -> str:
    return " ".join(f"c{c}" for c in concs)
