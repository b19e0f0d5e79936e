"""An srun step stopped the way a server expects to be stopped: SIGTERM to the step's tasks.

srun answers a SIGTERM of its own by killing its step's tasks with SIGKILL ("srun: forcing job termination"), so a
server run as an srun step never gets to shut down when srun itself is signalled: it records exit status 137 and
its last log lines are lost. Each step the harness starts is therefore named (`srun --job-name=NAME`), and
stopping it first sends SIGTERM to its tasks through Slurm (`scancel --signal=TERM JOB.STEP`); srun exits once
they have. Only then, or where the step cannot be found (outside an allocation, the step already gone), is srun's
own process group signalled.
"""

from __future__ import annotations

import os
import subprocess

from launchers.process_group import ProcessGroup

FALLBACK_GRACE_S = 5.0   # srun kills its tasks at once on SIGTERM: the fallback needs no long grace


def step_ids(squeue_steps: str, name: str) -> list[str]:
    """`JOB.STEP` ids named `name` in `squeue -h -s -o '%i|%j'` output."""
    ids = []
    for line in squeue_steps.splitlines():
        step, _, step_name = line.strip().partition("|")
        if step_name == name and "." in step:
            ids.append(step)
    return ids


def signal_steps(name: str, signal_name: str = "TERM") -> list[str]:
    """Send `signal_name` to the tasks of this allocation's steps named `name`; the step ids signalled."""
    job = os.environ.get("SLURM_JOB_ID")
    if not job:
        return []
    try:
        listed = subprocess.run(["squeue", "-h", "-s", "-j", job, "-o", "%i|%j"], capture_output=True, text=True,
                                timeout=30, check=False).stdout
        ids = step_ids(listed, name)
        for step in ids:
            subprocess.run(["scancel", f"--signal={signal_name}", step], capture_output=True, timeout=30,
                           check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ids


def stop_step(process: ProcessGroup, name: str, grace_s: float) -> tuple[int | None, str]:
    """Stop the srun `process` running the step `name`: SIGTERM to the step's tasks and up to `grace_s` for srun
    to exit, then srun's process group (SIGTERM, which srun turns into SIGKILL of what is left). Returns srun's
    exit status and how the step was stopped, in words."""
    if process.exit_code() is None:
        signalled = signal_steps(name)
        if signalled:
            exited = process.wait_exit(grace_s)
            code = process.stop(FALLBACK_GRACE_S)
            how = f"SIGTERM to its Slurm step's tasks (scancel --signal=TERM {' '.join(signalled)})"
            return code, how if exited else how + f", then SIGKILL after {grace_s:.0f} s"
    return process.stop(grace_s), "SIGTERM to its srun's process group (srun kills the step's tasks)"
