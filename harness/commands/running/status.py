"""`harness status JOB`: each point's state, phase, Slurm state and exit code (sacct, else scontrol,
else the points' own status.json). `harness status DIR`: each point under a run directory as its
status.json says (a point whose harness is gone reads `failed: harness_killed`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.artifacts import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", help="job id printed by `harness submit`, or a run directory")
    parser.add_argument("--out", type=Path, help="the sweep's out dir (if it was submitted from elsewhere)")
    parser.add_argument("--json", action="store_true", help="print the job and its points as JSON")


def main(args: argparse.Namespace) -> int:
    if Path(args.job).is_dir():
        return _dir_status(Path(args.job), args.json)
    from slurm import query
    from slurm.jobs import find_job
    from slurm.progress import finished, job_json, point_views, render_table

    record = find_job(args.job, args.out)
    tasks, source = query.job_task_states(record)
    views = point_views(record, tasks)
    if args.json:
        data = job_json(record, views)
        data.update(source=source, finished=finished(record, tasks, source))
        print_json(data)
    else:
        where = source or "no Slurm record; status.json only"
        print(f"job {record['job_id']} ({where}), out dir {record['out_dir']}")
        print(render_table(views))
    return 0


def _dir_status(root: Path, as_json: bool) -> int:
    from harness.point.state.status_dir import dir_views, render_dir_table

    views = dir_views(root)
    if as_json:
        print_json({"run_dir": str(root), "points": views})
    elif not views:
        print(f"{root}: no point or eval directories (no status.json below it)")
    else:
        print(render_dir_table(root, views))
    return 0
