"""A tested point's outcome read from its own record, and search.json built from the tested points."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.search.order import bracket
from harness.search.outcome import SearchSpec, answer_line, render_summary, search_json
from harness.search.slo import parse_slos
from harness.search.tested import read_tested

SLOS = parse_slos(["ttft_p90<=0.5", "intvty_p90>=20"])


def write_point(root: Path, conc: int, ttft_p90: float, *, invalid: tuple[str, ...] = (), power_w: float | None = None,
                ttfts: list[float] | None = None) -> Path:
    pdir = root / f"conc{conc}"
    pdir.mkdir(parents=True)
    record: dict[str, Any] = {
        "conc": conc, "state": "completed", "num_requests_successful": 40,
        "request_metrics": {"latency": {"ttft": {"p90": ttft_p90}, "intvty": {"p90": 30.0}}},
        "validity": {"valid": not invalid, "reasons": [{"code": c, "message": c} for c in invalid]},
        "power_valid": power_w is not None,
        "power_invalid_reasons": [] if power_w is not None else ["nvml_unavailable"],
    }
    if power_w is not None:
        record["avg_total_gpu_power_w"] = power_w
    (pdir / "point_result.json").write_text(json.dumps(record))
    if ttfts is not None:
        lines = [{"metadata": {"benchmark_phase": "profiling", "was_cancelled": False},
                  "metrics": {"request_latency": {"value": 2000.0, "unit": "ms"},
                              "time_to_first_token": {"value": t * 1000, "unit": "ms"}}} for t in ttfts]
        (pdir / "aiperf").mkdir()
        (pdir / "aiperf" / "profile_export.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return pdir


def test_a_valid_point_whose_expressions_hold_meets_the_slo(tmp_path: Path) -> None:
    v = read_tested(write_point(tmp_path, 4, 0.3), 4, SLOS)
    assert (v.meets_slo, v.outcome, v.metric("ttft_p90"), v.metric("intvty_p90")) == (True, "pass", 0.3, 30.0)
    assert (v.power_w, v.power_reason) == (None, "power not measured (nvml_unavailable)")


def test_an_expression_that_does_not_hold_or_an_invalid_point_fails(tmp_path: Path) -> None:
    assert read_tested(write_point(tmp_path / "a", 8, 0.7), 8, SLOS).outcome == "fail"
    invalid = read_tested(write_point(tmp_path / "b", 8, 0.3, invalid=("error_ratio",)), 8, SLOS)
    assert (invalid.meets_slo, invalid.outcome, invalid.invalid_reasons) == (False, "fail", ("error_ratio",))
    short = read_tested(write_point(tmp_path / "c", 1, 0.3, invalid=("too_few_completed",)), 1, SLOS)
    assert (short.meets_slo, short.outcome) == (False, "inconclusive")


def test_a_point_without_a_record_or_status_fails(tmp_path: Path) -> None:
    (tmp_path / "conc2").mkdir()
    v = read_tested(tmp_path / "conc2", 2, SLOS)
    assert (v.state, v.outcome, v.metric("ttft_p90")) == ("missing", "fail", None)


def test_a_threshold_inside_the_spread_of_the_percentile_makes_the_point_uncertain(tmp_path: Path) -> None:
    spread = [0.3 + 0.01 * i for i in range(40)]          # 0.30 .. 0.69 s: p90 about 0.65, the threshold 0.5 out
    near = [0.1 + 0.0115 * i for i in range(40)]          # 0.10 .. 0.55 s: p90 about 0.504
    far = read_tested(write_point(tmp_path / "a", 4, 0.3, ttfts=[0.1 + 0.001 * i for i in range(40)]), 4, SLOS)
    close = read_tested(write_point(tmp_path / "b", 4, 0.49, ttfts=near), 4, SLOS)
    wide = read_tested(write_point(tmp_path / "c", 4, 0.65, ttfts=spread), 4, SLOS)
    assert far.checks[0].interval.bounds is not None and not far.uncertain
    bounds = close.checks[0].interval.bounds
    assert bounds is not None and bounds[0] <= 0.5 <= bounds[1] and close.uncertain
    assert not wide.uncertain   # failing clearly: the whole interval is above 0.5
    assert far.checks[1].interval.reason == "the per-request records hold no intvty samples"


def spec() -> SearchSpec:
    return SearchSpec(recipe="r.yaml", config_key="k", variant=None, slos=tuple(SLOS), min_conc=1, max_conc=32,
                      num_gpus=4, nodes=1)


def test_search_json_carries_the_boundary_and_the_capacity_there(tmp_path: Path) -> None:
    tested = [read_tested(write_point(tmp_path, c, t, power_w=p), c, SLOS)
              for c, t, p in [(1, 0.1, 500.0), (2, 0.2, 800.0), (4, 0.9, 900.0), (3, 0.4, 850.0)]]
    state = bracket({v.conc: v.outcome for v in tested}, 1, 32)
    doc = search_json(spec(), tested, state, True)
    assert [(p["conc"], p["meets_slo"]) for p in doc["points"]] == [(1, True), (2, True), (4, False), (3, True)]
    assert (doc["boundary_conc"], doc["first_failing_conc"], doc["upper_bound_reached"]) == (3, 4, False)
    assert (doc["agents_per_gpu"], doc["agents_per_node"]) == (0.75, 3.0)
    assert (doc["agents_per_kw"], doc["boundary_power_w"], doc["agents_per_kw_reason"]) == (round(3 / 0.85, 6), 850.0,
                                                                                            None)
    assert doc["points"][2]["point_dir"] == str(tmp_path / "conc4")
    assert answer_line(doc).startswith("answer: c3 meets the SLO (c4 fails): 0.75 agents/GPU, 3 agents/node, 3.5")
    assert "4     1    -       yes    -         40        0.9       30          fail     ttft_p90=0.9 breaches " \
        "ttft_p90<=0.5" in render_summary(doc)


def test_without_a_passing_point_the_capacity_is_absent_with_a_reason(tmp_path: Path) -> None:
    tested = [read_tested(write_point(tmp_path, 1, 0.9), 1, SLOS)]
    doc = search_json(spec(), tested, bracket({1: "fail"}, 1, 32), True)
    assert (doc["boundary_conc"], doc["agents_per_gpu"], doc["agents_per_kw"]) == (None, None, None)
    assert doc["capacity_reason"] == "no tested concurrency meets the SLO"


def test_power_not_measured_at_the_boundary_leaves_agents_per_kw_absent_with_the_reason(tmp_path: Path) -> None:
    tested = [read_tested(write_point(tmp_path, 32, 0.1), 32, SLOS)]
    doc = search_json(spec(), tested, bracket({32: "pass"}, 32, 32), True)
    assert (doc["boundary_conc"], doc["upper_bound_reached"], doc["agents_per_gpu"]) == (32, True, 8.0)
    assert (doc["agents_per_kw"], doc["agents_per_kw_reason"]) == (None, "power not measured (nvml_unavailable)")


def test_the_plot_is_drawn_beside_search_json(tmp_path: Path) -> None:
    from harness.search.plot import plot_search

    tested = [read_tested(write_point(tmp_path, c, t), c, SLOS) for c, t in [(1, 0.1), (2, 0.9)]]
    doc = search_json(spec(), tested, bracket({v.conc: v.outcome for v in tested}, 1, 32), True)
    png = plot_search(doc, tmp_path / "search" / "search.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
