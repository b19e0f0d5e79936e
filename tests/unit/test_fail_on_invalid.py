"""`--fail-on-invalid` (follow, submit --wait, the workflow's `fail_on_invalid` input): the exit status of a
finished sweep, decided from its point views."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from slurm.progress import exit_status, invalid

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "agentic-sweep.yml"


def view(state: str = "completed", valid: bool | None = True, exit_code: int | None = 0, kind: str = "point",
         passed: bool | None = None, result: str | None = "bmk.json") -> dict[str, Any]:
    return {"state": state, "valid": valid, "exit_code": exit_code, "kind": kind, "passed": passed, "result": result}


@pytest.mark.parametrize(("views", "default", "strict"), [
    ([view(), view()], 0, 0),                                                  # all valid
    ([view(), view(valid=False, exit_code=3)], 0, 3),                          # one invalid: green unless strict
    ([view(), view(valid=None, exit_code=3)], 0, 3),                           # no verdict in status: its exit code
    ([view(valid=False, exit_code=3), view(state="failed", result=None, exit_code=1)], 1, 1),   # failed wins
    ([view(state="cancelled", result=None, exit_code=143)], 1, 1),
    ([view(), view(kind="eval", valid=None, passed=False, exit_code=3)], 3, 3),   # the eval below its threshold
    ([view(), view(kind="eval", valid=None, passed=True, exit_code=0)], 0, 0),
    ([], 1, 1),
])
def test_exit_status(views: list[dict[str, Any]], default: int, strict: int) -> None:
    assert exit_status(views) == default
    assert exit_status(views, fail_on_invalid=True) == strict


def test_an_eval_is_never_an_invalid_point() -> None:
    assert not invalid(view(kind="eval", valid=None, exit_code=3))
    assert invalid(view(valid=False, exit_code=0)) and not invalid(view(valid=True, exit_code=3))


def test_submit_takes_it_only_with_wait(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    assert main(["submit", "recipes/quickstart-sim.yaml", "--cluster", "clusters/local-ci.yaml",
                 "--fail-on-invalid"]) == 2
    assert "--fail-on-invalid: only with --wait" in capsys.readouterr().err


@pytest.mark.parametrize(("value", "passed"), [("true", True), ("false", False)])
def test_the_workflow_input_reaches_follow(tmp_path: Path, value: str, passed: bool) -> None:
    """The follow step, run as bash with a stand-in harness that prints its arguments."""
    wf = yaml.safe_load(WORKFLOW.read_text())
    inputs = wf[True]["workflow_dispatch"]["inputs"]        # YAML 1.1 reads `on` as True
    assert inputs["fail_on_invalid"]["type"] == "boolean" and inputs["fail_on_invalid"]["default"] is False
    assert wf["jobs"]["sweep"]["env"]["FAIL_ON_INVALID"] == "${{ inputs.fail_on_invalid }}"
    step = {s.get("name"): s for s in wf["jobs"]["sweep"]["steps"]}["Follow the sweep to its end"]["run"]
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "harness"
    fake.write_text('#!/bin/sh\necho "$@"\n')
    fake.chmod(0o755)
    proc = subprocess.run(["bash", "-c", step], capture_output=True, text=True, timeout=10, check=True,
                          env={**os.environ, "HARNESS_VENV": str(tmp_path), "JOB_ID": "42", "FAIL_ON_INVALID": value})
    args = proc.stdout.split()
    assert args[:2] == ["follow", "42"] and ("--fail-on-invalid" in args) is passed
