"""`harness compare` of two runs gives, per point and latency percentile, the sample sizes and a distribution-free
interval of the difference from the runs' per-request records. The runs are a recorded simulator sweep
(`tests/fixtures/results/sim-run`, real AIPerf records) compared with itself: identical records give an interval
around zero, within noise; a point with fewer requests than an interval needs says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.report.analysis.noise import MIN_REQUESTS, min_requests
from harness.report.results.samples import read_request_samples, record_file

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "sim-run"


def _kept(point_dir: Path) -> tuple[int, int]:
    path = record_file(point_dir)
    assert path is not None
    samples = read_request_samples(path)
    return len(samples.e2el), len(samples.ttft)


def test_compare_gives_n_and_an_interval_from_the_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for side in ("a", "b"):
        shutil.copytree(RUN, tmp_path / side)
    curve = RUN / "quickstart-sim"
    (n_e2el, n_ttft), (few, _) = _kept(curve / "conc4"), _kept(curve / "conc1")
    assert n_e2el >= MIN_REQUESTS > few   # the fixture has a point on each side of the bound

    assert cli_main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == 0
    points = {p["conc"]: p for c in json.loads(capsys.readouterr().out)["comparisons"] for p in c["points"]}
    noise = points[4]["noise"]
    assert (noise["e2el_p90"]["n_a"], noise["e2el_p90"]["n_b"]) == (n_e2el, n_e2el)
    assert (noise["ttft_p50"]["n_a"], noise["ttft_p50"]["n_b"]) == (n_ttft, n_ttft)
    for name, q in (("e2el_p90", 0.9), ("e2el_p75", 0.75), ("ttft_p50", 0.5)):
        if n_e2el < min_requests(q):   # too few requests to bound this percentile on either side: no interval
            assert noise[name]["diff"] is None and noise[name]["reason"] == f"fewer than {min_requests(q)} requests ({n_e2el} vs {n_e2el}): no interval"
            continue
        lo, hi = noise[name]["diff"]   # each side resampled on its own: the interval spans zero, not a point
        assert lo < 0 < hi and noise[name]["within_noise"] is True
    assert n_e2el >= min_requests(0.5) and noise["ttft_p50"]["diff"] is not None   # the fixture's c4 bounds a median
    assert noise["total_tput_per_gpu"]["reason"] == "whole-run figure: no per-request interval"
    assert points[1]["noise"]["e2el_p90"]["reason"] == f"fewer than {min_requests(0.9)} requests ({few} vs {few}): no interval"

    assert cli_main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "noise: distribution-free 95% interval of B - A" in out and "n_A" in out and "n_B" in out
    header = next(line for line in out.splitlines() if line.lstrip().startswith("conc  metric"))
    assert header.split()[-1] == "reading"   # every column is named
    row = next(line for line in out.splitlines() if line.startswith("   4  ") and "TTFT p50 (s)" in line)
    assert f" {n_ttft}  " in row and "within noise" in row
    row = next(line for line in out.splitlines() if line.startswith("   4  ") and "E2EL p90 (s)" in line)
    assert f" {n_e2el}  " in row and f"fewer than {min_requests(0.9)} requests ({n_e2el} vs {n_e2el}): no interval" in row
