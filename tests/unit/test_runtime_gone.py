"""A docker daemon that goes away under a running server is named as such (`container_runtime_gone`, in docker's own
words), not taken for the server's own exit. The log lines are docker's real output: `docker run` against a daemon
that was SIGKILLed (the client's logrus line), against a daemon that is not running, `docker info` against a socket
nobody listens on; the newer client's wording and `error during connect` are the moby client's own formats."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.point.servers.serve import FreshServer
from harness.point.servers.server_crash import runtime_gone_reason
from harness.point.servers.server_failure import SERVER_FAILURES, failure_excerpt
from launchers import get_launcher
from launchers.docker import daemon_gone, runtime_gone, start_failure

NOT_RUNNING = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
KILLED_DAEMON = 'up\ntime="2026-12-06T13:45:56Z" level=error msg="error waiting for container: unexpected EOF"\n'
STOPPED_AT_START = f"docker: {NOT_RUNNING}\n\nRun 'docker run --help' for more information\n"
WAIT_DROPPED = ('time="2026-12-06T13:45:56Z" level=error msg="error waiting for container: error during connect: '
                'Post \\"http://%2Fvar%2Frun%2Fdocker.sock/v1.50/containers/abc/wait?condition=removed\\": EOF"\n')
NEW_CLIENT = ("docker: failed to connect to the docker API at unix:///var/run/docker.sock; check if the path is "
              "correct and if the daemon is running: dial unix /var/run/docker.sock: connect: no such file or "
              "directory\n")


@pytest.mark.parametrize(("log", "words"), [
    (KILLED_DAEMON, "error waiting for container: unexpected EOF"),
    (STOPPED_AT_START, NOT_RUNNING),
    (f"Server:\n{NOT_RUNNING}\n", NOT_RUNNING),
    (WAIT_DROPPED, 'error waiting for container: error during connect: Post "http://%2Fvar%2Frun%2Fdocker.sock/'
                   'v1.50/containers/abc/wait?condition=removed": EOF'),
    (NEW_CLIENT, "failed to connect to the docker API at unix:///var/run/docker.sock; check if the path"),
])
def test_the_docker_clients_words_that_its_daemon_is_gone_are_found(log: str, words: str) -> None:
    said = runtime_gone("INFO: Uvicorn running on http://0.0.0.0:30000\n" + log)
    assert said is not None and said.startswith(words), said


@pytest.mark.parametrize("log", [
    "up\nterm\n",   # the server's own graceful exit: the daemon stopped its container first, docker said nothing
    "permission denied while trying to connect to the docker API at unix:///var/run/docker.sock\n",
    'time="2026-12-06T13:45:56Z" level=error msg="Error waiting for container: driver \\"vfs\\" failed to remove"\n',
    "docker: Error response from daemon: Conflict. The container name is already in use\n",
])
def test_other_words_are_not_a_daemon_gone(log: str) -> None:
    assert runtime_gone(log) is None


def _fake_docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """A `docker` first on PATH that runs `body`; every call is counted in `calls`."""
    calls = tmp_path / "calls"
    script = tmp_path / "bin" / "docker"
    script.parent.mkdir()
    script.write_text(f"#!/bin/bash\necho \"$*\" >> {calls}\n{body}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    return calls


def test_a_daemon_that_does_not_answer_docker_info_is_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_docker(tmp_path, monkeypatch, f'echo "{NOT_RUNNING}" >&2; exit 1')
    assert daemon_gone() == NOT_RUNNING
    log = tmp_path / "server.log"
    log.write_text("up\nterm\n")
    assert get_launcher("docker").runtime_gone(log) == NOT_RUNNING
    assert get_launcher("local").runtime_gone(log) is None


def test_a_daemon_that_answers_is_not_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_docker(tmp_path, monkeypatch, "echo 28.2.2")
    log = tmp_path / "server.log"
    log.write_text("Traceback (most recent call last):\nRuntimeError: CUDA error: out of memory\n")
    assert get_launcher("docker").runtime_gone(log) is None


def test_a_daemon_that_hangs_is_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_docker(tmp_path, monkeypatch, "exec sleep 30")
    assert daemon_gone(timeout_s=0.5) == "`docker info` did not answer within 0.5 s"


def test_a_runtime_gone_before_start_is_not_taken_for_a_refusal() -> None:
    """start_failure alone would call it `container_start_failed`; the server's start asks runtime_gone first."""
    assert runtime_gone(STOPPED_AT_START) == NOT_RUNNING
    assert start_failure(STOPPED_AT_START) == ("container_start_failed", f"docker: {NOT_RUNNING}")


