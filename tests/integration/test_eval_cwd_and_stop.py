"""`harness eval` from any working directory with a relative `--out` (lm-eval runs in the task's directory;
`sweep --with-eval` with a relative `--out` is in test_eval_runner.py), and Ctrl-C answered at once with `stopping...` and what the stop waits on."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import group_gone, wait_until_evaluating

ROOT = Path(__file__).parents[2]
QUICKSTART = ROOT / "recipes" / "quickstart-sim.yaml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def test_eval_with_a_relative_out_from_another_directory(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "harness", "eval", str(QUICKSTART), "--limit", "4", "--out", "rel-runs"],
                       cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300, start_new_session=True)
    assert r.returncode == 0, r.stdout + r.stderr
    edir = tmp_path / "rel-runs" / "quickstart-sim" / "eval-conc8"
    result = json.loads((edir / "eval_result.json").read_text())
    assert result["state"] == "completed" and result["passed"] is True
    assert (edir / result["lm_eval_results"]).is_file() and (edir / "eval_row_gsm8k.json").is_file()
    assert not list(Path(ROOT / "harness" / "evals").rglob("rel-runs"))   # nothing written beside the task


def _line_within(stream: object, within_s: float) -> str:
    """The first line the child writes on `stream` within `within_s` seconds ('' if none)."""
    deadline = time.monotonic() + within_s
    buf = b""
    fd = stream.fileno()  # type: ignore[attr-defined]
    while time.monotonic() < deadline and b"\n" not in buf:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buf += chunk
    return buf.decode(errors="replace").split("\n", 1)[0]


def test_ctrl_c_says_stopping_at_once_and_what_it_waits_on(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "harness", "eval", str(QUICKSTART), "--limit", "400",
                             "--out", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    status_path = tmp_path / "quickstart-sim" / "eval-conc8" / "status.json"
    wait_until_evaluating(proc, status_path, within_s=90)
    os.kill(proc.pid, signal.SIGINT)
    line = _line_within(proc.stderr, within_s=3.0)
    assert line.startswith("stopping... (SIGINT; phase evaluating: stopping lm-eval, then the server)"), line
    assert proc.wait(timeout=60) == 130
    status = json.loads(status_path.read_text())
    assert status["state"] == "cancelled" and status["reason"] == "interrupted: SIGINT"
    assert group_gone(status["server_pid"]) and group_gone(status["client_pid"])
