"""The docker tier: points served from a real container (`harness-sim:local`, built by `tools/sim-image.sh`).

Needs a running docker daemon. Without one these tests are skipped, unless HARNESS_REQUIRE_DOCKER=1 (set by
`.ci/run`, which installs and starts docker), when they fail. The session builds the image first (a no-op when an
image of the same project hash exists).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "harness-sim:local"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "docker: needs a running docker daemon (tests/docker; bash tools/sim-image.sh)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.docker)
            item.add_marker(pytest.mark.slow)


def _unavailable(why: str) -> None:
    if os.environ.get("HARNESS_REQUIRE_DOCKER") == "1":
        pytest.fail(f"HARNESS_REQUIRE_DOCKER=1 but {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def sim_image() -> str:
    """`harness-sim:local`, built (or found up to date) for this checkout."""
    try:
        info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _unavailable(f"docker does not run here ({exc})")
    if info.returncode != 0:
        _unavailable(f"no docker daemon answers ({info.stderr.strip()[:200]})")
    build = subprocess.run(["bash", str(ROOT / "tools" / "sim-image.sh")], cwd=ROOT, capture_output=True, text=True,
                           timeout=1200, check=False)
    assert build.returncode == 0, build.stderr[-2000:]
    return IMAGE


def containers_of(point_dir: Path, running_only: bool = False) -> list[str]:
    """Names of the containers the harness started for `point_dir` (by its label), running or (default) any."""
    argv = ["docker", "ps", "--format", "{{.Names}}", "--filter", f"label=io.harness.point={point_dir}"]
    out = subprocess.run(argv if running_only else [*argv, "-a"], capture_output=True, text=True, timeout=30,
                         check=True)
    return out.stdout.split()
