"""`harness logs JOB [--point cN]`: a job's logs, point by point: the task's Slurm output, the point's
harness.log (phases and final state), server.log (a deployment's: every worker node's and the router's) and
client.log (lm_eval.log for the eval task)."""

from __future__ import annotations

import argparse
from pathlib import Path

KINDS = ("slurm", "harness", "server", "client")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", help="job id printed by `harness submit`")
    parser.add_argument("--out", type=Path, help="the sweep's out dir (if it was submitted from elsewhere)")
    parser.add_argument("--point", action="append", help="only this point, e.g. c8 (repeatable)")
    parser.add_argument("--kind", action="append", choices=KINDS, help="only these logs (repeatable)")
    parser.add_argument("--tail", type=int, help="only the last N lines of each log")
    parser.add_argument("--paths", action="store_true", help="print the log paths only")


def main(args: argparse.Namespace) -> int:
    from harness.errors import UserError
    from slurm.follow import slurm_output
    from slurm.jobs import find_job

    record = find_job(args.job, args.out)
    points = record["points"]
    if args.point:
        known = {p["name"] for p in points}
        missing = [n for n in args.point if n not in known]
        if missing:
            raise UserError(f"--point {missing[0]}: job {record['job_id']} has {', '.join(sorted(known))}")
        points = [p for p in points if p["name"] in args.point]
    from harness.point.servers.server_logs import server_logs

    kinds = args.kind or list(KINDS)
    for p in points:
        pdir = Path(p["point_dir"])
        paths = {"slurm": [slurm_output(record, int(p["task_id"]))], "harness": [pdir / "harness.log"],
                 "server": server_logs(pdir),
                 "client": [pdir / ("lm_eval.log" if p.get("kind") == "eval" else "client.log")]}
        for kind, path in ((k, path) for k in kinds for path in paths[k]):
            if args.paths:
                print(f"{p['name']} {kind} {path}{'' if path.exists() else ' (absent)'}")
                continue
            print(f"==> {p['name']} (task {p['task_id']}) {kind}: {path} <==")
            if not path.exists():
                print("(absent)")
                continue
            lines = path.read_text(errors="replace").splitlines()
            for line in lines[-args.tail:] if args.tail else lines:
                print(line)
    return 0
