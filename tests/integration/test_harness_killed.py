"""SIGKILL of the harness mid-run: the server and AIPerf die with it (the process-group watchdog), and the
next reader of the point's status (`sweep`, `status`) reconciles the stale `running` to `failed: harness_killed`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.point.state.status import read_status

from .conftest import DATA, group_gone

pytestmark = pytest.mark.slow


def _port_closed(port: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return True
        time.sleep(0.1)
    return False


def test_sigkill_of_the_harness_ends_server_and_client_and_status_is_reconciled(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(DATA / "sim-small.yaml"), "--point", "c4",
                             "--duration", "120", "--out", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    point = out / "it-sim" / "variants" / "duration_s=120" / "conc4"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        path = point / "status.json"
        if path.exists() and json.loads(path.read_text()).get("phase") == "profiling":
            break
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("the point never reached profiling")
    time.sleep(2)
    status = json.loads((point / "status.json").read_text())
    port = int((point / "server_command.txt").read_text().split("--port", 1)[1].split()[0])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert group_gone(status["server_pid"], within_s=10) and group_gone(status["client_pid"], within_s=10)
    assert _port_closed(port, within_s=1)
    assert json.loads((point / "status.json").read_text())["state"] == "running"  # nobody wrote it yet
    reconciled = read_status(point)
    assert reconciled is not None and reconciled["state"] == "failed" and reconciled["exit_status"] == 1
    assert reconciled["reason"].startswith(f"harness_killed: the harness process {proc.pid} ended")
    assert json.loads((point / "status.json").read_text())["state"] == "failed"
    assert "[state] failed: harness_killed" in (point / "harness.log").read_text()
