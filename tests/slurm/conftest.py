"""Tests against a REAL Slurm (start it with `bash tools/slurm-local-setup.sh start`).

Without a reachable controller these tests are skipped, unless HARNESS_REQUIRE_SLURM=1, when they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "recipes" / "quickstart-sim.yaml"
LOCAL_CI = ROOT / "clusters" / "local-ci.yaml"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.slurm)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def slurm() -> None:
    from slurm.query import slurm_available

    if slurm_available():
        return
    if os.environ.get("HARNESS_REQUIRE_SLURM") == "1":
        pytest.fail("HARNESS_REQUIRE_SLURM=1 but no Slurm controller answers (bash tools/slurm-local-setup.sh start)")
    pytest.skip("no Slurm controller (start one: bash tools/slurm-local-setup.sh start)")


@pytest.fixture(scope="session")
def harness_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    state = tmp_path_factory.mktemp("harness-state")
    return {**os.environ, "HARNESS_STATE_DIR": str(state), "PYTHONUNBUFFERED": "1"}


def harness(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def submit(env: dict[str, str], out: Path, *extra: str) -> str:
    proc = harness(env, "submit", str(QUICKSTART), "--cluster", str(LOCAL_CI), "--out", str(out), *extra)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def status(env: dict[str, str], job: str) -> dict[str, Any]:
    proc = harness(env, "status", job, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def wait_for(predicate: Any, timeout: float, what: str, interval: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
