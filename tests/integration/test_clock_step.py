"""A wall-clock step of -12 s inside a 20 s profiling window (as an NTP step does on a node; the throughput then
reads half as high again, within every other bound): the point is invalid with `window_clock_mismatch` naming both
clocks, its record carries both spans, and its row is never published. Steps of an hour either way are unit tests
(`tests/unit/test_window_clock.py`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import DATA

pytestmark = pytest.mark.slow
STEP_DIR = Path(__file__).parent / "clock_step"


def test_a_backward_step_mid_window_is_window_clock_mismatch_and_never_published(tmp_path: Path) -> None:
    out, trigger = tmp_path / "runs", tmp_path / "step-now"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(STEP_DIR), os.environ.get("PYTHONPATH", "")]),
           "HARNESS_TEST_CLOCK_STEP_FILE": str(trigger), "HARNESS_TEST_CLOCK_STEP_S": "-12"}
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(DATA / "sim-small.yaml"), "--point", "c4",
                             "--out", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    point = out / "it-sim" / "conc4"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        status = point / "status.json"
        try:
            if status.exists() and json.loads(status.read_text()).get("phase") == "profiling":
                break
        except ValueError:
            pass
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail(f"the point never reached profiling: {proc.communicate()[0][-2000:]}")
    time.sleep(6)          # a few calls of the window on the true clock, the rest 12 s behind
    trigger.touch()
    output, _ = proc.communicate(timeout=240)
    assert proc.returncode == 3, output[-2000:]   # completed, invalid
    record = json.loads((point / "point_result.json").read_text())
    clock = record["window_clock"]
    assert clock["phase_monotonic_s"] - clock["phase_wall_s"] > 10 and clock["agrees"] is False
    reasons = {r["code"]: r["message"] for r in record["validity"]["reasons"]}
    assert "on the monotonic clock" in reasons["window_clock_mismatch"]
    assert record["publishable"]["publishable"] is False
    assert "window_clock_mismatch" in output
    exported = subprocess.run([sys.executable, "-m", "harness", "export", "--inferencex", str(out), str(tmp_path / "x")],
                              capture_output=True, text=True)
    assert not list((tmp_path / "x").glob("bmk_agentic_*")), exported.stdout + exported.stderr
