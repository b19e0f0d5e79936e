"""Power as InferenceX publishes it, checked against what InferenceX's own code computed on the same
inputs (`_integrate_device`, `_percentile_total_power`, `with_power_metrics`; recorded in
tests/fixtures/inferencex-power/outputs.json, commits and command in its README).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.point.record import inferencex_row
from harness.power.inferencex_window import aiperf_window_ns, inferencex_power
from harness.power.percentile import time_weighted_percentile
from harness.power.samples import PowerSample
from harness.power.telemetry import telemetry_summary

INFERENCEX = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "inferencex-power" / "outputs.json")
                        .read_text())
S = 1_000_000_000


@pytest.mark.parametrize("case", INFERENCEX["cases"], ids=lambda c: f"{len(c['gpus'])}gpu")
def test_energy_and_percentiles_equal_inferencex(case: dict) -> None:  # type: ignore[type-arg]
    gpus = [[(t, p) for t, p in g] for g in case["gpus"]]
    for q, theirs in case["percentile_total_w"].items():
        assert time_weighted_percentile(gpus, case["start"], case["end"], float(q)) == pytest.approx(theirs, rel=1e-9)
    samples = _samples(case["gpus"])
    block = inferencex_power(samples, (round(case["start"] * S), round(case["end"] * S)), len(gpus), successful=1,
                             input_tokens=1, output_tokens=1)
    assert block["valid"], block["reasons"]
    assert block["metrics"]["total_gpu_energy_j"] == pytest.approx(sum(case["energy_j"]), abs=0.01)


def test_time_weights_the_percentile_not_the_sample_count() -> None:
    # 100 W for 9 s sampled once a second, then 1000 W sampled 50 times in the last second: p75 stays at 100 W
    case = INFERENCEX["cases"][-1]
    ours = time_weighted_percentile([[(t, p) for t, p in case["gpus"][0]]], 0.0, 10.0, 0.75)
    assert ours == pytest.approx(case["percentile_total_w"]["0.75"]) and ours < 200


def _samples(gpus: Sequence[Sequence[Sequence[float]]]) -> list[PowerSample]:
    return [PowerSample(timestamp_ns=round(t * S), gpu_index=i, gpu_uuid=f"GPU-{i}", power_w=p, temp_c=40 + i,
                        util_pct=90, sm_clock_mhz=1980 - 10 * i, mem_clock_mhz=3201)
            for i, series in enumerate(gpus) for t, p in series]


def test_published_power_is_energy_and_percentiles_over_the_aiperf_window() -> None:
    gpus = [[(t * 0.5, 300.0 + 40 * ((t * 7) % 5)) for t in range(0, 40)] for _ in range(4)]
    block = inferencex_power(_samples(gpus), (2 * S, 17 * S), 4, successful=10, input_tokens=5000,
                             output_tokens=800)
    assert block["valid"] and block["window"] == "aiperf_benchmark_start_to_end"
    m = block["metrics"]
    energy = m["total_gpu_energy_j"]
    assert m["avg_power_w"] == pytest.approx(energy / 15 / 4, rel=1e-6)
    for q, key in ((0.75, "p75_total_gpu_power_w"), (0.9, "p90_total_gpu_power_w")):
        assert m[key] == pytest.approx(time_weighted_percentile(gpus, 2.0, 17.0, q))
    assert m["p90_power_w"] == pytest.approx(m["p90_total_gpu_power_w"] / 4)
    assert m["joules_per_input_token"] == pytest.approx(energy / 5000, rel=1e-6)


def test_row_power_keys_are_what_inferencex_with_power_metrics_writes() -> None:
    recorded = INFERENCEX["with_power_metrics"]
    assert inferencex_row.power_metrics({"valid": True, "metrics": recorded["metrics"]}) == recorded["row"]


def test_invalid_window_publishes_no_metric() -> None:
    gpus = [[(float(t), 300.0) for t in range(0, 10)]]
    short = inferencex_power(_samples(gpus), (2 * S, 30 * S), 1, successful=3, input_tokens=10, output_tokens=10)
    assert not short["valid"] and "benchmark_window_not_bracketed" in short["reasons"] and short["metrics"] == {}
    assert inferencex_row.power_metrics(short) == {"power_metric_schema_version": 2, "power_valid": 0}
    wrong_count = inferencex_power(_samples(gpus), (2 * S, 5 * S), 2, successful=3, input_tokens=10,
                                   output_tokens=10)
    assert not wrong_count["valid"] and "expected_gpu_count_mismatch" in wrong_count["reasons"]
    missing = inferencex_power(_samples(gpus), None, 1, successful=3, input_tokens=10, output_tokens=10)
    assert missing["reasons"] == ["profile_window_missing"]


def test_aiperf_window_reads_naive_local_and_zoned_timestamps(monkeypatch: pytest.MonkeyPatch) -> None:
    zoned = aiperf_window_ns({"start_time": "2026-12-01T01:00:00+00:00", "end_time": "2026-12-01T01:00:30Z"})
    start = int(datetime(2026, 12, 1, 1, tzinfo=UTC).timestamp()) * S
    assert zoned == (start, start + 30 * S)
    naive = aiperf_window_ns({"start_time": "2026-12-01T01:00:00.5", "end_time": "2026-12-01T01:00:10"})
    local = datetime(2026, 12, 1, 1, 0, 0, 500000).astimezone().timestamp()
    assert naive is not None and naive[0] == round(local * S) and naive[1] - naive[0] == 9_500_000_000
    assert aiperf_window_ns({"start_time": "soon", "end_time": "later"}) is None
    assert aiperf_window_ns({"start_time": "2026-12-01T01:00:10", "end_time": "2026-12-01T01:00:00"}) is None
    assert aiperf_window_ns(None) is None


def test_telemetry_summary_covers_the_window_and_omits_what_was_not_read() -> None:
    gpus = [[(float(t), 300.0) for t in range(10)], [(float(t), 200.0) for t in range(10)]]
    samples = _samples(gpus) + [PowerSample(timestamp_ns=5 * S, gpu_index=2, gpu_uuid="GPU-2", power_w=1.0)]
    summary = telemetry_summary(samples, 2 * S, 6 * S)
    assert summary is not None
    assert summary["per_gpu"]["GPU-0"] == {"samples": 5, "avg_temp_c": 40, "peak_temp_c": 40, "avg_util_pct": 90,
                                           "avg_sm_clock_mhz": 1980, "min_sm_clock_mhz": 1980,
                                           "avg_mem_clock_mhz": 3201}
    assert summary["per_gpu"]["GPU-2"] == {"samples": 1}   # a GPU that reported no context columns
    assert summary["all"]["peak_temp_c"] == 41 and summary["all"]["min_sm_clock_mhz"] == 1970
    assert telemetry_summary(samples, 20 * S, 30 * S) is None
