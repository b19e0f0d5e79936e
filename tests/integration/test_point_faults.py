"""Faults in the middle of a point, on the simulator with real AIPerf: a stalled server, a burst of server
errors, a full disk. Each ends the point `failed` with a reason that names what was seen."""

from __future__ import annotations

import json
import re
import time

import pytest

from harness.point.run import EXIT_FAILED, PointOptions, run_point

from .conftest import group_gone, sim_plan

pytestmark = pytest.mark.slow

WINDOW_S = 30
OLD_ALLOWANCE_S = WINDOW_S + 5 + 300   # window + grace + the client overhead that used to be the only bound


def _stalled_plan(stall_after_s: float, server_env: dict[str, str]):
    plan = sim_plan(["--sim-stall-after", str(stall_after_s)], [f"client.duration_s={WINDOW_S}"])
    return plan.model_copy(update={"server": plan.server.model_copy(update={"env": server_env})})


def _check_failed(outcome) -> dict:
    assert outcome.state == "failed" and outcome.exit_status == EXIT_FAILED
    status = json.loads((outcome.point_dir / "status.json").read_text())
    assert status["state"] == "failed" and status["reason"] == outcome.reason and status["exit_status"] == 1
    assert group_gone(status["server_pid"]) and group_gone(status.get("client_pid"))
    return status


def test_stalled_stream_is_caught_by_the_token_counters_within_the_bound(tmp_path):
    # /health stays 200 while stalled (SGLang's liveness-only /health): only /metrics shows the stall
    plan = _stalled_plan(12, {"SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "false"})
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
    plan = _stalled_plan(1, {})
    t0 = time.monotonic()
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60, progress_every_s=0,
                                           stall_timeout_s=300))
    elapsed = time.monotonic() - t0
    _check_failed(outcome)
    assert outcome.reason.startswith("server_stalled: /health answered 503 2 times in a row"), outcome.reason
    assert elapsed < 60, elapsed   # long before the 300 s no-progress bound


def test_server_errors_that_make_aiperf_give_up_are_named_in_the_reason(tmp_path):
    plan = sim_plan(["--sim-error-rate", "0.5"], ["client.duration_s=15"])
    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60, progress_every_s=0))
    m = re.match(r"server_errors: (\d+) of \d+ requests failed, in [a-z, ]+ \(HTTP 500: (\d+); first: "
                 r"'injected server error \(--sim-error-rate\)'\); AIPerf stopped early", outcome.reason)
    assert m and m.group(1) == m.group(2) and int(m.group(1)) >= 1, outcome.reason
    _check_failed(outcome)
