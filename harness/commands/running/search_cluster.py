"""`harness search --cluster PROFILE`: the search's points on Slurm, in rounds.

Each round (`harness.search.rounds.round_tests`) is up to `--round-size` tests (default: the profile's
`max_parallel`, else `DEFAULT_ROUND_SIZE`), re-tests of inconclusive concurrencies included as the local search
makes them (`retest_setting`: attempt 2 with twice the window, attempt 3 on the same again in a directory of its
own). A round's tests are grouped by setting (their attempt); in each group the points completed before with the
same settings are read back as they are, the others are submitted as ONE job array (`harness.submission`, the same
plan file, batch script and job record as `harness submit`). Every group's array is submitted, then followed
quietly until it ends, then every point is read from its own record as the local search reads it. A point that
left no answer (cancelled, never started, its task lost) stops the search: running it again resumes from the
points completed so far.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
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


def retest_setting(args: argparse.Namespace, base: Recipe, window_s: float,
                   attempt: int) -> tuple[Recipe, list[Point], list[str], str | None]:
    """The setting of an inconclusive point's re-test (attempt 2 on): the recipe and points, the overrides and the
    variant. Twice its window (a variant of its own, e.g. `duration_s=120`), and from the third test on the same
    again in a directory of its own (`...+repeat1`), so each test keeps its own record and runs on a fresh
    server."""
    from harness.commands.running.run import overrides_with_duration
    from harness.point.state.variant import derived_name, suffixed
    from harness.recipe.points import apply_overrides

    longer = argparse.Namespace(**{**vars(args), "duration": 2 * window_s})
    overrides = overrides_with_duration(longer)
    recipe, points = apply_overrides(base, None, overrides, args.recipe)
    repeat = f"+repeat{attempt - 2}" if attempt > 2 else ""
    variant = (suffixed(args.tag, f"+duration_s={2 * window_s:g}{repeat}") if args.tag
               else suffixed(derived_name(overrides), repeat))
    return recipe, points, overrides, variant


def round_tester(args: argparse.Namespace, base: Recipe, recipe: Recipe, points: list[Point], slos: list[Slo],
                 variant: str | None, rounds: list[dict[str, Any]],
                 stop: list[int]) -> Callable[[int, list[tuple[int, int]]], RoundResult]:
    """`test_round(number, tests)` for `harness.search.driver.run_rounds` (`tests`: (concurrency, attempt)
    pairs): appends each round to `rounds` (as `search.json` lists them) and the exit status of a stopped search
    to `stop`. `base`: the recipe before the search's overrides (a re-test's setting starts from it)."""
    from harness.commands.running.judging import slo_of
    from harness.commands.running.run import overrides_with_duration
    from harness.point.record.result import point_dir
    from harness.point.sequence import completed_before
    from harness.search.candidate import plan_at
    from harness.search.driver import RoundResult
    from harness.search.tested import achieved_ratio, read_tested, tested_line

    out = Path(args.out).resolve()
    ratio = achieved_ratio(getattr(args, "min_achieved_ratio", None))
    request_slo = slo_of(args, recipe)   # attainment is recomputed from each point's per-request records

    def setting(attempt: int) -> _Setting:
        if attempt == 1:
            return _Setting(attempt, recipe, points, overrides_with_duration(args), variant, args.tag)
        at_recipe, at_points, overrides, at_variant = retest_setting(args, base, recipe.client.duration_s, attempt)
        return _Setting(attempt, at_recipe, at_points, overrides, at_variant,
                        at_variant if args.tag or attempt > 2 else None)   # a tag names the variant on Slurm

    def test_round(number: int, tests: list[tuple[int, int]]) -> RoundResult:
        concs = [c for c, _ in tests]
        entry: dict[str, Any] = {"round": number, "concs": concs, "attempts": [a for _, a in tests], "reused": [],
                                 "job_id": None, "jobs": [], "tasks": []}
        rounds.append(entry)
        groups = []
        for attempt in sorted({a for _, a in tests}):
            at = setting(attempt)
            plans = [plan_at(at.recipe, at.points, c, args.point_template, args.recipe) for c, a in tests
                     if a == attempt]
            fresh = [p for p in plans if completed_before(point_dir(out, p, at.variant), p) is None]
            entry["reused"] += [p.conc for p in plans if p not in fresh]
            groups.append((at, plans, fresh))
        entry["reused"].sort()
        retests = [f"c{c} test {a}" for c, a in tests if a > 1]
        print(f"[search] round {number}: {_names(concs)}"
              + (f" (re-testing the inconclusive: {', '.join(retests)})" if retests else "")
              + (f" ({_names(entry['reused'])} completed before)" if entry["reused"] else ""), flush=True)
        status = _run_jobs(args, [(at, fresh) for at, _, fresh in groups if fresh], entry)
        if status is not None:
            stop.append(status)
        tested_points = [read_tested(point_dir(out, p, at.variant), p.conc, slos, ratio, request_slo)
                         for at, plans, _ in groups for p in plans]
        tested_points.sort(key=lambda v: v.conc)
        answered = [v.state in ANSWERED_STATES and not _task_died(v.point_dir) for v in tested_points]
        for v, ok in zip(tested_points, answered, strict=True):
            print(tested_line(v) if ok else f"[search] c{v.conc}: no answer ({v.state}: "
                  f"{', '.join(v.invalid_reasons) or 'no record'}); the search stops", flush=True)
        given = tuple(v for v, ok in zip(tested_points, answered, strict=True) if ok)
        if len(given) < len(tested_points) and not stop:
            stop.append(1)
        return RoundResult(given, stopped=bool(stop))

    return test_round


@dataclass(frozen=True)
class _Setting:
    """The setting of one attempt's points in a round: one job array."""

    attempt: int
    recipe: Recipe
    points: list[Point]
    overrides: list[str]
    variant: str | None
    tag: str | None


