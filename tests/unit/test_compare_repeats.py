"""`compare` over repeated runs: every run's requests pooled, the spread between runs weighed, and for a
change within noise the requests (and `--duration`) that would resolve a given relative change."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from statistics import NormalDist

import pytest

from harness.artifacts import write_json
from harness.cli import main
from harness.point.record.samples_file import RequestSamples
from harness.report.analysis.compare import point_noise
from harness.report.analysis.noise import spread_between_runs
from harness.report.analysis.resolve import duration_for, requests_per_side
from harness.report.results.repeats import is_repeat, repeat_dirs

FIX = Path(__file__).parent.parent / "fixtures" / "results"
RECORD = {"state": "completed", "recipe_fingerprint": "f" * 64, "overrides": [], "image": "img", "engine": "sim",
          "conc": 4, "client": {"requested_duration_s": 20}}


def test_the_sample_size_is_what_the_order_statistic_interval_needs() -> None:
    z_t, z_p = NormalDist().inv_cdf(1 - 0.0125), NormalDist().inv_cdf(0.8)    # 2.241 (each of four bounds), 0.842
    # each side: a bootstrap SE of 0.1 s at 100 requests, i.e. 1.0 s per request; a change of 0.05 s:
    # ((2.241 * (1 + 1) + 0.842 * sqrt(2)) / 0.05)^2
    assert requests_per_side(0.1, 100, 0.1, 100, 0.05) == math.ceil(((2 * z_t + z_p * 2 ** 0.5) / 0.05) ** 2) == 12_874
    assert requests_per_side(0.1, 100, 0.1, 100, 0.1) == 3_219                 # 4x fewer for 2x the change
    assert requests_per_side(0.1, 100, 0.1, 100, 0.0) is None
    assert duration_for(6280, 10.0) == 628.0 and duration_for(10, None) is None


def test_a_repeat_is_the_same_point_completed_again() -> None:
    assert is_repeat(RECORD, dict(RECORD))
    assert not is_repeat(RECORD, {**RECORD, "state": "failed"})
    assert not is_repeat(RECORD, {**RECORD, "overrides": ["args.x=1"]})
    assert not is_repeat(RECORD, {**RECORD, "client": {"requested_duration_s": 60}})


def test_repeat_dirs_keep_the_newest_first_and_only_identical_earlier_runs(tmp_path: Path) -> None:
    write_json(tmp_path / "point_result.json", RECORD)
    write_json(tmp_path / "attempts" / "1" / "point_result.json", RECORD)
    write_json(tmp_path / "attempts" / "2" / "point_result.json", {**RECORD, "state": "failed"})
    write_json(tmp_path / "attempts" / "3" / "point_result.json", {**RECORD, "image": "other"})
    (tmp_path / "attempts" / "4").mkdir()
    assert repeat_dirs(tmp_path) == [tmp_path, tmp_path / "attempts" / "1"]


def test_spread_between_runs() -> None:
    assert spread_between_runs([[1.0] * 20, [1.1] * 20, [1.2] * 20], 0.5) == pytest.approx(200 / 11)
    assert spread_between_runs([[1.0] * 20], 0.5) is None


def _runs(*centres: float, n: int = 40) -> list[RequestSamples]:
    return [RequestSamples(e2el=[c + 0.001 * i for i in range(n)], ttft=[0.1] * n) for c in centres]


def test_repeats_are_pooled_and_their_spread_weighed() -> None:
    one = point_noise(_runs(1.0), _runs(1.02))["e2el_p50"]
    pooled = point_noise(_runs(1.0, 1.0, 1.0), _runs(1.02, 1.02, 1.02))["e2el_p50"]
    assert (one.n_a, one.runs_a, pooled.n_a, pooled.runs_a, pooled.runs_b) == (40, 1, 120, 3, 3)
    assert pooled.diff is not None and one.diff is not None
    assert pooled.diff[1] - pooled.diff[0] < one.diff[1] - one.diff[0]   # more requests, a narrower interval
    assert pooled.repeat_spread_pct == 0.0
    # runs of A that moved 10 % between themselves: a 2 % change is inside that spread
    moving = point_noise(_runs(0.95, 1.0, 1.05), _runs(1.02, 1.02, 1.02))["e2el_p50"]
    assert moving.repeat_spread_pct is not None and moving.repeat_spread_pct > 5
    assert moving.within_noise is True and moving.reading in ("within noise", "within the repeats' spread")


def _repeated_point(run: Path, runs: int) -> None:
    """The fixture's c4 (21 per-request records) as a point run `runs` times: the newest and earlier attempts."""
    src = FIX / "sim-run" / "quickstart-sim" / "conc4"
    pdir = run / "quickstart-sim" / "conc4"
    shutil.copytree(src, pdir)
    row = json.loads((pdir / "bmk_agentic_quickstart-sim_conc4.json").read_text())
    record = {**row, **RECORD, "config_key": "quickstart-sim", "row": "bmk_agentic_quickstart-sim_conc4.json"}
    write_json(pdir / "point_result.json", record)
    write_json(pdir / "status.json", {"state": "completed", "conc": 4})
    for i in range(1, runs):
        shutil.copytree(src / "aiperf", pdir / "attempts" / str(i) / "aiperf")
        write_json(pdir / "attempts" / str(i) / "point_result.json", record)


def test_compare_pools_repeats_shows_p50_and_says_what_would_resolve(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _repeated_point(tmp_path / "a", 3)
    _repeated_point(tmp_path / "b", 2)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", "--resolve", "10"]) == 0
    data = json.loads(capsys.readouterr().out)
    (point,) = data["comparisons"][0]["points"]
    p50 = point["noise"]["e2el_p50"]
    assert (p50["n_a"], p50["n_b"], p50["runs_a"], p50["runs_b"], p50["within_noise"]) == (63, 42, 3, 2, True)
    assert p50["to_resolve"]["pct"] == 10 and p50["to_resolve"]["requests_per_side"] > 0
    assert "order-statistic interval under the normal approximation" in data["noise_method"]["to_resolve"]
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "E2EL p50 (s)" in out and "63 (3 runs)" in out and "repeated runs pooled" in out
    assert "±5% needs ~" in out and "req/side" in out