def _server(tmp_path: Path, kind: str, exit_code: int | None) -> FreshServer:
    endpoint = SimpleNamespace(ctx=SimpleNamespace(point_dir=tmp_path), launcher=get_launcher(kind))
    server = FreshServer(endpoint)
    server.running = SimpleNamespace(exit_code=lambda: exit_code)
    return server


NO_SIGNAL = SimpleNamespace(reason=lambda: None)


def test_a_ready_server_whose_daemon_went_away_names_the_daemon(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_docker(tmp_path, monkeypatch, f'echo "{NOT_RUNNING}" >&2; exit 1')
    (tmp_path / "server.log").write_text("INFO: Uvicorn running\nup\nterm\n")
    server = _server(tmp_path, "docker", 0)
    want = runtime_gone_reason("docker", NOT_RUNNING, 0)
    assert want == ("container_runtime_gone: the docker daemon went away while the server ran (docker: "
                    f"{NOT_RUNNING}); the server exited with status 0 during the run")
    assert server.stop_reason(NO_SIGNAL) == want
    assert server.stop_reason(NO_SIGNAL) == want
    assert calls.read_text().count("info") == 1   # the daemon is asked once


def test_a_ready_server_that_ends_under_a_live_daemon_crashed(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_docker(tmp_path, monkeypatch, "echo 28.2.2")
    (tmp_path / "server.log").write_text("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert _server(tmp_path, "docker", None).stop_reason(NO_SIGNAL) is None
    assert not calls.exists()   # a running server: nobody asks the daemon
    crashed = _server(tmp_path, "docker", 1).stop_reason(NO_SIGNAL)
    assert crashed == "server_crashed: the server exited with status 1 during the run"
    (tmp_path / "server.log").write_text(KILLED_DAEMON)   # docker's words in the log: no need to ask the daemon
    gone = _server(tmp_path, "docker", 125).stop_reason(NO_SIGNAL)
    assert gone == runtime_gone_reason("docker", "error waiting for container: unexpected EOF", 125)
    assert calls.read_text().count("info") == 1


def test_the_client_is_not_left_draining_a_server_that_is_gone() -> None:
    from harness.point.replay.aiperf import stop_grace_s

    assert stop_grace_s(runtime_gone_reason("docker", NOT_RUNNING, 0)) == stop_grace_s("server_crashed: x") == 10.0


def test_the_console_shows_the_log_of_a_runtime_gone(tmp_path: Path) -> None:
    assert "container_runtime_gone" in SERVER_FAILURES
    (tmp_path / "server.log").write_text(KILLED_DAEMON)
    excerpt = failure_excerpt(tmp_path, runtime_gone_reason("docker", "error waiting for container", 125))
    assert excerpt is not None and any("unexpected EOF" in line for line in excerpt.lines)


def test_a_point_whose_daemon_does_not_answer_at_start_names_the_daemon(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`docker run` against a daemon that is not running: the point names the daemon, not a refused container."""
    from harness.point.run import PointOptions, run_point
    from tests.integration.conftest import sim_plan

    _fake_docker(tmp_path, monkeypatch, f'case "$1" in run|info) echo "{NOT_RUNNING}" >&2;; esac\n'
                                        '[ "$1" = run ] && exit 125; exit 1')
    plan = sim_plan([], overrides=["image=harness-sim:local"])
    outcome = run_point(plan, PointOptions(out_dir=tmp_path / "out", launcher="docker", ready_timeout_s=30))
    assert outcome.state == "failed"
    assert outcome.reason == ("container_runtime_gone: the docker daemon stopped answering before the server was "
                              f"ready (docker: {NOT_RUNNING}); server exited with status 125 before it was ready")
