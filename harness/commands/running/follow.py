"""`harness follow JOB`: live per-point phases and log tails until the job ends; then the final table and
the report (built under the job's out dir).
Exit status: 0 when every point completed with its result; 3 when they did but the eval scored below its threshold
or, with `--fail-on-invalid`, a point's verdict is invalid; else 1."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", help="job id printed by `harness submit`")
    parser.add_argument("--out", type=Path, help="the sweep's out dir (if it was submitted from elsewhere)")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between polls")
    parser.add_argument("--cancel-on-interrupt", action="store_true", help="Ctrl-C / SIGTERM cancels the job")
    add_fail_on_invalid(parser)


def add_fail_on_invalid(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    """`--fail-on-invalid` (follow, submit --wait): an invalid point fails the command (exit status 3)."""
    parser.add_argument("--fail-on-invalid", action="store_true",
                        help=f"{prefix}exit 3 when any point completed with an invalid verdict (default: 0 "
                             "when every point completed with its result, valid or not; a failed point exits 1 "
                             "either way)")


def main(args: argparse.Namespace) -> int:
    from slurm.follow import follow
    from slurm.jobs import find_job
    from slurm.progress import exit_status, render_table
    from slurm.report import job_report

    record = find_job(args.job, args.out)
    views = follow(record, interval_s=args.interval, cancel_on_interrupt=args.cancel_on_interrupt)
    print(render_table(views))
    print("\n".join(job_report(record)[0]))
    from harness.store.auto import ingest_after

    ingest_after([Path(record["out_dir"])])
    return exit_status(views, args.fail_on_invalid)
