"""The harness installs and runs on aarch64: tools/aarch64-check.sh --docker in an emulated arm64 Debian rootfs
(the driver venv as the cluster path builds it, `harness --version`, `harness plan` of the GB300 recipe, one
streamed request to the simulator, then containers/Dockerfile's install steps).

Opt-in: HARNESS_AARCH64_EMULATION=1 (needs root, debootstrap and qemu-user-static, which the script installs with
apt-get). The first run makes the rootfs and compiles crick twice under emulation (about half an hour on two
cores); later runs reuse the rootfs and pip's cache (HARNESS_AARCH64_CACHE).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.long,
              pytest.mark.skipif(os.environ.get("HARNESS_AARCH64_EMULATION") != "1",
                                 reason="emulated aarch64 install: opt-in with HARNESS_AARCH64_EMULATION=1 "
                                        "(root, about half an hour the first time)")]


def test_the_driver_and_the_client_image_install_and_run_on_emulated_aarch64() -> None:
    proc = subprocess.run(["bash", str(REPO / "tools" / "aarch64-check.sh"), "--docker"], capture_output=True,
                          text=True, timeout=3600, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "aarch64-check: passed" in proc.stdout
    assert "uname -m = aarch64" in proc.stdout and "streamed " in proc.stdout
