"""Faults in the middle of a point, on the simulator with real AIPerf: a stalled server, a burst of server
errors, a full disk (a real one: a small tmpfs, where root may mount it). Each ends the point `failed`
with a reason that names what was seen."""

from __future__ import annotations

import errno
import json
import re
import subprocess
import sys
import time

import pytest

from harness.point.run import EXIT_FAILED, PointOptions, run_point
from tests.tmpfs import mounted_tmpfs

from .conftest import DATA, group_gone, sim_plan

pytestmark = pytest.mark.slow

WINDOW_S = 30
OLD_ALLOWANCE_S = WINDOW_S + 5 + 300   # window + grace + the client overhead that used to be the only bound


def _stalled_plan(stall: list[str], server_env: dict[str, str]):
    plan = sim_plan(stall, [f"client.duration_s={WINDOW_S}"])
    return plan.model_copy(update={"server": plan.server.model_copy(update={"env": server_env})})


def _check_failed(outcome) -> dict:
    assert outcome.state == "failed" and outcome.exit_status == EXIT_FAILED
    status = json.loads((outcome.point_dir / "status.json").read_text())
    assert status["state"] == "failed" and status["reason"] == outcome.reason and status["exit_status"] == 1
    assert group_gone(status["server_pid"]) and group_gone(status.get("client_pid"))
    return status


def test_stalled_stream_is_caught_by_the_token_counters_within_the_bound(tmp_path):
    # /health stays 200 while stalled (SGLang's liveness-only /health): only /metrics shows the stall. It stalls
    # at the 20th request: the seeded warm-up sends 13, so the window is running whatever the machine's speed
    plan = _stalled_plan(["--sim-stall-after-requests", "20"], {"SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "false"})
    t0 = time.monotonic()
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60, progress_every_s=0,
                                           stall_timeout_s=4))
    elapsed = time.monotonic() - t0
    _check_failed(outcome)
    assert re.match(r"server_stalled: no new AIPerf record and no token progress on /metrics for \d+ s "
                    r"\(bound 4 s\) with \d+ requests in flight \(\d+ AIPerf records, "
                    r"sglang:generation_tokens_total \d+\)$", outcome.reason), outcome.reason
    assert elapsed < OLD_ALLOWANCE_S / 3, elapsed


def test_stalled_server_answering_health_503_is_caught_at_once(tmp_path):
    plan = _stalled_plan(["--sim-stall-after", "1"], {})
    t0 = time.monotonic()
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60, progress_every_s=0,
                                           stall_timeout_s=300))
    elapsed = time.monotonic() - t0
    _check_failed(outcome)
    assert outcome.reason.startswith("server_stalled: /health answered 503 2 times in a row"), outcome.reason
    assert elapsed < 60, elapsed   # long before the 300 s no-progress bound



def test_a_frozen_server_is_caught_whether_or_not_requests_are_in_flight(tmp_path):
    """SIGSTOP of the server a few seconds into profiling: it answers nothing, tokens or not owed."""
    import os
    import signal
    import threading

    frozen: list[int] = []

    def freeze_once_profiling() -> None:
        for _ in range(600):                   # bounded by the point's own start-up, not by the clock
            statuses = list(tmp_path.rglob("status.json"))
            status = json.loads(statuses[0].read_text()) if statuses else {}
            if status.get("phase") == "profiling" and status.get("server_pid"):
                time.sleep(3)
                frozen.append(int(status["server_pid"]))
                os.kill(frozen[0], signal.SIGSTOP)
                return
            time.sleep(0.5)

    freezer = threading.Thread(target=freeze_once_profiling, daemon=True)
    freezer.start()
    # a stopped process ignores SIGTERM: it is killed after the stop grace, which need not be the default 15 s
    outcome = run_point(sim_plan([], [f"client.duration_s={WINDOW_S}"]),
                        PointOptions(out_dir=tmp_path, ready_timeout_s=60, progress_every_s=0, stall_timeout_s=5,
                                     server_stop_grace_s=3))
    freezer.join(timeout=5)
    assert frozen, "the point never reached profiling"
    _check_failed(outcome)
    assert outcome.reason.startswith("server_stalled: "), outcome.reason


