"""Slurm state parsing and each point's state: exact values on captured sacct/scontrol output."""

from __future__ import annotations

import pytest

from slurm.state import (
    TaskState,
    expand_task_ids,
    job_finished,
    merge_states,
    parse_exit_code,
    parse_sacct,
    parse_scontrol,
    point_state,
)

SACCT = """\
8_0|9|COMPLETED|0:0|None|vm
8_1|10|FAILED|3:0|NonZeroExitCode|vm
8_2|11|CANCELLED by 0|0:15|None|vm
8_3|12|TIMEOUT|0:0|TimeLimit|vm
8_[4-6,9%2]|8|PENDING|0:0|JobArrayTaskLimit|None assigned
80_0|81|RUNNING|0:0|None|vm
"""

SCONTROL = (
    "JobId=21 ArrayJobId=20 ArrayTaskId=1 ArrayTaskThrottle=2 JobName=harness-q JobState=RUNNING Reason=None "
    "ExitCode=0:0 NodeList=vm\n"
    "JobId=20 ArrayJobId=20 ArrayTaskId=2-3%2 JobName=harness-q JobState=PENDING Reason=JobArrayTaskLimit "
    "ExitCode=0:0 NodeList=(null)\n"
    "JobId=22 ArrayJobId=20 ArrayTaskId=0 JobName=harness-q JobState=FAILED Reason=NonZeroExitCode "
    "ExitCode=138:0 NodeList=vm\n"
)


@pytest.mark.parametrize("text,code", [("0:0", 0), ("3:0", 3), ("138:0", 138), ("0:15", 143), ("0:9", 137),
                                       ("", None), ("x", None)])
def test_exit_codes(text: str, code: int | None) -> None:
    assert parse_exit_code(text) == code


def test_task_ranges() -> None:
    assert expand_task_ids("[4-6,9%2]") == [4, 5, 6, 9]
    assert expand_task_ids("3") == [3]
    assert expand_task_ids("2-3%2") == [2, 3]


def test_parse_sacct() -> None:
    tasks = parse_sacct(SACCT, "8")
    assert sorted(tasks) == [0, 1, 2, 3, 4, 5, 6, 9]
    assert tasks[0] == TaskState(0, "COMPLETED", 0, None, "vm", "9")
    assert tasks[1] == TaskState(1, "FAILED", 3, "NonZeroExitCode", "vm", "10")
    assert (tasks[2].state, tasks[2].exit_code) == ("CANCELLED", 143)
    assert (tasks[3].state, tasks[3].reason) == ("TIMEOUT", "TimeLimit")
    assert tasks[5] == TaskState(5, "PENDING", 0, "JobArrayTaskLimit", None, None)
    assert tasks[5].active and not tasks[0].active


def test_an_older_job_of_the_same_id_in_accounting_is_not_this_job() -> None:
    """After a controller's state is reset, ids start again; the accounting database still has the old jobs."""
    from datetime import datetime

    submitted_ns = int(datetime.fromisoformat("2026-12-03T07:03:36").timestamp() * 1e9)
    text = ("13_0|14|FAILED|3:0|NonZeroExitCode|n1|2026-12-02T21:10:05\n"     # yesterday's job 13
            "13_1|15|RUNNING|0:0|None|n2|2026-12-03T07:03:36\n"
            "13_2|13|PENDING|0:0|JobArrayTaskLimit|None assigned|Unknown\n")
    assert sorted(parse_sacct(text, "13")) == [0, 1, 2]
    tasks = parse_sacct(text, "13", submitted_ns)
    assert sorted(tasks) == [1, 2] and tasks[1].state == "RUNNING"


def test_parse_scontrol() -> None:
    tasks = parse_scontrol(SCONTROL, "20")
    assert tasks[0] == TaskState(0, "FAILED", 138, "NonZeroExitCode", "vm", "22")
    assert tasks[1] == TaskState(1, "RUNNING", 0, None, "vm", "21")
    assert tasks[3] == TaskState(3, "PENDING", 0, "JobArrayTaskLimit", None, None)
    assert parse_scontrol(SCONTROL, "99") == {}


def test_merge_prefers_ended_then_live() -> None:
    acct = {0: TaskState(0, "RUNNING", 0), 1: TaskState(1, "COMPLETED", 0), 2: TaskState(2, "PENDING", 0)}
    live = {0: TaskState(0, "COMPLETED", 0), 1: TaskState(1, "COMPLETING", 0), 3: TaskState(3, "RUNNING", 0)}
    merged = merge_states(acct, live)
    assert {t: s.state for t, s in merged.items()} == {0: "COMPLETED", 1: "COMPLETED", 2: "PENDING",
                                                        3: "RUNNING"}


def test_job_finished() -> None:
    done = {0: TaskState(0, "COMPLETED", 0), 1: TaskState(1, "CANCELLED", 143)}
    assert job_finished(done, 2)
    assert not job_finished(done, 3)
    assert not job_finished({**done, 1: TaskState(1, "RUNNING", 0)}, 2)


def T(state: str, code: int | None = 0, reason: str | None = None) -> TaskState:
    return TaskState(0, state, code, reason)


@pytest.mark.parametrize("task,status,expected", [
    (T("COMPLETED"), {"state": "completed"}, ("completed", None)),
    (T("FAILED", 138), {"state": "cancelled", "reason": "walltime_margin: x"}, ("cancelled", "walltime_margin: x")),
    (T("RUNNING"), {"state": "completed"}, ("completed", None)),
    (T("PENDING", reason="Resources"), None, ("pending", "Resources")),
    (T("RUNNING"), {"state": "running", "phase": "loading"}, ("running", None)),
    (T("CANCELLED", 143), None, ("cancelled", "slurm: CANCELLED before the point started")),
    (T("TIMEOUT"), {"state": "running"}, ("cancelled", "slurm: TIMEOUT")),
    (T("NODE_FAIL"), {"state": "running"}, ("failed", "slurm: NODE_FAIL")),
    (T("FAILED", 2, "NonZeroExitCode"), None, ("failed", "slurm: FAILED (NonZeroExitCode)")),
    (T("COMPLETED"), None, ("failed", "slurm: task ended without a final status.json")),
    (None, {"state": "failed", "reason": "r"}, ("failed", "r")),
    (None, None, ("unknown", "no record in Slurm and no status.json")),
])
def test_point_state(task: TaskState | None, status: dict[str, object] | None,
                     expected: tuple[str, str | None]) -> None:
    assert point_state(task, status) == expected


def test_completing_tasks_are_not_over() -> None:
    from slurm.state import mark_completing

    tasks = {0: TaskState(0, "CANCELLED", 143, None, "vm", "13"), 1: TaskState(1, "CANCELLED", 0)}
    marked = mark_completing(tasks, "12_0|COMPLETING\n12_[1]|PENDING\n99_1|COMPLETING\n", "12")
    assert marked[0] == TaskState(0, "COMPLETING", None, None, "vm", "13") and marked[0].active
    assert marked[1] == tasks[1]
