"""`harness fingerprint diff`: identical points print only "identical"; packages are diffed one by one."""

from __future__ import annotations

import json

from harness.cli import main as cli_main
from harness.point.fingerprint import build_fingerprint


def _fp(port: int, started: float, packages: list[str], version: str = "0.5.23") -> dict:
    argv = ["python3", "-m", "harness.sim", "--model-path", "m", "--port", str(port), "--tp-size", "1"]
    server = {"server_info": {"port": port, "startup_time": started, "version": version,
                              "launch_command": " ".join(argv),
                              "internal_states": [{"port": port, "tp_size": 1}]}}
    fp = build_fingerprint(host={"host": "n1", "time_utc": f"2026-12-01T00:00:{int(started) % 60:02d}Z",
                                 "pip_packages": packages}, server=server, image="img", image_digest=None,
                           engine="sim", server_argv=argv, server_env={"A": "1"}, launcher="local")
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
        'host.pip_packages.gone: "1" -> (absent)',
        'host.pip_packages.new: (absent) -> "2"',
        'host.pip_packages.torch: "2.9.0" -> "2.9.1"',
        'server.server_info.server_info.version: "0.5.23" -> "0.5.24"',
    ]
