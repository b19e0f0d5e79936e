"""A port someone else listens on: the point fails with `port_in_use` and never probes, fingerprints or
benchmarks the other process (real sockets, a real foreign HTTP server, the real simulator)."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from harness.point.run import PointOptions, run_point
from harness.point.servers import port_owner
from harness.point.servers.readiness import NotReady, wait_until_ready
from launchers.process_group import ProcessGroup

from .conftest import sim_plan

# A stand-in for another SGLang-like server already on the port: healthy, reports its own weight_version in
# /server_info as SGLang does, answers chat completions, and logs every POST it receives to stderr.
FOREIGN = r"""
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        info = self.path == "/server_info"
        self.send_response(200); self.end_headers()
        self.wfile.write(json.dumps({"weight_version": "default"}).encode() if info else b"ok")
    def do_POST(self):
        print("POST", self.path, file=sys.stderr, flush=True)
        body = json.dumps({"choices": [{"message": {"content": "x"}}]}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def foreign(tmp_path: Path):  # type: ignore[no-untyped-def]
    port = _port()
    pg = ProcessGroup([sys.executable, "-c", FOREIGN, str(port)], dict(os.environ), tmp_path / "foreign.log")
    deadline = time.monotonic() + 60  # a loaded 2-core machine can take seconds to start Python
    while port_owner.port_free(port):
        assert pg.exit_code() is None, (tmp_path / "foreign.log").read_text()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.2)  # older than any server launched from here on, beyond /proc's start-time resolution
    yield port, pg.pid
    pg.stop()


def test_foreign_listener_is_named_with_its_pid(foreign: tuple[int, int]) -> None:
    port, pid = foreign
    assert not port_owner.port_free(port)
    assert f"pid {pid} (" in (port_owner.foreign_listener(port, time.time_ns()) or "")
    assert port_owner.foreign_listener(port, 0) is None  # started after "launch": could be ours


def test_readiness_refuses_a_healthy_server_that_is_not_ours(foreign: tuple[int, int], tmp_path: Path) -> None:
    port, _ = foreign
    ours = ProcessGroup([sys.executable, "-c", "import time; time.sleep(60)"], dict(os.environ), tmp_path / "l")
    launched = time.time_ns()
    try:
        with pytest.raises(NotReady) as exc:
            wait_until_ready(f"http://127.0.0.1:{port}", "m", ours.exit_code, budget_s=10, poll_s=0.1,
                             foreign=lambda: port_owner.foreign_listener(port, launched))
        assert exc.value.reason == "port_in_use"
    finally:
        ours.stop()


def test_readiness_refuses_a_server_without_this_launchs_token_when_its_owner_is_unreadable(
        foreign: tuple[int, int], tmp_path: Path) -> None:
    port, _ = foreign
    ours = ProcessGroup([sys.executable, "-c", "import time; time.sleep(60)"], dict(os.environ), tmp_path / "l")
    try:
        with pytest.raises(NotReady) as exc:
            wait_until_ready(f"http://127.0.0.1:{port}", "m", ours.exit_code, budget_s=10, poll_s=0.1,
                             foreign=lambda: None, token="harness-launch-0123456789abcdef")
        assert exc.value.reason == "port_in_use" and "gives 'default' as weight_version" in str(exc.value)
    finally:
        ours.stop()
    assert "POST" not in (tmp_path / "foreign.log").read_text()  # not one request reached the other server


def test_point_on_a_taken_port_fails_before_launch(foreign: tuple[int, int], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    port, pid = foreign
    monkeypatch.setattr("harness.point.servers.port_owner.free_port", lambda: port)
    outcome = run_point(sim_plan([]), PointOptions(out_dir=tmp_path, ready_timeout_s=20))
    assert outcome.state == "failed" and outcome.reason.startswith(f"port_in_use: port {port} is taken")
    assert f"pid {pid}" in outcome.reason
    files = {p.name for p in outcome.point_dir.iterdir()}
    assert "fingerprint_agg_w0.json" not in files and "aiperf" not in files and outcome.result is None
    assert "server_pid" not in json.loads((outcome.point_dir / "status.json").read_text())


def test_port_taken_after_the_check_fails_with_the_servers_own_words(foreign: tuple[int, int], tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    port, _ = foreign
    monkeypatch.setattr("harness.point.servers.port_owner.free_port", lambda: port)
    monkeypatch.setattr("harness.point.servers.port_owner.port_free", lambda p: True)  # lost the race after the check
    outcome = run_point(sim_plan([]), PointOptions(out_dir=tmp_path, ready_timeout_s=20))
    assert outcome.state == "failed" and outcome.reason.startswith("port_in_use: "), outcome.reason
    assert "another process listens on the server's port" in outcome.reason
    assert "fingerprint_agg_w0.json" not in {p.name for p in outcome.point_dir.iterdir()}


def test_a_server_that_cannot_bind_is_reported_as_port_in_use(foreign: tuple[int, int], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    port, _ = foreign
    monkeypatch.setattr("harness.point.servers.port_owner.free_port", lambda: port)
    monkeypatch.setattr("harness.point.servers.port_owner.port_free", lambda p: True)
    monkeypatch.setattr("harness.point.servers.port_owner.foreign_listener", lambda p, t: None)  # owner unreadable
    monkeypatch.setattr("harness.point.servers.readiness._get", lambda url, timeout: 0)  # as if loading, port closed
    outcome = run_point(sim_plan([]), PointOptions(out_dir=tmp_path, ready_timeout_s=20))
    assert outcome.state == "failed" and outcome.reason.startswith("port_in_use: server exited"), outcome.reason
    assert "address already in use" in outcome.reason.lower()  # the server's own line from server.log


def test_what_a_server_answers_for_the_launch_token() -> None:
    import http.server
    import threading

    from harness.point.servers.readiness import served_launch_token

    answers = {"/a/server_info": (200, b'{"weight_version": "harness-launch-00000000000000aa"}'),
               "/b/server_info": (404, b"not found"), "/c/server_info": (200, b"ok"),
               "/d/server_info": (200, b'{"version": "0.5.23"}'), "/e/server_info": (503, b"loading")}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            code, body = answers[self.path]
            self.send_response(code)
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        got = {k: served_launch_token(f"{base}/{k}") for k in "abcde"}
    finally:
        server.shutdown()
    assert got == {"a": "harness-launch-00000000000000aa", "b": "<HTTP 404>", "c": "<not JSON>",
                   "d": "<no weight_version>", "e": None}
    assert served_launch_token(f"http://127.0.0.1:{_port()}") is None  # nothing listens: ask again later