def _task_died(pdir: Path) -> bool:
    from harness.point.state.status import read_status

    reason = (read_status(pdir) or {}).get("reason")
    return isinstance(reason, str) and reason.startswith(NO_ANSWER)


def _run_jobs(args: argparse.Namespace, groups: list[tuple[_Setting, list[PointPlan]]],
              entry: dict[str, Any]) -> int | None:
    """Submit each group of the round's points as one job array, then follow each to its end; the exit status
    when the search must stop (interrupted, sbatch refused), else None."""
    from slurm import query

    records: list[dict[str, Any]] = []
    for at, plans in groups:
        record = _submit(args, at, plans, entry)
        if record is None:
            for r in records:   # the round is not tested whole: its other arrays go too
                query.scancel(r["job_id"])
            return 1
        records.append(record)
    for i, record in enumerate(records):
        if _follow(args, record, entry):
            for r in records[i + 1:]:
                query.scancel(r["job_id"])
            return 130
    return None


def _submit(args: argparse.Namespace, at: _Setting, plans: list[PointPlan],
            entry: dict[str, Any]) -> dict[str, Any] | None:
    """One group's points submitted as one job array, recorded in the round's `entry`; None when sbatch
    refused it."""
    import sys

    from harness.errors import UserError
    from harness.search.outcome import SEARCH_FILE
    from harness.submission import PreflightFailed, SubmitRequest, submit
    from slurm import query

    req = SubmitRequest(recipe=args.recipe, cluster=args.cluster, overrides=tuple(at.overrides),
                        out_dir=Path(args.out).resolve(), ready_timeout_s=args.ready_timeout,
                        stall_timeout_s=args.stall_timeout, require_power=args.require_power,
                        tag=at.tag, note=args.note, unofficial=args.unofficial)
    try:
        record = submit(req, lambda line: print(f"preflight: {line}", file=sys.stderr), (at.recipe, plans))
    except PreflightFailed as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        raise UserError(f"preflight failed: round {entry['round']} not submitted ({SEARCH_FILE} keeps the rounds "
                        "before it)") from None
    except query.SlurmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    if at.variant != req.variant:
        raise AssertionError(f"variant {at.variant} submitted as {req.variant}")
    job = record["job_id"]
    entry["job_id"] = entry["job_id"] or job
    entry["jobs"].append({"job_id": job, "attempt": at.attempt, "variant": at.variant})
    entry["tasks"] += [{"conc": p["conc"], "task_id": p["task_id"], "attempt": at.attempt, "job_id": job}
                       for p in record["points"]]
    print(f"[search] round {entry['round']}: job {job}: {_names([p.conc for p in plans])} "
          f"({len(plans)} array task{'s' if len(plans) > 1 else ''}"
          + (f", test {at.attempt}: a {at.recipe.client.duration_s:g} s window" if at.attempt > 1 else "") + ")",
          flush=True)
    return record


def _follow(args: argparse.Namespace, record: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Follow a round's job array to its end; True when interrupted (the job cancelled)."""
    from slurm.follow import follow

    try:
        follow(record, interval_s=args.interval, quiet=True, cancel_on_interrupt=True)
    except KeyboardInterrupt:
        print(f"[search] round {entry['round']}: job {record['job_id']} cancelled", flush=True)
        return True
    print(f"[search] round {entry['round']}: job {record['job_id']} done", flush=True)
    return False


def _names(concs: list[int]) -> str:
    return " ".join(f"c{c}" for c in concs)
