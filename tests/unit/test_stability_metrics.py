"""InferenceX's stability diagnostics (`harness.point.record.stability`): windows, trajectories, ranges, the record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from harness.point.record.result import build_point_result
from harness.point.record.stability import stability_metrics
from harness.recipe.points import load_plans
from harness.recipe.thresholds import Thresholds

ROOT = Path(__file__).resolve().parents[2]
REAL_RUN = ROOT / "tests" / "fixtures" / "results" / "inferencex" / "inputs" / "sim_tp1_conc4" / "aiperf_artifacts"
T0 = 1_800_000_000_000_000_000   # wall-clock ns of the earliest profiled request
KEYS = ["window_seconds", "expected_window_count", "observed_window_count", "min_window_requests",
        "root_trajectory_count", "root_trajectory_kish_effective_count", "root_trajectory_largest_share",
        "observed_ranges", "reason"]


def _rec(second: float | None, *, source: str | None = None, conversation: str | None = None,
         ttft: float | None = None, e2el: float | None = None, itl: float | None = None,
         phase: str = "profiling", error: Any = None, credit: bool = True) -> dict[str, Any]:
    """One AIPerf record as `profile_export.jsonl` has it: metrics in ms, times in ns."""
    metadata: dict[str, Any] = {"benchmark_phase": phase}
    if second is not None:
        ns = T0 + int(second * 1e9)
        metadata["request_start_ns"] = ns + 2_000_000   # issued 2 ms before it started
        if credit:
            metadata["credit_issued_ns"] = ns
    if source is not None:
        metadata["source_trace_id"] = source
    if conversation is not None:
        metadata["conversation_id"] = conversation
    metrics = {key: {"value": value, "unit": "ms"} for key, value in
               (("time_to_first_token", ttft), ("request_latency", e2el), ("inter_token_latency", itl))
               if value is not None}
    out: dict[str, Any] = {"metadata": metadata, "metrics": metrics}
    if error is not None:
        out["error"] = error
    return out


def _hand_records() -> list[dict[str, Any]]:
    return [
        # dropped entirely by InferenceX's loader: a warmup record (which would otherwise move the origin 1000 s
        # earlier) and a failed one (which would otherwise set window 0's TTFT)
        _rec(-1000, source="t1", ttft=9000, e2el=9000, itl=900, phase="warmup"),
        _rec(5, source="t1", ttft=9000, e2el=9000, itl=900, error={"type": "HTTPError", "message": "500"}),
        # window 0 [0, 600) s
        _rec(0, source="t1", conversation="c1", ttft=100, e2el=1000, itl=10),
        _rec(100, source="t1", ttft=200, e2el=2000, itl=20),
        _rec(200, source="t2", ttft=300, e2el=4000, itl=40),
        # window 1 [600, 1200) s; the second has no credit_issued_ns and falls back to request_start_ns
        _rec(650, source="t1", ttft=400, e2el=5000, itl=50),
        _rec(700, source="", conversation="c9", ttft=600, e2el=0, itl=50, credit=False),
        # window 2 [1200, 1800) s: no ITL
        _rec(1300, source="t2", ttft=50, e2el=500),
        # window 3 (index 3 = expected): outside [0, 3), dropped from the windows, still a request of t1
        _rec(1800, source="t1", ttft=5000, e2el=50000, itl=500),
        # no time at all: in no window, still a request (of no trajectory: "unknown")
        _rec(None, ttft=100, e2el=1000, itl=10),
    ]


def test_hand_computed_windows_trajectories_and_ranges() -> None:
    block = stability_metrics(_hand_records(), 1800.0)
    assert list(block) == KEYS
    # floor(1800 / 600) = 3 windows expected; requests per window 3, 2, 1 (the 1800 s one is in window 3: dropped)
    assert (block["window_seconds"], block["expected_window_count"], block["observed_window_count"],
            block["min_window_requests"]) == (600, 3, 3, 1)
    # 8 kept requests by trajectory: t1 = 4 (0, 100, 650, 1800 s), t2 = 2, c9 = 1 (empty source_trace_id falls back
    # to conversation_id), unknown = 1. Kish n²/Σc² = 64 / (16 + 4 + 1 + 1) = 64/22 = 2.909090… → 2.90909;
    # largest share 4/8 = 0.5
    assert block["root_trajectory_count"] == 4
    assert block["root_trajectory_kish_effective_count"] == 2.90909
    assert block["root_trajectory_largest_share"] == 0.5
    # Per-window percentiles, linear interpolation at k = (n-1)·p/100, in seconds:
    #   window 0, n=3 (k75 = 1.5, k90 = 1.8):
    #     TTFT [0.1, 0.2, 0.3]    p75 0.2 + 0.5·0.1 = 0.25   p90 0.2 + 0.8·0.1 = 0.28
    #     E2EL [1, 2, 4]          p75 2 + 0.5·2 = 3          p90 2 + 0.8·2 = 3.6
    #     ITL  [.01, .02, .04]    p75 0.03 → 1/0.03 = 33.333…  p90 0.036 → 27.777…
    #   window 1, n=2 (k75 = 0.75, k90 = 0.9):
    #     TTFT [0.4, 0.6]         p75 0.4 + 0.75·0.2 = 0.55  p90 0.4 + 0.9·0.2 = 0.58
    #     E2EL [5] (0 is not > 0) p75 = p90 = 5
    #     ITL  [.05, .05]         p75 = p90 = 0.05 → 20
    #   window 2, n=1: TTFT 0.05, E2EL 0.5, no ITL (window 2 gives no interactivity)
    assert block["observed_ranges"] == {
        "ttft": {"p75": {"min": 0.05, "max": 0.55}, "p90": {"min": 0.05, "max": 0.58}},
        "e2el": {"p75": {"min": 0.5, "max": 5}, "p90": {"min": 0.5, "max": 5}},
        "intvty": {"p75": {"min": 20, "max": 33.33333}, "p90": {"min": 20, "max": 27.77778}},
    }
    assert block["reason"] is None


def test_inferencex_example_two_windows_one_minute_apart() -> None:
    """The case InferenceX's own test pins: configured 1200 s, per-window p90 TTFT 0.1 and 0.2 s."""
    records = [_rec(1, source="trace-A", ttft=100, e2el=1000, itl=20),
               _rec(602, source="trace-B", ttft=200, e2el=2000, itl=40)]
    block = stability_metrics(records, 1200)
    assert (block["expected_window_count"], block["observed_window_count"], block["min_window_requests"]) == (2, 2, 1)
    assert block["observed_ranges"]["ttft"]["p90"] == {"min": 0.1, "max": 0.2}
    assert block["observed_ranges"]["intvty"]["p90"] == {"min": 25, "max": 50}   # 1/0.04, 1/0.02
    # a measured 1199.9 s is one window, not two: only the configured duration counts them
    assert stability_metrics(records, 1199.9)["expected_window_count"] == 1


