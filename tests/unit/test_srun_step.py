"""Stopping an srun step: its tasks get SIGTERM through Slurm (srun would SIGKILL them); without an allocation or
a step of that name, srun's own process group is stopped instead."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from launchers import srun_step
from launchers.process_group import ProcessGroup

SQUEUE = "249.0|harness-server-prefill_w0\n249.1|fingerprint-harness-server-prefill_w0\n249.batch|batch\n" \
         "249.2|harness-server-prefill_w0\n"


def test_steps_are_found_by_their_exact_name() -> None:
    assert srun_step.step_ids(SQUEUE, "harness-server-prefill_w0") == ["249.0", "249.2"]
    assert srun_step.step_ids(SQUEUE, "batch") == ["249.batch"]
    assert srun_step.step_ids(SQUEUE, "harness-server") == []
    assert srun_step.step_ids("", "harness-server") == []


def test_outside_an_allocation_nothing_is_signalled_through_slurm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert srun_step.signal_steps("harness-server") == []


def test_without_a_step_the_process_group_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    group = ProcessGroup([sys.executable, "-c", "import time; time.sleep(60)"], {}, tmp_path / "x.log")
    code, how = srun_step.stop_step(group, "harness-server", grace_s=5)
    assert code == -15 and how.startswith("SIGTERM to its srun's process group")
    assert not group.group_alive()
