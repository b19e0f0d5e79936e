"""The code stays lint-clean (ruff) and type-checked (mypy, strict on harness/)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (it comes with the dev extras: pip install -e '.[dev]')")
    return found


def test_ruff():
    proc = subprocess.run([_tool("ruff"), "check", "harness", "launchers", "slurm", "tests", "benchmarks"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy_strict_on_harness():
    proc = subprocess.run([_tool("mypy"), "--strict", "harness"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
