"""What a submitted sweep looks like now: one view per point, from the submission record, Slurm's task
states and each point's `status.json`; the JSON `harness submit --json` and `harness status --json` print."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.point.state.status import read_status, shown_phase
from harness.point.state.truth import reconciled_status
from slurm.state import TaskState, job_finished, point_state


def point_views(record: dict[str, Any], tasks: dict[int, TaskState]) -> list[dict[str, Any]]:
    """One view per point. Points of a reused deployment share task 0: a point not started yet while the task
    runs is pending, and each point's exit code is its own (`status.json`), not the task's."""
    views = []
    shared = bool(record.get("reuse_deployment"))
    for p in record["points"]:
        tid = int(p["task_id"])
        task = tasks.get(tid)
        status = typed_status(reconciled_status(Path(p["point_dir"]), read_status(Path(p["point_dir"]))))
        state, reason = point_state(task, status)
        if shared and status is None and task is not None and task.state != "PENDING":   # not reached yet
            if task.active:
                state, reason = "pending", "after the points before it on the shared deployment"
            else:
                state, reason = "cancelled", f"not run: the task ended (slurm {task.state}) before this point"
        if task is not None and not task.active and not (shared and status):
            exit_code = task.exit_code
        else:
            exit_code = status.get("exit_status") if status else None
        result = Path(p["point_dir"]) / p["result"]
        views.append({
            "conc": p["conc"], "task_id": tid, "state": state, "exit_code": exit_code,
            "result": str(result) if result.exists() else None,
            "name": p["name"], "reason": reason, "phase": shown_phase(status) if status else None,
            "valid": status.get("valid") if status else None,
            "publishable": status.get("publishable") if status else None,
            "kind": p.get("kind", "point"), "passed": status.get("passed") if status else None,
            "slurm_state": task.state if task else None, "node": task.node if task else None,
            "slurm_job_id": task.job_id if task else None, "point_dir": p["point_dir"],
        })
    return views


# The fields of a point's status.json a view shows, with their JSON types.
_STATUS_FIELDS: dict[str, type | tuple[type, ...]] = {
    "state": str, "reason": str, "phase": str, "exit_status": int, "valid": bool, "passed": bool}


def typed_status(status: dict[str, Any] | None) -> dict[str, Any] | None:
    """The fields a view shows of a status.json, each only when it has its type (a wrong-typed field, as in
    a foreign or damaged file, reads as absent); None when there is no status.json."""
    if status is None:
        return None
    return {k: v for k, v in status.items() if k in _STATUS_FIELDS and isinstance(v, _STATUS_FIELDS[k])
            and not (isinstance(v, bool) and _STATUS_FIELDS[k] is int)}


def job_json(record: dict[str, Any], views: list[dict[str, Any]]) -> dict[str, Any]:
    return {"job_id": record["job_id"], "out_dir": record["out_dir"], "points": views}


def finished(record: dict[str, Any], tasks: dict[int, TaskState], source: str | None) -> bool:
    """The job has ended: Slurm shows every task ended, or Slurm has forgotten the job entirely."""
    if source is None:
        return True
    return job_finished(tasks, len({int(p["task_id"]) for p in record["points"]}))


def exit_status(views: list[dict[str, Any]], fail_on_invalid: bool = False) -> int:
    """0 when every point (and the eval) completed and left its result file, 3 when all did but the eval
    scored below its threshold or, with `fail_on_invalid`, a point's verdict is invalid; else 1 (a point
    failed, was cancelled or left no result)."""
    if not views or not all(v["state"] == "completed" and v["result"] for v in views):
        return 1
    if any(v.get("kind") == "eval" and v.get("passed") is False for v in views):
        return 3
    return 3 if fail_on_invalid and any(invalid(v) for v in views) else 0


def invalid(view: dict[str, Any]) -> bool:
    """A point (not the eval) that completed with an invalid verdict: its status says `valid: false`, or its
    exit code is 3 where the status does not say."""
    if view.get("kind") == "eval":
        return False
    if isinstance(view.get("valid"), bool):
        return not view["valid"]
    return view.get("exit_code") == 3


def shown_state(view: dict[str, Any]) -> str:
    """A point's state as the tables print it: `completed, invalid (exit 3)` for a point that completed with an
    invalid verdict (its exit status 3 is what Slurm reports as the task FAILED), else the state."""
    if view["state"] == "completed" and invalid(view):
        return "completed, invalid" + ("" if view.get("exit_code") is None else f" (exit {view['exit_code']})")
    return str(view["state"])


def render_table(views: list[dict[str, Any]]) -> str:
    rows = [("task", "point", "state", "phase", "slurm", "exit", "result / reason")]
    for v in views:
        tail = Path(v["result"]).name if v["result"] else ""
        if v.get("publishable"):
            tail = f"{tail}  [{v['publishable']}]"
        if v["reason"]:
            tail = f"{tail}  ({v['reason']})" if tail else v["reason"]
        rows.append((str(v["task_id"]), v["name"], shown_state(v), v["phase"] or "-", v["slurm_state"] or "-",
                     "-" if v["exit_code"] is None else str(v["exit_code"]), tail))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1] for r in rows)
