"""tools/aarch64_dockerfile.py (a Dockerfile's install steps as a bash script, for the emulated arm64 rootfs where
there is no container engine), tools/aarch64_request.py (one streamed request to the simulator) and the simulator
step of tools/aarch64-check.sh, which stops the simulator's whole process tree whether its request passes or
fails."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
from pathlib import Path

import pytest

from harness.point.servers.port_owner import free_port

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import aarch64_dockerfile  # noqa: E402
import aarch64_request  # noqa: E402


def test_the_client_dockerfile_builds_wheels_with_a_compiler_and_installs_them_without_one() -> None:
    script = aarch64_dockerfile.translate((ROOT / "containers" / "Dockerfile").read_text())
    build, final = script.split("Dockerfile stage ")[1:]
    assert build.startswith("build ")
    assert "apt-get install -y --no-install-recommends gcc libc6-dev" in build
    assert "pip wheel --use-pep517 --wheel-dir /opt/wheels ." in build
    assert "export PATH=/opt/docker/stage-0/bin:$BASE_PATH" in build and "unset CC" in build
    assert "export PATH=/opt/docker/no-compiler:/opt/docker/stage-1/bin:$BASE_PATH" in final
    assert "pip install --no-index --find-links /opt/wheels agentic-bench-harness" in final
    assert "gcc" not in final.split("export CC=false")[1]


def test_a_translated_dockerfile_runs_its_stages_and_hides_the_compiler_in_the_last(tmp_path: Path) -> None:
    ctx, root, out = tmp_path / "ctx", tmp_path / "root", tmp_path / "out"
    (ctx / "src").mkdir(parents=True)
    (ctx / "src" / "a.txt").write_text("from the context\n")
    (ctx / "top.txt").write_text("top\n")
    dockerfile = f"""# two stages
FROM python:3.11-slim AS build
ENV GREETING=hello OTHER=x
WORKDIR {out}/build
COPY src ./src
COPY top.txt ./
RUN echo "$GREETING" > made.txt && \\
    cat src/a.txt >> made.txt
FROM python:3.11-slim
WORKDIR {out}/final
RUN --mount=type=bind,from=build,source={out}/build,target={out}/build cp {out}/build/made.txt . && \\
    python -c "import sys; print(sys.prefix)" > prefix.txt
RUN if gcc --version; then echo compiled > cc.txt; else echo none > cc.txt; fi
CMD ["--help"]
"""
    script = aarch64_dockerfile.translate(dockerfile, context=str(ctx), root=str(root))
    subprocess.run(["bash", "-euo", "pipefail", "-c", script], check=True, capture_output=True, timeout=120)
    assert (out / "build" / "made.txt").read_text() == "hello\nfrom the context\n"
    assert (out / "build" / "top.txt").read_text() == "top\n"
    assert (out / "final" / "made.txt").read_text() == "hello\nfrom the context\n"
    assert (out / "final" / "prefix.txt").read_text().strip() == str(root / "stage-1")   # the stage's own venv
    assert (out / "final" / "cc.txt").read_text() == "none\n"


@pytest.mark.parametrize(("line", "error"), [
    ("ARG VERSION=1", "line 2: ARG not supported"),
    ("RUN --mount=type=bind,from=build,source=/a,target=/b true", "source and target are the same path"),
    ("RUN --network=none true", "RUN flag --network not supported"),
    ("COPY --chown=1 a b", "COPY flag(s) ['chown'] not supported"),
    ("ENV KEY value", "ENV needs the KEY=value form"),
])
def test_what_the_translation_cannot_run_faithfully_is_an_error(line: str, error: str) -> None:
    with pytest.raises(aarch64_dockerfile.DockerfileError, match=re.escape(error)):
        aarch64_dockerfile.translate(f"FROM python:3.11-slim\n{line}\n")
    with pytest.raises(aarch64_dockerfile.DockerfileError, match="must start with FROM"):
        aarch64_dockerfile.translate("RUN true\n")


def test_the_request_helper_streams_one_completion_from_the_simulator(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with pytest.raises(TimeoutError, match="not ready after 1s"):
        aarch64_request.wait_ready(base, 1.0)
    sim = subprocess.Popen([sys.executable, "-m", "harness.sim", "--model-path", "m", "--served-model-name", "sim",
                            "--host", "127.0.0.1", "--port", str(port), "--sim-profile", "demo"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        assert aarch64_request.main([base, "sim", "--ready-timeout", "60"]) == 0
        got = aarch64_request.stream_chat(base, "sim")
        assert got["chunks"] == 32 and got["usage"]["completion_tokens"] == 32   # type: ignore[index]
        with pytest.raises(urllib.error.HTTPError):
            aarch64_request.stream_chat(base + "/nope", "sim")
    finally:
        sim.terminate()
        sim.wait(timeout=30)


# A stand-in for `chroot ROOT env -i ... CMD`: the simulator's start leaves a process tree (a child that keeps
# running, as qemu's emulated server does) and writes the pids; the request fails once they are up.
FAKE_CHROOT = """#!/bin/bash
if [[ "$*" == *"harness sim"* ]]; then
  sleep 300 & echo "$! $$" > "$SIM_PIDS.tmp" && mv "$SIM_PIDS.tmp" "$SIM_PIDS"
  exec sleep 300
fi
for _ in $(seq 100); do [ -s "$SIM_PIDS" ] && break; sleep 0.05; done
exit "$REQUEST_EXIT"
"""


def _sim_request_driver(check_script: str, tmp_path: Path) -> str:
    """bash that runs the simulator step of aarch64-check.sh (its own definitions, cut out of `check_script`) with
    the fake chroot, under `set -e` and the script's own kind of EXIT trap."""
    definitions = subprocess.run(
        ["sed", "-n", r"/^ROOTFS_ENV=(/,/)$/p; /^in_rootfs() {/,/^}/p; /^sim_request() {/,/^}/p"],
        input=check_script, capture_output=True, text=True, check=True).stdout
    return (f"set -euo pipefail\nsource {ROOT}/tools/background.sh\ntrap stop_background EXIT\n"
            f"ROOT=/nonexistent PORT=1 CACHE={tmp_path}\n{definitions}\n"
            "sim_request || { echo \"sim_request failed: $?\" > \"$CACHE/ended\"; exit 1; }\n"
            "echo passed > \"$CACHE/ended\"\n")


@pytest.mark.parametrize("request_exit", [0, 7])
def test_the_simulator_step_leaves_no_process_whether_its_request_passes_or_fails(tmp_path: Path,
                                                                                  request_exit: int) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "chroot").write_text(FAKE_CHROOT)
    (bin_dir / "chroot").chmod(0o755)
    driver = _sim_request_driver((ROOT / "tools" / "aarch64-check.sh").read_text(), tmp_path)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SIM_PIDS": str(tmp_path / "sim.pids"),
           "BACKGROUND_GRACE_S": "2", "REQUEST_EXIT": str(request_exit)}
    done = subprocess.run(["bash", "-c", driver], env=env, capture_output=True, text=True, timeout=60,
                          start_new_session=True)
    ended = "passed\n" if request_exit == 0 else f"sim_request failed: {request_exit}\n"
    assert done.returncode == (request_exit != 0) and (tmp_path / "ended").read_text() == ended, done.stderr
    pids = [int(p) for p in (tmp_path / "sim.pids").read_text().split()]
    try:
        assert all(_ended(pid) for pid in pids), f"the simulator's processes {pids} outlived the check"
    finally:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _ended(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return True
        except (OSError, IndexError):
            return True
        time.sleep(0.05)
    return False
