"""A killed `harness report` leaves no process: its worker processes (which read the points' per-request files)
die with it, however it dies."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.report_bench import record_line

FIXTURES = Path(__file__).parents[1] / "fixtures"
STARTING_POLLS = 100_000   # polls of /proc for the first worker (ends sooner when the report ends)
DYING_POLLS = 2_000        # polls of /proc for the workers to be gone after the kill


def _workers(pid: int) -> list[int]:
    """Processes forked by `pid`: its children that run its command line."""
    try:
        cmdline = (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and (entry / "cmdline").read_bytes() == cmdline:
                out.append(int(entry.name))
        except OSError:
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _points(root: Path, count: int) -> None:
    rng = random.Random(7)
    fixture = json.loads((FIXTURES / "h200-power" / "point_result.json").read_text())
    for conc in range(1, count + 1):
        pdir = root / f"conc{conc}"
        (pdir / "aiperf").mkdir(parents=True)
        (pdir / "point_result.json").write_text(json.dumps({**fixture, "conc": conc}))
        (pdir / "aiperf" / "profile_export.jsonl").write_text("".join(record_line(rng, 100 + r, 4, 10_000)
                                                                     for r in range(200)))


@pytest.mark.skipif(not Path("/proc/self/stat").exists() or len(os.sched_getaffinity(0)) < 2,
                    reason="the report reads in workers only with two CPUs or more; the test reads /proc")
def test_a_killed_report_leaves_no_worker(tmp_path: Path) -> None:
    _points(tmp_path / "run", 6)
    proc = subprocess.Popen([sys.executable, "-m", "harness", "report", str(tmp_path / "run"),
                             "--out", str(tmp_path / "out")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        for _ in range(STARTING_POLLS):
            workers = _workers(proc.pid)
            if workers or proc.poll() is not None:
                break
            time.sleep(0.001)
        assert workers, "the report started no worker process"
        proc.kill()
        proc.wait()
        left = workers
        for _ in range(DYING_POLLS):
            left = [w for w in workers if _alive(w)]
            if not left:
                break
            time.sleep(0.001)
        assert left == [], f"workers {left} outlived the killed report"
    finally:
        for w in workers:
            if _alive(w):
                os.kill(w, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
