"""`harness predict` against the demo's measured points: a full KV pool's evictions and re-prefills put c8 below c4."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.predict.workload import trajectory_start
from harness.traces.files import read_local
from harness.traces.schema import walk_calls

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "tests" / "fixtures" / "inspect" / "demo"
DEMO_SETTINGS = ("--set", "client.burst_phase_starts=true", "--set", "client.warmup_requests_per_lane=1",
                 "--set", "client.grace_s=20", "--duration", "45")


def _measured(conc: int) -> tuple[float, float]:
    """A demo point's measured total tok/s/GPU and TTFT p50 (seconds)."""
    doc = json.loads((DEMO / f"conc{conc}" / "point_result.json").read_text())
    metrics = doc["request_metrics"]
    return metrics["throughput"]["per_gpu"]["total_tput_tps"], metrics["latency"]["ttft"]["p50"]


def test_predict_sees_the_demos_knee_within_a_quarter_of_its_measurement(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["predict", str(ROOT / "recipes" / "quickstart-sim.yaml"), "--points", "c4", "c8", "--json",
                     *DEMO_SETTINGS]) == 0
    out = capsys.readouterr()
    points = {p["conc"]: p for p in json.loads(out.out)["points"]}
    assert points[8]["total_tok_s_per_gpu"] < points[4]["total_tok_s_per_gpu"]
    for conc in (4, 8):
        tput, ttft = _measured(conc)
        assert points[conc]["total_tok_s_per_gpu"] == pytest.approx(tput, rel=0.25)
        assert points[conc]["ttft_p50_s"] == pytest.approx(ttft, rel=0.25)
    assert "[1/2]" in out.err and "[2/2]" in out.err and " c4 " in out.err and " c8 " in out.err  # progress


def test_lanes_start_where_aiperfs_trajectory_source_starts_them() -> None:
    """The demo's c8 run primed lane i of trace i at these root turns (its AIPerf profile export)."""
    corpus = read_local(ROOT / "recipes" / "traces" / "quickstart")
    primers = []
    for lane in range(8):
        trace = corpus.traces[lane]
        calls = list(walk_calls(trace))
        start = trajectory_start(trace, lane, 42)
        primers.append(sum(1 for loc in calls[:start] if loc.depth == 0))
    assert primers == [5, 7, 11, 8, 14, 3, 3, 14]


def test_a_calls_hashes_are_its_chained_hashes_whatever_the_call_before() -> None:
    from harness.predict.workload import _extend_hashes, chained_hashes

    prev = chained_hashes("s", [1, 2, 3])
    for ids in ([1, 2, 3, 4], [1, 2], [1, 9, 3], [], [5]):
        assert _extend_hashes("s", [1, 2, 3], prev, ids) == chained_hashes("s", ids)
