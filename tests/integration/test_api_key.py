"""`--api-key` end to end on the simulator, which checks the key as SGLang does: probes and `/metrics` stay open,
everything else wants `Authorization: Bearer <key>`; the harness's readiness probe, launch-token check,
fingerprint and AIPerf send the plan's key, a wrong or missing key fails with its own reason (`unauthorized`),
and the key is in no file the point writes."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.point.run import PointOptions, run_point
from harness.point.servers.readiness import NotReady, served_launch_token, wait_until_ready
from tests.integration.conftest import sim_plan
from tests.integration.test_sim_server import Sim

KEY = "sk-harness-test-0123456789"


def _get(base: str, path: str, key: str | None = None) -> int:
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def keyed_sim():
    sim = Sim(["--api-key", KEY, "--enable-metrics", "--sim-startup-seconds", "0"])
    try:
        sim.wait_health()
        yield sim
    finally:
        sim.stop()


def test_the_simulator_checks_the_key_where_sglang_does(keyed_sim: Sim) -> None:
    base = keyed_sim.base
    assert [_get(base, p) for p in ("/health", "/health_generate", "/ready", "/metrics")] == [200, 200, 200, 200]
    assert [_get(base, p) for p in ("/server_info", "/model_info", "/v1/models", "/flush_cache")] == [401] * 4
    assert [_get(base, p, "wrong") for p in ("/server_info", "/v1/models")] == [401, 401]
    assert [_get(base, p, KEY) for p in ("/server_info", "/model_info", "/v1/models")] == [200, 200, 200]
    code, body = keyed_sim.post({"model": "sim-model", "messages": [{"role": "user", "content": "x"}],
                                 "max_tokens": 1})
    assert (code, json.loads(body)) == (401, {"error": "Unauthorized"})
    code, _ = keyed_sim.post({"model": "sim-model", "messages": [{"role": "user", "content": "x"}],
                              "max_tokens": 1}, headers={"Authorization": f"Bearer {KEY}"})
    assert code == 200
    info = json.loads(urllib.request.urlopen(urllib.request.Request(
        base + "/server_info", headers={"Authorization": f"Bearer {KEY}"}), timeout=10).read())
    assert KEY not in json.dumps(info)   # the simulator never echoes a secret


def test_readiness_without_the_key_fails_unauthorized_not_port_in_use(keyed_sim: Sim) -> None:
    with pytest.raises(NotReady) as exc:
        wait_until_ready(keyed_sim.base, "sim-model", lambda: None, budget_s=20, token="t")
    assert exc.value.reason == "unauthorized" and "401" in str(exc.value)
    with pytest.raises(NotReady) as exc:   # no launch token to check: the chat probe gets the 401
        wait_until_ready(keyed_sim.base, "sim-model", lambda: None, budget_s=20, api_key="wrong")
    assert exc.value.reason == "unauthorized"
    wait_until_ready(keyed_sim.base, "sim-model", lambda: None, budget_s=20, api_key=KEY)
    assert served_launch_token(keyed_sim.base, api_key=KEY) == "default"   # SGLang's default weight_version


def _client_cmdlines(out: Path, within_s: float = 60) -> list[bytes]:
    """The command lines of the AIPerf client's processes, once it runs (/proc)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        statuses = list(out.rglob("status.json"))
        pid = json.loads(statuses[0].read_text()).get("client_pid") if statuses else None
        if pid:
            time.sleep(3)   # AIPerf has started its own processes
            lines = []
            for entry in Path("/proc").iterdir():
                try:
                    if entry.name.isdigit() and os.getpgid(int(entry.name)) == pid:
                        lines.append((entry / "cmdline").read_bytes())
                except OSError:
                    continue
            return lines
        time.sleep(0.2)
    raise AssertionError("AIPerf never started")


def test_a_point_with_an_api_key_completes_and_writes_no_key(tmp_path) -> None:
    plan = sim_plan([], ["client.duration_s=8", f"args.api-key={KEY}"])
    launched = plan.server.launch_argv()
    assert launched[launched.index("--api-key") + 1] == KEY and KEY not in plan.server.argv
    with ThreadPoolExecutor(1) as pool:   # the point runs in this thread (it handles signals)
        watching = pool.submit(_client_cmdlines, tmp_path)
        outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=60))
        cmdlines = watching.result()
    assert outcome.state == "completed", outcome.reason
    # AIPerf got the key from its environment: no command line of its processes shows it
    assert cmdlines   # AIPerf's processes were seen (they retitle themselves: `aiperf system_controller`, ...)
    assert [c for c in cmdlines if KEY.encode() in c or b"--api-key" in c] == []
    fp = json.loads((outcome.point_dir / "fingerprint_agg_w0.json").read_text())
    assert "weight_version" in fp["server"]["server_info"]   # read with the key
    client_command = (outcome.point_dir / "client_command.txt").read_text()
    assert "HARNESS_AIPERF_API_KEY=<redacted>" in client_command and "--api-key" not in client_command
    assert client_command.split()[1:3] == ["-m", "harness.point.replay.aiperf_keyed"]   # the wrapper that adds the key
    leaked = [p.name for p in tmp_path.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaked == []
