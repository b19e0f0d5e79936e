"""Faults in the middle of `harness eval`, on the simulator with real lm-eval: a stalled server and a full disk
(a real one: a small tmpfs, where root may mount it). Each ends the eval `failed` (exit 1) with a reason that
names what was seen, well before lm-eval's own timeouts, and leaves no process behind."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.evals.row import EvalRow
from tests.tmpfs import mounted_tmpfs

from .conftest import group_gone, wait_until_evaluating

pytestmark = pytest.mark.slow

QUICKSTART = Path(__file__).parents[2] / "recipes" / "quickstart-sim.yaml"


def _read(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize("extra,seen", [
    ([], "server_stalled: /health answered 503 2 times in a row"),
    # /health stays 200 while stalled (SGLang's liveness-only /health): only /metrics and lm-eval's answers show it
    (["--set", "env.SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=false"],
     "server_stalled: no new lm-eval answer and no token progress on /metrics for "),
])
def test_stalled_server_mid_eval_fails_within_the_stall_bound(tmp_path, extra, seen):
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "harness", "eval", str(QUICKSTART), "--limit", "400", "--out",
                        str(tmp_path), "--set", "sim_args.sim-stall-after=8", "--stall-timeout", "5", *extra],
                       capture_output=True, text=True, timeout=300, start_new_session=True)
    elapsed = time.monotonic() - t0
    assert r.returncode == 1, r.stdout + r.stderr
    edir = tmp_path / "quickstart-sim" / "eval-conc8"
    status = _read(edir / "status.json")
    assert status["state"] == "failed" and status["reason"].startswith(seen), status
    assert status["exit_status"] == 1 and "evaluating" in status["phases"]
    assert group_gone(status["server_pid"]) and group_gone(status["client_pid"])
    row = _read(edir / "eval_row_gsm8k.json")
    EvalRow.model_validate(row)
    assert row["infrastructure_success"] is False and row["integration_error"]["type"] == "server_stalled"
    assert "[watch] stall watch armed: stops the run as server_stalled only if requests in flight make no progress for 5 s" in (edir / "harness.log").read_text()
    assert elapsed < 150, elapsed   # lm-eval's own request timeout is 1800 s


@pytest.fixture
def small_disk(tmp_path):
    """A real 64 MiB filesystem (tmpfs) for the run directory."""
    with mounted_tmpfs(tmp_path / "disk", "64m") as mnt:
        yield mnt


def test_disk_full_mid_eval_records_disk_full_stops_everything_and_exits_1(small_disk):
    out = small_disk / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "eval", str(QUICKSTART), "--limit", "400",
                             "--out", str(out), "--set", "args.max-running-requests=1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    status_path = out / "quickstart-sim" / "eval-conc8" / "status.json"
    wait_until_evaluating(proc, status_path, within_s=120)
    with open(small_disk / "filler", "wb") as fh:   # fill the disk: the next write anywhere fails with ENOSPC
        with pytest.raises(OSError) as full:
            while True:
                fh.write(b"\0" * 65536)
    assert full.value.errno == errno.ENOSPC
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stdout + stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: disk_full: No space left on device at "), stderr
    assert f"(filesystem {small_disk}: " in lines[0] and lines[0].endswith(f"the eval is stopped, {status_path}: failed")
    status = _read(status_path)
    assert status["state"] == "failed" and status["exit_status"] == 1 and status["phase"] == "evaluating"
    assert status["reason"].startswith("disk_full: No space left on device at ") and str(small_disk) in status["reason"]
    assert group_gone(status["server_pid"]) and group_gone(status["client_pid"])
    assert "Traceback" not in stdout + stderr
    assert "no score" in stdout
