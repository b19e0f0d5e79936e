"""The server's effective environment against what the harness set: reading it, recording it, judging it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from harness.point.record.validity import verdict
from harness.point.servers import server_env
from harness.recipe.thresholds import Thresholds

SET = {"SGLANG_SIMULATE_ACC_LEN": "4.05", "SGLANG_SIMULATE_ACC_METHOD": "match-expected", "HF_TOKEN": "hf_secretvalue1"}


def test_environ_is_parsed_as_the_kernel_writes_it() -> None:
    assert server_env.parse_environ(b"A=1\0B=x=y\0EMPTY=\0junk\0") == {"A": "1", "B": "x=y", "EMPTY": ""}


def test_every_set_variable_that_arrived_as_set_passes_and_the_prefixes_are_kept() -> None:
    effective = {**SET, "NCCL_DEBUG": "INFO", "CUDA_HOME": "/usr/local/cuda", "HF_HOME": "/hf", "PATH": "/bin",
                 "HOME": "/root"}
    record = server_env.check(SET, effective, "/proc/1/environ")
    assert record["not_applied"] == []
    assert set(record["effective"]) == {*SET, "NCCL_DEBUG", "CUDA_HOME", "HF_HOME"}   # not PATH, not HOME
    assert record["effective"]["HF_TOKEN"] == "<redacted>" and record["expected"]["HF_TOKEN"] == "<redacted>"
    assert server_env.describe_not_applied(record) is None


def test_a_variable_with_the_images_value_or_missing_is_named() -> None:
    effective = {"SGLANG_SIMULATE_ACC_LEN": "1.0", "HF_TOKEN": "hf_othervalue22"}
    record = server_env.check(SET, effective, "docker exec c cat /proc/1/environ")
    assert record["not_applied"] == [
        {"name": "HF_TOKEN", "expected": "<redacted>", "found": "<redacted>"},   # compared, never written
        {"name": "SGLANG_SIMULATE_ACC_LEN", "expected": "4.05", "found": "1.0"},
        {"name": "SGLANG_SIMULATE_ACC_METHOD", "expected": "match-expected", "found": None}]
    line = server_env.describe_not_applied(record) or ""
    assert "SGLANG_SIMULATE_ACC_LEN (set '4.05', server has '1.0')" in line
    assert "SGLANG_SIMULATE_ACC_METHOD (set 'match-expected', server has it unset)" in line
    assert "hf_" not in str(record)


def test_env_not_applied_makes_the_point_invalid_and_an_unread_environment_does_not() -> None:
    result = {"request_accounting": {"successful": 50, "errors": 0, "cancelled_at_cutoff": 0},
              "request_metrics": {"throughput": {"duration_seconds": 60.0}}, "conc": 2}
    ok = verdict({**result, "server_env": server_env.check(SET, dict(SET), "x")}, 60, Thresholds())
    assert ok["valid"], ok
    bad = verdict({**result, "server_env": server_env.check(SET, {**SET, "SGLANG_SIMULATE_ACC_LEN": "1.0"}, "x")},
                  60, Thresholds())
    assert not bad["valid"] and [r["code"] for r in bad["reasons"]] == ["env_not_applied"]
    assert "SGLANG_SIMULATE_ACC_LEN" in bad["reasons"][0]["message"]
    unread = server_env.check(SET, None, "docker exec c cat /proc/1/environ", "No such container: c")
    assert unread["not_applied"] is None and unread["error"] == "No such container: c"
    assert verdict({**result, "server_env": unread}, 60, Thresholds())["valid"]


def test_the_environment_of_the_process_listening_on_the_port_is_read() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    code = f"import socket, time; s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(30)"
    env = {**os.environ, "SGLANG_SIMULATE_ACC_LEN": "2.5"}
    child = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        deadline = time.monotonic() + 20
        while not server_env.port_owner.listener_pids(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        effective, source, error = server_env.read_effective("local", "unused", None, port)
        assert error is None and source == f"/proc/{child.pid}/environ"
        assert effective is not None and effective["SGLANG_SIMULATE_ACC_LEN"] == "2.5"
    finally:
        child.kill()
        child.wait()
    effective, _, error = server_env.read_effective("local", "unused", None, port)
    assert effective is None and error and str(port) in error