def test_a_frozen_client_is_caught_within_the_stall_bound_and_its_group_torn_down(tmp_path):
    """SIGSTOP of AIPerf's whole process group a few seconds into a short window: no record, no log line and
    no CPU time for the bound ends the point `client_stalled`, long before the client's own timeout."""
    import os
    import signal
    import threading

    frozen: list[int] = []

    def freeze_client_once_profiling() -> None:
        for _ in range(600):                   # bounded by the point's own start-up, not by the clock
            statuses = list(tmp_path.rglob("status.json"))
            status = json.loads(statuses[0].read_text()) if statuses else {}
            if status.get("phase") == "profiling" and status.get("client_pid"):
                time.sleep(3)
                frozen.append(int(status["client_pid"]))
                os.killpg(frozen[0], signal.SIGSTOP)
                return
            time.sleep(0.5)

    freezer = threading.Thread(target=freeze_client_once_profiling, daemon=True)
    freezer.start()
    t0 = time.monotonic()
    outcome = run_point(sim_plan([], ["client.duration_s=20"]),
                        PointOptions(out_dir=tmp_path, ready_timeout_s=60, progress_every_s=0, stall_timeout_s=8))
    elapsed = time.monotonic() - t0
    freezer.join(timeout=5)
    assert frozen, "the point never reached profiling"
    status = _check_failed(outcome)
    assert status["client_pid"] == frozen[0]
    assert re.match(r"client_stalled: no new AIPerf record, no client log output and no CPU time in the client's "
                    r"\d+ processes for \d+ s \(bound 8 s; (\d+) of \1 stopped \(SIGSTOP\); \d+ AIPerf records\)$",
                    outcome.reason), outcome.reason
    assert elapsed < OLD_ALLOWANCE_S / 3, elapsed   # the client's own timeout would have been about 400 s


def test_server_errors_that_make_aiperf_give_up_are_named_in_the_reason(tmp_path):
    plan = sim_plan(["--sim-error-rate", "0.5"], ["client.duration_s=15"])
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60, progress_every_s=0))
    m = re.match(r"server_errors: (\d+) of \d+ requests failed, in [a-z, ]+ \(HTTP 500: (\d+); first: "
                 r"'injected server error \(--sim-error-rate\)'\); AIPerf stopped early", outcome.reason)
    if m is None:   # the client aborted its warm-up before its record writer kept the failed request
        assert outcome.reason.startswith("client_failed: AIPerf stopped early (Terminal warmup failure for trace "), \
            outcome.reason
        assert outcome.reason.endswith("A root AgentX warmup request failed, so profiling was not started "
                                       "(warmup_failure)"), outcome.reason
    else:
        assert m.group(1) == m.group(2) and int(m.group(1)) >= 1, outcome.reason
    _check_failed(outcome)


@pytest.fixture
def small_disk(tmp_path):
    """A real 32 MiB filesystem (tmpfs) for the run directory."""
    with mounted_tmpfs(tmp_path / "disk", "32m") as mnt:
        yield mnt


@pytest.mark.parametrize("phase,extra", [("profiling", []), ("loading", ["--set", "sim_args.sim-startup-seconds=300"])])
def test_disk_full_mid_run_records_disk_full_stops_everything_and_exits_1(small_disk, phase, extra):
    out = small_disk / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(DATA / "sim-small.yaml"), "--point", "c4",
                             "--duration", str(WINDOW_S), "--out", str(out), *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        found = list(out.glob("it-sim/variants/*/conc4/status.json"))
        if found and json.loads(found[0].read_text()).get("phase") == phase:
            status_path = found[0]
            break
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail(f"the point never reached {phase}")
    with pytest.raises(OSError) as full:   # fill the disk (if the run has not already): the next write fails
        with open(small_disk / "filler", "wb") as fh:
            while True:
                fh.write(b"\0" * 65536)
    assert full.value.errno == errno.ENOSPC
    t0 = time.monotonic()
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_FAILED, stderr
    assert time.monotonic() - t0 < WINDOW_S, "noticed only at the end of the window"
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: disk_full: No space left on device at "), stderr
    assert f"(filesystem {small_disk}: " in lines[0] and lines[0].endswith(f"{status_path}: failed")
    status = json.loads(status_path.read_text())
    assert status["state"] == "failed" and status["exit_status"] == EXIT_FAILED and status["phase"] == phase
    assert status["reason"].startswith("disk_full: No space left on device at ") and str(small_disk) in status["reason"]
    assert group_gone(status["server_pid"]) and group_gone(status.get("client_pid"))
    assert "Traceback" not in stdout + stderr
