"""Every dependency of the harness installs on aarch64 (GB300's Grace hosts) from a wheel, or is on the documented
list of source builds (harness.preflight.arch.AARCH64_SOURCE_BUILDS): tools/aarch64_wheels.py against PyPI.

Needs PyPI: skipped where it cannot be reached, except when HARNESS_REQUIRE_PYPI=1 (set by .ci/run), when that
is a failure. About a minute (pip's dry-run resolution of the pinned client and lm-eval).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import aarch64_wheels  # noqa: E402

pytestmark = pytest.mark.long   # PyPI and pip's resolution of every pin: make test-all


def pypi_reachable() -> str | None:
    """None when PyPI's simple index answers, else why not."""
    try:
        with urllib.request.urlopen(aarch64_wheels.SIMPLE + "/pip/", timeout=10) as resp:
            return None if resp.status == 200 else f"HTTP {resp.status}"
    except (urllib.error.URLError, OSError) as exc:
        return str(exc)


@pytest.fixture(scope="module", autouse=True)
def pypi() -> None:
    why = pypi_reachable()
    if why is None:
        return
    if os.environ.get("HARNESS_REQUIRE_PYPI") == "1":
        pytest.fail(f"HARNESS_REQUIRE_PYPI=1 but PyPI cannot be reached: {why}")
    pytest.skip(f"PyPI cannot be reached ({why}; HARNESS_REQUIRE_PYPI=1 makes this a failure)")


def test_every_dependency_has_an_aarch64_wheel_or_is_a_listed_source_build() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "tools/aarch64_wheels.py"), "--json"], capture_output=True,
                          text=True, timeout=600, cwd=REPO)
    assert proc.returncode in (0, 1), proc.stderr
    got = json.loads(proc.stdout)
    assert got["missing"] == [], (
        f"no aarch64 wheel and not in harness.preflight.arch.AARCH64_SOURCE_BUILDS: {got['missing']}")
    assert proc.returncode == 0
    assert got["releases"] > 50   # the resolution covered the client's dependency tree, not an empty list


def test_a_dependency_without_an_aarch64_wheel_that_is_not_listed_fails() -> None:
    tags = aarch64_wheels.aarch64_tags()
    crick = aarch64_wheels.release("crick", "0.0.8", tags)          # x86_64 wheels and an sdist only
    assert crick.wheel is None and crick.sdist
    numpy = aarch64_wheels.release("numpy", "2.2.6", tags)
    assert numpy.wheel is not None and "aarch64" in numpy.wheel
    allowed, failures = aarch64_wheels.check([crick, numpy], {})
    assert (allowed, failures) == ([], [crick])
    allowed, failures = aarch64_wheels.check([crick, numpy], {"Crick": "gcc"})
    assert (allowed, failures) == ([crick], [])
