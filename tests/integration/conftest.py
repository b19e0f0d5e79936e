"""Shared helpers for integration tests: plans of a small simulator recipe with extra simulator flags."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"


def sim_plan(extra_sim_flags: list[str] | None = None, overrides: list[str] | None = None):
    from harness.recipe.points import load_plans

    _, plans = load_plans(DATA / "sim-small.yaml", None, overrides or [])
    plan = plans[0]
    argv = [*plan.server.argv, *(extra_sim_flags or [])]
    return plan.model_copy(update={"server": plan.server.model_copy(update={"argv": argv})})


def wait_for_phase(proc: subprocess.Popen[str] | subprocess.Popen[bytes], status_path: Path,
                   phases: str | tuple[str, ...], within_s: float) -> dict[str, Any]:
    """Wait until a harness subprocess's status.json shows one of `phases`; its status then. Kill the process
    and fail the test (with the end of its output) when it ends first or `within_s` passes."""
    wanted = (phases,) if isinstance(phases, str) else phases
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if status_path.exists():
            try:
                status: dict[str, Any] = json.loads(status_path.read_text())
            except ValueError:   # caught mid-write
                status = {}
            if status.get("phase") in wanted:
                return status
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    out = proc.stdout.read() if proc.stdout else ""
    log = status_path.parent / "harness.log"
    told = log.read_text(errors="replace")[-2000:] if log.exists() else "(no harness.log)"
    pytest.fail(f"the run never reached {' or '.join(wanted)}: {str(out)[-2000:]}\n{log}:\n{told}")


def wait_until_evaluating(proc: subprocess.Popen[str] | subprocess.Popen[bytes], status_path: Path,
                          within_s: float) -> None:
    """Wait until a `harness eval` subprocess has started lm-eval (phase `evaluating` in its status.json)."""
    wait_for_phase(proc, status_path, "evaluating", within_s)


def group_gone(pid: int | None, within_s: float = 5.0) -> bool:
    """True once no process of the group `pid` exists (killed processes take a moment to be reaped)."""
    import time

    if pid is None:
        return True
    deadline = time.monotonic() + within_s
    while True:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


@pytest.fixture
def sim_plan_factory():
    return sim_plan


def stop_process(proc: subprocess.Popen[Any]) -> None:
    """Terminate a test's child process, killing it if it has not exited within 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# sglang-router and smg retitle their process (`/proc/PID/cmdline`): no argument of theirs can be matched
ROUTER_TITLES = (b"sglang::router", b"smg::router")


def live_routers() -> list[int]:
    """Pids of every sglang-router or smg process on this machine, by the title each gives itself."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmd = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
        except OSError:
            continue
        if cmd.startswith(ROUTER_TITLES):
            found.append(int(entry.name))
    return found


def port_listeners(ports: tuple[int, ...]) -> list[str]:
    """Who listens on any of `ports` (the harness's own reading of /proc, `harness.point.servers.port_owner`)."""
    from harness.point.servers import port_owner

    return [port_owner.describe(pid) for port in ports for pid in port_owner.listener_pids(port)]
