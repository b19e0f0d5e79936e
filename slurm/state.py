"""Per-task Slurm states from `sacct` / `scontrol` output, and each point's state (pure functions).

Sources of truth, in order: `sacct -X -n -P` (accounting; survives the job), `scontrol -o show job`
(only while the controller remembers the job), then the point's own `status.json`. A point's state uses
`status.json`'s words: pending, running, then completed | failed | cancelled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

SACCT_FORMAT = "JobID,JobIDRaw,State,ExitCode,Reason,NodeList,Submit"
# Accounting outlives the controller's job ids: after a controller's state is reset, an old job of the same id
# is still in the database. A record submitted this long before our own submission is that other job.
EARLIER_JOB_SLACK_S = 120.0
ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD",
          "RESIZING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "RESV_DEL_HOLD", "SPECIAL_EXIT"}
CANCELLED_LIKE = {"CANCELLED", "TIMEOUT", "PREEMPTED", "DEADLINE"}
FINAL_POINT_STATES = ("completed", "failed", "cancelled")


@dataclass(frozen=True)
class TaskState:
    """One array task as Slurm sees it. `exit_code` is the task's exit status (128+N when killed by N)."""

    task_id: int
    state: str                 # Slurm's word, e.g. RUNNING, COMPLETED, CANCELLED
    exit_code: int | None
    reason: str | None = None
    node: str | None = None
    job_id: str | None = None  # the task's own job id

    @property
    def active(self) -> bool:
        return self.state in ACTIVE


def parse_exit_code(text: str) -> int | None:
    """`A:B` (exit status : signal) -> A, or 128+B when a signal ended it."""
    m = re.fullmatch(r"(\d+):(\d+)", text.strip())
    if not m:
        return None
    status, sig = int(m.group(1)), int(m.group(2))
    return 128 + sig if sig else status


def expand_task_ids(spec: str) -> list[int]:
    """`3`, `[1-3]`, `[1,4-5%2]` -> task ids (the `%N` throttle is dropped)."""
    spec = spec.strip().strip("[]").split("%", 1)[0]
    out: list[int] = []
    for part in spec.split(","):
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        else:
            out.append(int(part))
    return out


def _state_word(text: str) -> str:
    return text.split()[0].rstrip("+") if text.strip() else "UNKNOWN"


def _none(text: str | None) -> str | None:
    return None if text in (None, "", "None", "(null)", "None assigned") else text


def parse_sacct(text: str, job_id: str, submitted_ns: int | None = None) -> dict[int, TaskState]:
    """Lines of `sacct -X -n -P -j JOB --format=JobID,JobIDRaw,State,ExitCode,Reason,NodeList,Submit`. With
    `submitted_ns` (when we submitted the job), a record submitted well before it is another, older job that
    had the same id, and is left out."""
    tasks: dict[int, TaskState] = {}
    for line in text.splitlines():
        fields = line.split("|")
        if len(fields) < 4:
            continue
        jobid, raw, state, code = fields[:4]
        reason = fields[4] if len(fields) > 4 else None
        node = fields[5] if len(fields) > 5 else None
        if submitted_ns is not None and len(fields) > 6 and _submitted_before(fields[6], submitted_ns):
            continue
        head, sep, spec = jobid.partition("_")
        if head != job_id:
            continue
        ids = expand_task_ids(spec) if sep else [0]
        for tid in ids:
            tasks[tid] = TaskState(tid, _state_word(state), parse_exit_code(code), _none(reason), _none(node),
                                   raw if len(ids) == 1 else None)
    return tasks


def _submitted_before(submit: str, submitted_ns: int) -> bool:
    """sacct's Submit (local time, `2026-12-03T07:03:36`) lies more than the slack before `submitted_ns`."""
    try:
        when = datetime.fromisoformat(submit).timestamp()
    except ValueError:
        return False   # Unknown, None: keep the record
    return when < submitted_ns / 1e9 - EARLIER_JOB_SLACK_S


def _field(line: str, key: str) -> str | None:
    m = re.search(rf"(?:^|\s){key}=(\S*)", line)
    return m.group(1) if m else None


def parse_scontrol(text: str, job_id: str) -> dict[int, TaskState]:
    """Records of `scontrol -o show job JOB` (one line per array task, pending ones grouped)."""
    tasks: dict[int, TaskState] = {}
    for line in text.splitlines():
        own = _field(line, "JobId")
        array = _field(line, "ArrayJobId")
        if own is None or (array or own) != job_id:
            continue
        spec = _field(line, "ArrayTaskId")
        ids = expand_task_ids(spec) if spec else [0]
        code = parse_exit_code(_field(line, "ExitCode") or "")
        for tid in ids:
            tasks[tid] = TaskState(tid, _state_word(_field(line, "JobState") or ""), code,
                                   _none(_field(line, "Reason")), _none(_field(line, "NodeList")),
                                   own if len(ids) == 1 else None)
    return tasks


def merge_states(acct: dict[int, TaskState], live: dict[int, TaskState]) -> dict[int, TaskState]:
    """Accounting and controller views of the same tasks: an ended task wins over an active one (states only
    move forward); otherwise the controller's live view wins."""
    out = dict(acct)
    for tid, task in live.items():
        other = out.get(tid)
        if other is None or other.active or not task.active:
            out[tid] = task
    return out


def mark_completing(tasks: dict[int, TaskState], squeue: str, job_id: str) -> dict[int, TaskState]:
    """Tasks `squeue -h -r -o '%i|%T'` still lists as COMPLETING are not over yet, whatever their state."""
    out = dict(tasks)
    for line in squeue.splitlines():
        jid, _, state = line.strip().partition("|")
        head, sep, spec = jid.partition("_")
        if head != job_id or not sep or state != "COMPLETING" or not spec.isdigit():
            continue
        tid = int(spec)
        old = out.get(tid)
        out[tid] = TaskState(tid, "COMPLETING", None, None, old.node if old else None, old.job_id if old else None)
    return out


def point_state(task: TaskState | None, status: dict[str, Any] | None) -> tuple[str, str | None]:
    """The point's state and reason from Slurm's view of its task and its `status.json` (either may be
    missing). A final state the point wrote itself wins; Slurm decides when the point could not write one."""
    if status and status.get("state") in FINAL_POINT_STATES:
        return status["state"], status.get("reason")
    if task is None:
        if status:
            return "running", None
        return "unknown", "no record in Slurm and no status.json"
    if task.active:
        if task.state == "PENDING":
            return "pending", task.reason
        return "running", None
    if task.state in CANCELLED_LIKE:
        return "cancelled", f"slurm: {task.state}" + ("" if status else " before the point started")
    if task.state == "COMPLETED":
        return "failed", "slurm: task ended without a final status.json"
    return "failed", f"slurm: {task.state}" + (f" ({task.reason})" if task.reason else "")


def job_finished(tasks: dict[int, TaskState], n_tasks: int) -> bool:
    """Every task is known to Slurm and none is active."""
    return len(tasks) >= n_tasks and all(not tasks[t].active for t in range(n_tasks) if t in tasks) \
        and all(t in tasks for t in range(n_tasks))
