"""Process-group teardown and readiness against real processes and sockets."""

import os
import sys
import time

import pytest

from harness.point.servers.readiness import NotReady, wait_until_ready
from launchers.process_group import ProcessGroup


def test_stop_kills_the_whole_group_including_children_that_ignore_sigterm(tmp_path):
    script = "trap '' TERM; sleep 300 & sleep 300 & wait"
    pg = ProcessGroup(["bash", "-c", script], dict(os.environ), tmp_path / "server.log")
    time.sleep(0.3)
    assert pg.group_alive()
    t0 = time.monotonic()
    pg.stop(grace_s=1.0)
    assert time.monotonic() - t0 < 10
    assert not pg.group_alive()


def test_stop_is_quick_for_a_cooperative_process(tmp_path):
    pg = ProcessGroup([sys.executable, "-c", "import time; time.sleep(300)"], dict(os.environ), tmp_path / "l")
    time.sleep(0.2)
    t0 = time.monotonic()
    code = pg.stop(grace_s=10)
    assert time.monotonic() - t0 < 3 and code == -15


def test_a_server_that_dies_while_loading_is_noticed_at_once(tmp_path):
    pg = ProcessGroup([sys.executable, "-c", "import sys, time; time.sleep(0.5); sys.exit(7)"],
                      dict(os.environ), tmp_path / "l")
    t0 = time.monotonic()
    with pytest.raises(NotReady) as exc:
        wait_until_ready("http://127.0.0.1:9", "m", pg.exit_code, budget_s=60, poll_s=0.1)
    assert exc.value.reason == "server_exited" and "status 7" in str(exc.value)
    assert time.monotonic() - t0 < 5
    pg.stop()


def test_a_server_that_never_becomes_healthy_times_out_within_budget(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # a plain HTTP server: /health is 404, never 200
    pg = ProcessGroup([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                      dict(os.environ), tmp_path / "l", cwd=tmp_path)
    t0 = time.monotonic()
    with pytest.raises(NotReady) as exc:
        wait_until_ready(f"http://127.0.0.1:{port}", "m", pg.exit_code, budget_s=2, poll_s=0.2)
    assert exc.value.reason == "ready_timeout"
    assert time.monotonic() - t0 < 8
    pg.stop()
