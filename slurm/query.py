"""Running the Slurm client commands: sbatch (`--parsable`, never scraping human text), sacct with a
scontrol fallback, scancel. Errors become `SlurmError` with Slurm's own one-line message."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from slurm.state import SACCT_FORMAT, TaskState, mark_completing, merge_states, parse_sacct, parse_scontrol

TIMEOUT_S = 60.0


class SlurmError(Exception):
    """A Slurm command failed; the message is Slurm's last line of error output."""


def _run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if shutil.which(argv[0]) is None:
        raise SlurmError(f"{argv[0]}: not found (is this a Slurm login node?)")
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False, env=env)
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{argv[0]}: no answer within {TIMEOUT_S:.0f} s") from None


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in (proc.stderr or proc.stdout or "").splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"exit status {proc.returncode}"


def parse_parsable(stdout: str) -> str:
    """`sbatch --parsable` prints `JOBID` or `JOBID;CLUSTER`."""
    first = stdout.strip().splitlines()[0] if stdout.strip() else ""
    job_id = first.split(";", 1)[0].strip()
    if not job_id.isdigit():
        raise SlurmError(f"sbatch --parsable: unexpected output {stdout.strip()[:80]!r}")
    return job_id


def sbatch(argv: list[str], env: dict[str, str] | None = None) -> str:
    """Submit; `env` (default: ours) is what sbatch exports to the job."""
    proc = _run(argv, env)
    if proc.returncode != 0:
        raise SlurmError(f"sbatch: {_last_line(proc)}")
    return parse_parsable(proc.stdout)


def task_states(job_id: str, submitted_ns: int | None = None) -> tuple[dict[int, TaskState], str | None]:
    """Per-task states and where they came from ("sacct", "scontrol", "sacct+scontrol"), or ({}, None)
    when no source knows the job. Accounting lags the controller by a moment, so both are asked while the
    controller still remembers the job, and a task either source shows ended counts as ended. `submitted_ns`
    (when the job was submitted) keeps an older job of the same id out of the accounting records."""

    acct: dict[int, TaskState] = {}
    live: dict[int, TaskState] = {}
    if shutil.which("sacct"):
        proc = _run(["sacct", "-X", "-n", "-P", "-j", job_id, f"--format={SACCT_FORMAT}"])
        if proc.returncode == 0:
            acct = parse_sacct(proc.stdout, job_id, submitted_ns)
    if shutil.which("scontrol"):
        proc = _run(["scontrol", "-o", "show", "job", job_id])
        if proc.returncode == 0:
            live = parse_scontrol(proc.stdout, job_id)
    names = [n for n, d in (("sacct", acct), ("scontrol", live)) if d]
    merged = merge_states(acct, live)
    if merged and shutil.which("squeue"):
        # a cancelled task reads CANCELLED while its processes are still being stopped: squeue shows it
        proc = _run(["squeue", "-h", "-r", "-j", job_id, "-o", "%i|%T"])
        if proc.returncode == 0:
            merged = mark_completing(merged, proc.stdout, job_id)
    return merged, ("+".join(names) or None)


def scancel(job_id: str) -> None:
    proc = _run(["scancel", job_id])
    if proc.returncode != 0:
        raise SlurmError(f"scancel {job_id}: {_last_line(proc)}")


def run_scontrol(args: list[str]) -> str:
    """`scontrol ARGS`' output; a failure is a SlurmError with scontrol's own message."""
    proc = _run(["scontrol", *args])
    if proc.returncode != 0:
        raise SlurmError(f"scontrol {' '.join(args)}: {_last_line(proc)}")
    return proc.stdout


def run_command(argv: list[str]) -> str:
    """A Slurm client command's output (`sinfo`, `sacctmgr`, ...); a missing command, no answer in time or a
    failure is a SlurmError with the command's own message."""
    proc = _run(argv)
    if proc.returncode != 0:
        raise SlurmError(f"{argv[0]}: {_last_line(proc)}")
    return proc.stdout


def slurm_available() -> bool:
    """True when a controller answers (sinfo succeeds)."""
    if shutil.which("sinfo") is None:
        return False
    try:
        return subprocess.run(["sinfo", "-h"], capture_output=True, timeout=15, check=False).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def job_task_states(record: dict[str, Any]) -> tuple[dict[int, TaskState], str | None]:
    """`task_states` of a submission record's job, since its own submission."""
    submitted = record.get("submitted_ns")
    return task_states(str(record["job_id"]), submitted if isinstance(submitted, int) else None)
