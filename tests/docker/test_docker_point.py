"""A point served from a real container: `harness run --launcher docker` on `harness-sim:local`.

The server runs inside the container (its environment and fingerprint are read there), the run leaves no container,
a SIGKILLed harness leaves no running container and the next run of the point starts, and docker's own refusals
(a missing image, a mount source that does not exist) and a port already taken end the point in a named reason
with the runtime's or the server's own words.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.point.run import PointOptions, run_point
from tests.integration.conftest import sim_plan, wait_for_phase

from .conftest import ROOT, containers_of

QUICKSTART = ROOT / "recipes" / "quickstart-sim.yaml"


def _harness(*args: str, out: Path) -> subprocess.Popen[str]:
    """`harness run` of the quickstart; its output goes to a file beside the runs (a pipe nobody reads fills up)."""
    log = open(out.parent / f"{out.name}-harness-{time.monotonic_ns()}.log", "w")  # noqa: SIM115 - the child's
    with log:
        return subprocess.Popen([sys.executable, "-m", "harness", "run", str(QUICKSTART), *args, "--out", str(out)],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _point_dir(out: Path, image: str, duration: int) -> Path:
    return out / "quickstart-sim" / "variants" / f"image={image.replace(':', '_')},duration_s={duration}" / "conc2"


def _container_name(point: Path) -> str:
    return (point / "server_command.txt").read_text().split("--name ", 1)[1].split()[0]


def _attempt(point: Path) -> str | None:
    """The attempt status.json names; None while it is being set aside or written."""
    try:
        return _read(point / "status.json").get("attempt")
    except (OSError, ValueError):
        return None


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def documented_command() -> list[str]:
    """The arguments after the recipe of docs/running.md's `harness run ... --launcher docker ...` example."""
    text = " ".join((ROOT / "docs" / "running.md").read_text().split())
    match = re.search(r"`harness run recipes/quickstart-sim\.yaml (--point c2 --launcher docker [^`]*)`", text)
    assert match, "docs/running.md lost its docker example"
    return match.group(1).split()


def test_the_documented_point_is_served_valid_from_inside_the_container_and_leaves_no_container(
        sim_image: str, tmp_path: Path) -> None:
    args = documented_command()
    assert f"image={sim_image}" in args
    proc = _harness(*args, out=tmp_path)
    proc.wait(timeout=600)
    point = next((tmp_path / "quickstart-sim" / "variants").glob("*/conc2"))
    assert proc.returncode == 0, (point / "harness.log").read_text()[-3000:]   # completed and valid, as documented
    status = _read(point / "status.json")
    assert status["state"] == "completed" and status["launcher"] == "docker"
    command = (point / "server_command.txt").read_text().splitlines()[0]
    assert command.startswith("docker run --rm --name harness-quickstart-sim-c2-") and f" {sim_image} " in command
    assert containers_of(point) == []   # --rm, and stopped with the point
    # the environment was read inside the container: the harness's variable and the image's own ENV
    env = _read(point / "server_env.json")
    assert env["source"].startswith("docker exec harness-quickstart-sim-c2-")
    assert env["effective"]["HARNESS_SIM_SGLANG_VERSION"] == env["expected"]["HARNESS_SIM_SGLANG_VERSION"]
    assert env["effective"]["SGLANG_SIMULATE_ACC_LEN"] == "1.0" and env["not_applied"] == []
    record = _read(point / "point_result.json")
    assert record["server_env"]["effective"] == env["effective"]
    assert "env_not_applied" not in {r["code"] for r in record["validity"]["reasons"]}
    # the fingerprint was captured inside the image: its OS, its interpreter, its environment
    fp = _read(point / "fingerprint_agg_w0.json")
    assert fp["os"].startswith("Debian GNU/Linux 12") and fp["capture"]["python_executable"] == "/opt/harness/bin/python3"
    assert fp["env"]["SGLANG_SIMULATE_ACC_LEN"] == "1.0"
    assert fp["server"]["effective_env"]["effective"] == env["effective"]


def test_sigkill_in_profiling_leaves_no_running_container_and_the_point_runs_again(sim_image: str,
                                                                                   tmp_path: Path) -> None:
    args = ("--point", "c2", "--launcher", "docker", "--set", f"image={sim_image}", "--duration", "60")
    point = _point_dir(tmp_path, sim_image, 60)
    proc = _harness(*args, out=tmp_path)
    try:
        first = wait_for_phase(proc, point / "status.json", "profiling", within_s=300)["attempt"]
        assert len(containers_of(point, running_only=True)) == 1
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 30   # the group's watchdog stops docker and removes the container
    while containers_of(point) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert containers_of(point) == []
    # a container of the point left behind (as by a daemon that missed the removal) is removed by the next run, and
    # the killed run's removal, however late, never reaches the next run's container (each launch has its own name)
    name = _container_name(point)
    subprocess.run(["docker", "run", "-d", "--name", name, "--label", f"io.harness.point={point}", sim_image,
                    "sleep", "600"], check=True, capture_output=True, timeout=60)
    again = _harness(*args, out=tmp_path)
    try:
        deadline = time.monotonic() + 300
        while _attempt(point) in (first, None):   # the killed run's status, until set aside and rewritten
            assert again.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        wait_for_phase(again, point / "status.json", "profiling", within_s=300)
        new_name = _container_name(point)
        assert new_name != name and containers_of(point, running_only=True) == [new_name]
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=60, check=False)   # a late removal
        assert containers_of(point, running_only=True) == [new_name]
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=120)
    finally:
        if again.poll() is None:
            again.kill()
    assert _read(point / "status.json")["state"] == "cancelled"
    assert containers_of(point) == []
    assert any((point / "attempts").iterdir())   # the killed run kept as an earlier attempt


def _run(tmp_path: Path, image: str, mounts: tuple[str, ...] = ()) -> Any:
    plan = sim_plan([], overrides=[f"image={image}"])
    return run_point(plan, PointOptions(out_dir=tmp_path, launcher="docker", mounts=mounts, ready_timeout_s=60))


def test_a_missing_image_fails_in_dockers_words(sim_image: str, tmp_path: Path) -> None:
    outcome = _run(tmp_path, "harness-no-such-image:never")
    assert outcome.state == "failed" and outcome.reason.startswith("image_unavailable: "), outcome.reason
    assert "Unable to find image 'harness-no-such-image:never' locally" in outcome.reason
    assert containers_of(outcome.point_dir) == []


def test_a_mount_that_does_not_exist_fails_in_dockers_words(sim_image: str, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    outcome = _run(tmp_path, sim_image, mounts=(f"{missing}:/data:ro",))
    assert outcome.state == "failed" and outcome.reason.startswith("mount_missing: "), outcome.reason
    assert f"bind source path does not exist: {missing}" in outcome.reason
    assert not missing.exists() and containers_of(outcome.point_dir) == []


def test_a_port_taken_under_the_container_fails_in_the_servers_words(sim_image: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        monkeypatch.setattr("harness.point.servers.port_owner.free_port", lambda: port)
        monkeypatch.setattr("harness.point.servers.port_owner.port_free", lambda p: True)   # lost the race
        monkeypatch.setattr("harness.point.servers.port_owner.foreign_listener", lambda p, t: None)
        monkeypatch.setattr("harness.point.servers.readiness._get", lambda url, timeout: 0)
        outcome = _run(tmp_path, sim_image)
    assert outcome.state == "failed" and outcome.reason.startswith("port_in_use: server exited"), outcome.reason
    assert "address already in use" in outcome.reason.lower()   # the containerized server's own line
    assert containers_of(outcome.point_dir) == []
