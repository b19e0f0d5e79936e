"""No secret on shared storage: `harness submit` (dry run and real) of a recipe with a secret in every input
channel writes none of them (sweep plan, batch script, job record, every point artifact, Slurm logs) and prints
none, yet the server of the array task is launched with the real values."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.secret_channels import (
    PROFILE_SECRET,
    PROFILE_SECRET_NAME,
    SECRETS,
    leaks,
    set_args,
    text_leaks,
    write_profile,
    write_recipe,
)
from tests.slurm.conftest import ROOT, harness
from tests.slurm.test_sweep import _server_env

# The secret only the cluster profile names (written by `write_profile`), set on the server's environment.
EXTRA = {"cluster profile secret_names": PROFILE_SECRET}


def _args() -> list[str]:
    return [*set_args(), "--set", f"server.env.{PROFILE_SECRET_NAME}={PROFILE_SECRET}"]


def test_dry_run_and_preflight_write_and_print_no_secret(slurm: None, harness_env: dict[str, str],
                                                         tmp_path: Path) -> None:
    recipe, out, profile = write_recipe(tmp_path), tmp_path / "sweep", write_profile(tmp_path)
    pre = harness(harness_env, "preflight", str(recipe), "--cluster", str(profile), "--json", *_args())
    dry = harness(harness_env, "submit", str(recipe), "--cluster", str(profile), "--out", str(out), "--dry-run",
                  *_args())
    assert dry.returncode == 0, dry.stderr
    plan_file = next(out.glob("slurm/plan-*.json"))
    plan = json.loads(plan_file.read_text())
    env = plan["points"][0]["server"]["env"]
    # a secret and a value outside the allow-list travel sealed alike; the task puts both back
    assert env["HF_TOKEN"].startswith("<redacted:") and env["SGLANG_MAX_TOKENS"].startswith("<redacted:")
    assert leaks(out, EXTRA) + text_leaks("preflight --json", pre.stdout + pre.stderr, EXTRA) \
        + text_leaks("submit --dry-run", dry.stdout + dry.stderr, EXTRA) == []


def test_submitted_task_gets_the_values_and_writes_none(slurm: None, harness_env: dict[str, str],
                                                        tmp_path: Path) -> None:
    recipe, out, profile = write_recipe(tmp_path), tmp_path / "sweep", write_profile(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "submit", str(recipe), "--cluster", str(profile), "--out", str(out),
         "--duration", "8", "--wait", "--json", "--interval", "1", *_args()],
        cwd=ROOT, env=harness_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    server_env = None
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        for cmd_file in out.glob("*/variants/*/conc4/server_command.txt"):
            port = cmd_file.read_text().split("--port ", 1)[-1].split()[0]
            server_env = server_env or _server_env(port)
        time.sleep(0.5)
    stdout, stderr = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    assert proc.returncode == 0, stderr
    assert server_env is not None, "the task's server was never seen running"
    assert server_env["HF_TOKEN"] == SECRETS["recipe server.env HF_TOKEN"]
    assert server_env["AWS_SECRET_ACCESS_KEY"] == SECRETS["--set server.env"]
    assert server_env[PROFILE_SECRET_NAME] == PROFILE_SECRET
    assert "HARNESS_SECRETS" not in server_env
    assert json.loads(stdout)["points"][0]["state"] == "completed"
    state_dir = Path(harness_env["HARNESS_STATE_DIR"])
    assert leaks(out, EXTRA) + leaks(state_dir, EXTRA) + text_leaks("submit --wait --json", stdout + stderr, EXTRA) == []
    status = harness(harness_env, "status", json.loads(stdout)["job_id"], "--json")
    assert text_leaks("status --json", status.stdout + status.stderr, EXTRA) == []


@pytest.fixture(autouse=True)
def _state_dir_exists(harness_env: dict[str, str]) -> None:
    Path(harness_env["HARNESS_STATE_DIR"]).mkdir(parents=True, exist_ok=True)