def test_no_records() -> None:
    assert stability_metrics([], 1800) == {
        "window_seconds": 600, "expected_window_count": 3, "observed_window_count": 0, "min_window_requests": 0,
        "root_trajectory_count": 0, "root_trajectory_kish_effective_count": 0.0,
        "root_trajectory_largest_share": 0.0, "observed_ranges": {}, "reason": "no_requests"}


def test_one_window_gives_no_ranges() -> None:
    records = [_rec(0, source="a", ttft=100, e2el=1000, itl=10), _rec(30, source="b", ttft=200, e2el=2000, itl=20)]
    block = stability_metrics(records, 1200)
    assert (block["expected_window_count"], block["observed_window_count"], block["min_window_requests"]) == (2, 1, 2)
    assert (block["observed_ranges"], block["reason"]) == ({}, "fewer_than_two_windows")
    # two trajectories of one request each: Kish 4/2 = 2, largest share 1/2
    assert (block["root_trajectory_count"], block["root_trajectory_kish_effective_count"],
            block["root_trajectory_largest_share"]) == (2, 2, 0.5)


def test_a_point_shorter_than_a_window_has_no_window_but_counts_trajectories() -> None:
    records = [_rec(0, source="a", ttft=100), _rec(1, source="a", ttft=100), _rec(2, source="a", ttft=100),
               _rec(3, conversation="conv-b", ttft=100)]
    block = stability_metrics(records, 30)
    assert (block["expected_window_count"], block["observed_window_count"], block["min_window_requests"],
            block["observed_ranges"], block["reason"]) == (0, 0, 0, {}, "duration_shorter_than_window")
    # a: 3, conv-b (no source_trace_id): 1 → Kish 16/10 = 1.6, largest share 3/4
    assert (block["root_trajectory_count"], block["root_trajectory_kish_effective_count"],
            block["root_trajectory_largest_share"]) == (2, 1.6, 0.75)


def test_unknown_duration_is_said_not_guessed() -> None:
    block = stability_metrics([_rec(0, source="a"), _rec(700, source="a")], None)
    assert (block["expected_window_count"], block["observed_window_count"], block["reason"]) == \
        (0, 0, "duration_unknown")
    assert block["root_trajectory_count"] == 1


def test_missing_source_trace_id_falls_back_to_conversation_then_unknown() -> None:
    records = [_rec(0, source="s", conversation="c"), _rec(1, source=None, conversation="c"),
               _rec(2, source="", conversation=""), _rec(3)]
    block = stability_metrics(records, 600)
    # s: 1, c: 1, unknown: 2 → Kish 16/6 = 2.666… → 2.66667, largest share 2/4
    assert (block["root_trajectory_count"], block["root_trajectory_kish_effective_count"],
            block["root_trajectory_largest_share"]) == (3, 2.66667, 0.5)


def test_the_record_of_a_real_point_carries_the_block(tmp_path: Path) -> None:
    """A simulator point's real AIPerf records (25 profiled, 5 warmup) through the record builder."""
    blocks = {}
    for duration in (60, 1200):
        _, plans = load_plans(ROOT / "recipes" / "quickstart-sim.yaml", ["c4"], [f"client.duration_s={duration}"])
        pdir = tmp_path / str(duration)
        shutil.copytree(REAL_RUN, pdir / "aiperf")
        result, path = build_point_result(
            plans[0], overrides=(), labels={}, thresholds=Thresholds(), pdir=pdir, artifact_dir=pdir / "aiperf",
            client_run=None, metrics_before=None, metrics_after=None, state="completed", reason=None, corpus={})
        assert result is not None and path is not None
        written = json.loads(path.read_text())
        assert written["stability"] == result["stability"]
        assert "stability" not in json.loads((pdir / result["row"]).read_text())   # the row stays InferenceX's
        blocks[duration] = written["stability"]
    # 25 profiled requests over 5 source traces of 8, 5, 5, 4, 3 requests: Kish 625/139 = 4.4964…, share 8/25
    trajectories = {"root_trajectory_count": 5, "root_trajectory_kish_effective_count": 4.4964,
                    "root_trajectory_largest_share": 0.32}
    assert blocks[60] == {"window_seconds": 600, "expected_window_count": 0, "observed_window_count": 0,
                          "min_window_requests": 0, **trajectories, "observed_ranges": {},
                          "reason": "duration_shorter_than_window"}
    assert blocks[1200] == {"window_seconds": 600, "expected_window_count": 2, "observed_window_count": 1,
                            "min_window_requests": 25, **trajectories, "observed_ranges": {},
                            "reason": "fewer_than_two_windows"}
