"""`harness compare` of two short simulator runs: sample sizes and bootstrap intervals from their records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness.sim
from harness.cli import main as cli_main
from harness.point.run import PointOptions, run_point
from harness.report.noise import MIN_REQUESTS
from harness.report.samples import read_request_samples, record_file

from .conftest import sim_plan

pytestmark = pytest.mark.slow


def test_compare_of_two_runs_gives_n_and_an_interval_from_the_records(tmp_path, capsys):
    # the demo model ten times faster: short requests, so a short window holds enough of them
    profile = json.loads((Path(harness.sim.__file__).parent / "profiles" / "demo.json").read_text())
    (tmp_path / "fast.json").write_text(json.dumps({**profile, "name": "it-fast", "hbm_bw": 1e13, "flops": 1e16}))
    dirs = []
    for side in ("a", "b"):
        outcome = run_point(sim_plan(["--sim-profile", str(tmp_path / "fast.json")],
                                     ["client.duration_s=8", "server.args.stream-interval=8"]),
                            PointOptions(out_dir=tmp_path / side, ready_timeout_s=60))
        assert outcome.state in ("completed", "invalid"), outcome.reason
        dirs.append(outcome.point_dir)
    samples = []
    for d in dirs:
        path = record_file(d)
        assert path is not None
        samples.append(read_request_samples(path))
    n_a, n_b = (len(s.e2el) for s in samples)
    assert min(n_a, n_b) > 0
    enough = min(n_a, n_b) >= MIN_REQUESTS   # a loaded machine may finish few requests in the short window
    capsys.readouterr()   # the runs' progress lines

    assert cli_main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == 0
    (point,) = json.loads(capsys.readouterr().out)["comparisons"][0]["points"]
    noise = point["noise"]
    assert (noise["e2el_p90"]["n_a"], noise["e2el_p90"]["n_b"]) == (n_a, n_b)
    assert (noise["ttft_p50"]["n_a"], noise["ttft_p50"]["n_b"]) == tuple(len(s.ttft) for s in samples)
    for name in ("e2el_p90", "e2el_p75", "ttft_p50"):
        if enough:
            lo, hi = noise[name]["diff"]
            assert lo <= hi and noise[name]["within_noise"] == (lo <= 0 <= hi)
        else:
            assert noise[name]["reason"] == f"fewer than {MIN_REQUESTS} requests: no interval"
    assert noise["total_tput_per_gpu"]["reason"] == "whole-run figure: no per-request interval"

    assert cli_main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "noise: bootstrap 95% interval of B - A" in out and "n_A" in out and "n_B" in out
    row = next(line for line in out.splitlines()
               if line.startswith("   4  ") and ("E2EL p90 (s)" in line or "latency" in line))
    assert f" {n_a}  " in row and f" {n_b}  " in row
    assert ("within noise" in row or "outside noise" in row) if enough else "fewer than" in row
