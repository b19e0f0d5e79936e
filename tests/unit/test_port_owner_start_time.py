"""A process's start time as `port_owner` reads it from /proc is within clock ticks of when it was started, so a
server launched by this point is never taken for an earlier listener."""

from __future__ import annotations

import subprocess
import time

from harness.point.servers import port_owner


def test_a_process_start_time_reads_within_a_tenth_of_a_second_of_its_launch():
    for _ in range(5):
        launched = time.time_ns()
        proc = subprocess.Popen(["sleep", "5"])
        try:
            started = port_owner.process_start_ns(proc.pid)
        finally:
            proc.kill()
            proc.wait()
        assert started is not None
        assert abs(started - launched) < 100_000_000, (started - launched) / 1e9


def test_boot_time_follows_uptime(tmp_path):
    (tmp_path / "uptime").write_text("100.50 200.00\n")
    before = time.time_ns()
    booted = port_owner.boot_ns(tmp_path)
    assert booted is not None and abs((before - booted) - 100_500_000_000) < 50_000_000
    (tmp_path / "uptime").write_text("")
    assert port_owner.boot_ns(tmp_path) is None
