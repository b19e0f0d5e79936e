"""`harness submit --with-eval`: the eval as one more array task on the local Slurm, followed to its end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.evals.row import EvalRow
from tests.slurm.conftest import LOCAL_CI, QUICKSTART, ROOT, harness


def test_with_eval_adds_one_array_task_that_writes_the_eval_row(slurm: None, harness_env: dict[str, str],
                                                                tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "submit", str(QUICKSTART), "--cluster", str(LOCAL_CI), "--out", str(out),
         "--points", "c2", "c4", "--duration", "5", "--with-eval", "--limit", "12", "--wait", "--json",
         "--interval", "1"], cwd=ROOT, env=harness_env, capture_output=True, text=True, timeout=420)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    assert [(p["name"], p["task_id"], p["kind"], p["state"]) for p in data["points"]] == [
        ("c2", 0, "point", "completed"), ("c4", 1, "point", "completed"), ("eval-c4", 2, "eval", "completed")]
    ev = data["points"][2]
    assert ev["exit_code"] == 0 and ev["passed"] is True
    edir = out / "quickstart-sim" / "eval-conc4"            # the highest selected concurrency
    assert Path(ev["result"]) == edir / "eval_row_gsm8k.json"
    row = json.loads(Path(ev["result"]).read_text())
    EvalRow.model_validate(row)
    assert (row["conc"], row["n_eff"], row["score"]) == (4, 12, 1.0)
    status = json.loads((edir / "status.json").read_text())
    assert status["slurm"]["SLURM_ARRAY_TASK_ID"] == "2" and status["state"] == "completed"
    script = next((out / "slurm").glob("job-*.sh")).read_text()
    assert "--array=0-2" in script
    logs = harness(harness_env, "logs", data["job_id"], "--point", "eval-c4", "--kind", "client")
    assert logs.returncode == 0 and "lm_eval.log" in logs.stdout and "Requesting API" in logs.stdout
