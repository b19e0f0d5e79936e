"""`harness cancel JOB`: cancel a job this harness submitted (any other job id is refused). Running points
get SIGTERM, stop their server, keep their partial artifacts and end `cancelled`."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", help="job id printed by `harness submit`")
    parser.add_argument("--out", type=Path, help="the sweep's out dir (if it was submitted from elsewhere)")
    parser.add_argument("--wait", action="store_true", help="wait until every task has ended")


def main(args: argparse.Namespace) -> int:
    import sys
    import time

    from slurm import query
    from slurm.jobs import find_job
    from slurm.progress import finished, point_views, render_table

    record = find_job(args.job, args.out)
    try:
        query.scancel(record["job_id"])
    except query.SlurmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"cancelled job {record['job_id']}", flush=True)
    if args.wait:
        while True:
            tasks, source = query.job_task_states(record)
            if finished(record, tasks, source):
                break
            time.sleep(1.0)
        print(render_table(point_views(record, tasks)))
    return 0
