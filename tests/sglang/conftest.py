"""Tests against REAL SGLang (the tier `bash tools/sglang-cpu-setup.sh` installs: sglang 0.5.23 on its plain-torch
CPU path in a venv outside the repository, a tiny random-weight Llama, and the unpacked 0.5.20 and 0.5.23 wheels).

Without the tier these tests are skipped, unless HARNESS_REQUIRE_SGLANG=1 (as `.ci/run` sets), when they fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "tools" / "sglang-cpu-setup.sh"
RECIPE = ROOT / "recipes" / "tiny-llama-cpu-sglang.yaml"


@dataclass(frozen=True)
class Tier:
    home: Path
    venv: Path
    model: Path
    wheels: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def env(self, **extra: str) -> dict[str, str]:
        """This process's environment with the SGLang venv first on PATH (the local launcher runs `python3 -m
        sglang.launch_server`)."""
        return {**os.environ, "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                "PYTHONUNBUFFERED": "1", **extra}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.sglang)
            item.add_marker(pytest.mark.slow)


def _tier() -> Tier | None:
    home = Path(os.environ.get("HARNESS_SGLANG_HOME") or Path.home() / ".cache" / "harness" / "sglang-cpu")
    tier = Tier(home, home / "venv", home / "tiny-llama", home / "wheels")
    if subprocess.run(["bash", str(SETUP), "check"], env={**os.environ, "HARNESS_SGLANG_HOME": str(home)},
                      capture_output=True, check=False).returncode != 0:
        return None
    return tier


@pytest.fixture(scope="session")
def sglang_tier() -> Tier:
    tier = _tier()
    if tier is not None:
        return tier
    if os.environ.get("HARNESS_REQUIRE_SGLANG") == "1":
        pytest.fail("HARNESS_REQUIRE_SGLANG=1 but the real-SGLang tier is not installed (bash tools/sglang-cpu-setup.sh)")
    pytest.skip("real-SGLang tier not installed (bash tools/sglang-cpu-setup.sh)")


def harness(env: dict[str, str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`harness ARGS` with this interpreter, from the repository root (the recipe names its model relative to it)."""
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
