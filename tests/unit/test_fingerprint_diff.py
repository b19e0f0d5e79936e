"""`harness fingerprint diff`: identical points print only "identical"; packages are diffed one by one."""

from __future__ import annotations

import json

from harness.cli import main as cli_main
from harness.point.fingerprints.fingerprint import build_fingerprint


def _fp(port: int, started: float, packages: list[str], version: str = "0.5.23", max_running: int = 32) -> dict:
    argv = ["docker", "run", "--rm", "--name", f"harness-x-c4-{port}", "img", "python3", "-m", "sglang.launch_server",
            "--model-path", "m", "--port", str(port), "--tp-size", "1", "--weight-version", f"harness-launch-{port:016x}"]
    server = {"port": port, "startup_time": started, "version": version, "launch_command": " ".join(argv),
              "weight_version": f"harness-launch-{port:016x}",  # each launch's own token
              # SGLang's get_internal_state: its settings, plus what the scheduler measured so far (these
              # keys differ between any two launches), plus the simulator's own counters
              "internal_states": [{"port": port, "tp_size": 1, "max_running_requests": max_running,
                                   "last_gen_throughput": started % 97, "avg_spec_accept_length": started % 3,
                                   "step_time_dict": {"1": [started % 5]}, "waiting_queue_size": port % 3,
                                   "running_batch_size": port % 5, "prefill_decode_size": port % 7, "load": port % 11,
                                   "pending_dp_reqs_size": 0, "engine_paused": False,
                                   "memory_usage": {"kvcache": 61.5, "token_capacity": 4003906},
                                   "sim": {"scheduling_lag_hist_100us": [int(started) % 9, 1], "decode_steps": port}}]}
    captured = {"hostname": "n1", "timestamp": f"2026-12-01T00:00:{int(started) % 60:02d}Z", "arch": "x86_64",
                "os": "Ubuntu 24.04", "cpu": {}, "gpu": {"available": False}, "python_version": "3.12.3",
                "cuda_version": "unavailable", "nccl_version": "unavailable", "frameworks": {}, "model": None,
                "env": {}, "pip_packages": {"/opt/venv/bin/python3": packages}}
    capture = {"argv": ["docker", "run", "--rm", "--name", f"fingerprint-harness-x-c4-{port}", "img", "python3"],
               "seconds": started / 1000, "exit_code": 0}
    fp = build_fingerprint(captured=captured, capture=capture, server=server, image="img", digest={"digest": None},
                           engine="sglang", server_argv=argv, server_env={"A": "1"}, launcher="docker",
                           harness={"commit": "abc"})
    return json.loads(json.dumps(fp))


def _write(tmp_path, name, fp):
    d = tmp_path / name
    d.mkdir()
    (d / "fingerprint_agg_w0.json").write_text(json.dumps({"schema_version": 1, **fp}))
    return str(d)


def test_two_launches_of_the_same_point_are_identical(tmp_path, capsys):
    a = _write(tmp_path, "a", _fp(43067, 1796090094.1, ["torch==2.9.0", "aiperf==0.13.0"]))
    b = _write(tmp_path, "b", _fp(50573, 1796090120.7, ["torch==2.9.0", "aiperf==0.13.0"]))
    assert cli_main(["fingerprint", "diff", a, b]) == 0
    assert capsys.readouterr().out == "identical\n"


def test_packages_and_versions_are_diffed_one_by_one(tmp_path, capsys):
    a = _write(tmp_path, "a", _fp(43067, 1.0, ["torch==2.9.0", "aiperf==0.13.0", "gone==1"]))
    b = _write(tmp_path, "b", _fp(50573, 2.0, ["aiperf==0.13.0", "torch==2.9.1", "new==2"], version="0.5.24"))
    assert cli_main(["fingerprint", "diff", a, b]) == 1
    assert capsys.readouterr().out.splitlines() == [
        'pip_packages./opt/venv/bin/python3.gone: "1" -> (absent)',
        'pip_packages./opt/venv/bin/python3.new: (absent) -> "2"',
        'pip_packages./opt/venv/bin/python3.torch: "2.9.0" -> "2.9.1"',
        'server.server_info.version: "0.5.23" -> "0.5.24"',
    ]


def test_a_changed_setting_in_the_server_state_is_reported(tmp_path, capsys):
    a = _write(tmp_path, "a", _fp(43067, 1.0, ["torch==2.9.0"]))
    b = _write(tmp_path, "b", _fp(50573, 2.0, ["torch==2.9.0"], max_running=64))
    assert cli_main(["fingerprint", "diff", a, b]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "server.server_info.internal_states[0].max_running_requests: 32 -> 64"]
