"""Several points run one after the other: what `harness sweep` does on this host and what one Slurm task of
`harness submit --reuse-deployment` does in its allocation.

Points completed before (same fingerprint) are skipped unless `force`. With `reuse_deployment`, one deployment
(`harness.point.servers.deployment_reuse.SharedDeployment`) serves every point and is stopped after the last one, or when
one point ends the sequence: a signal (SIGTERM, the walltime's SIGUSR1), a full disk, results that cannot be
written, a container runtime that went away, or the deployment's crash.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.point.outcome_text import describe_outcome
from harness.point.record.result import point_dir
from harness.point.run import EXIT_FAILED, EXIT_INVALID, EXIT_VALID, PointOptions, run_point
from harness.point.servers.deployment_reuse import SharedDeployment, check_reusable
from harness.point.servers.server_failure import failure_excerpt
from harness.point.state.status import read_status
from harness.point.state.truth import point_truth
from harness.recipe.plan import PointPlan

# a point's failure reason that every later point would meet too, and what the sweep says when it stops on it
STOPPING = (("disk_full", "the disk is full"),
            ("results_unwritable", "the results directory cannot be written"),
            ("container_runtime_gone", "the container runtime went away (run the sweep again once it answers: "
                                       "the points completed so far are kept)"))


@dataclass(frozen=True)
class SequenceOutcome:
    """The worst exit status of the points, and whether the sequence stopped before its end (a signal, a full
    disk): then `exit_status` is that point's and nothing after it should run."""

    exit_status: int
    stopped: bool


def shared_deployment(plans: list[PointPlan]) -> SharedDeployment:
    """`--reuse-deployment`: one deployment for every point, refused when the points plan different ones."""
    check_reusable(plans)
    return SharedDeployment()


def run_sequence(plans: list[PointPlan], options: PointOptions, *, reuse_deployment: bool = False,
                 force: bool = False, t0: float | None = None, rehearse: str | None = None) -> SequenceOutcome:
    """Every point in order (one deployment for all of them with `reuse_deployment`); the shared deployment is
    stopped whatever happened. A point whose server shows that the engine cannot run on this machine (SGLang not
    installed, no GPU, no image) stops the sequence: every later point would fail the same way; `rehearse` is the
    command of the simulator rehearsal, printed then."""
    shared = shared_deployment(plans) if reuse_deployment else None
    try:
        return _run_points(plans, options, shared, force, time.monotonic() if t0 is None else t0, rehearse)
    finally:
        if shared is not None:
            shared.stop(options.server_stop_grace_s)


def completed_before(pdir: Path, plan: PointPlan) -> dict[str, Any] | None:
    """The status of the point in `pdir` when it completed before with the plan's settings (its fingerprint) and
    left a readable record that says so (`harness.point.state.truth`: a corrupt record is run again)."""
    prior = read_status(pdir)
    if not prior or prior.get("fingerprint") != plan.fingerprint or not point_truth(pdir, prior).done:
        return None
    return prior


def _skip(plan: PointPlan, options: PointOptions, force: bool) -> int | None:
    """The earlier exit status of a point completed before with the same fingerprint (None: run it)."""
    prior = None if force else completed_before(point_dir(options.out_dir, plan, options.variant), plan)
    if prior is None:
        return None
    earlier = prior.get("exit_status")
    return earlier if isinstance(earlier, int) else EXIT_VALID


def _run_points(plans: list[PointPlan], options: PointOptions, shared: SharedDeployment | None, force: bool,
                t0: float, rehearse: str | None = None) -> SequenceOutcome:
    worst = EXIT_VALID
    for i, plan in enumerate(plans, 1):
        earlier = _skip(plan, options, force)
        if earlier is not None:
            exit_note = "" if earlier == EXIT_VALID else f", exit status {earlier}"
            print(f"[{i}/{len(plans)}] c{plan.conc}: already completed in "
                  f"{point_dir(options.out_dir, plan, options.variant)}{exit_note} (use --force to re-run)", flush=True)
            worst = _worse(worst, earlier)
            continue
        print(f"[{i}/{len(plans)}] c{plan.conc}: starting ({plan.client.duration_s:.0f} s window; sweep at "
              f"{time.monotonic() - t0:.0f} s)", flush=True)
        outcome = run_point(plan, options, shared)
        print(describe_outcome(outcome, rehearse), flush=True)
        if outcome.state == "cancelled":
            print("sweep cancelled", flush=True)
            return SequenceOutcome(outcome.exit_status, True)
        stop = next((why for reason, why in STOPPING if (outcome.reason or "").startswith(reason)), None)
        if stop is not None:   # every later point would fail the same way
            later = f"; the {len(plans) - i} later point(s) were not started" if i < len(plans) else ""
            print(f"sweep stopped: {stop}{later}", flush=True)
            return SequenceOutcome(EXIT_FAILED, True)
        excerpt = failure_excerpt(outcome.point_dir, outcome.reason) if outcome.state == "failed" else None
        if excerpt is not None and excerpt.engine_missing and i < len(plans):
            print(f"sweep stopped: the engine cannot start on this machine; the {len(plans) - i} later point(s) "
                  "would fail the same way", flush=True)
            return SequenceOutcome(EXIT_FAILED, True)
        worst = _worse(worst, outcome.exit_status)
    return SequenceOutcome(worst, False)


def _worse(worst: int, status: int) -> int:
    """Failed beats invalid beats valid."""
    if status not in (EXIT_VALID, EXIT_INVALID) or worst == EXIT_FAILED:
        return EXIT_FAILED
    return EXIT_INVALID if EXIT_INVALID in (worst, status) else EXIT_VALID
