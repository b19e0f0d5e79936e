"""InferenceX's power audit document (`power_validation_<name>.json`) under InferenceX's rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.power import reasons as rc
from harness.power.inferencex_audit import (
    INFERENCEX_REASON,
    BenchmarkWindow,
    at_audit_precision,
    energy_snapshots,
    inferencex_reason,
    power_validation,
)
from harness.power.inferencex_evidence import identity_csv, identity_rows, write_evidence
from harness.power.samples import PowerSample

S = 1_000_000_000
T0 = 1_800_000_000 * S   # an epoch in 2027: times far from zero, as real ones are
APP_SCHEMA_KEYS = {"schema_version", "power_valid", "reasons", "benchmark_window", "expected_gpu_count",
                   "observed_gpu_count", "observed_gpu_ids", "per_gpu_energy_j", "boundary_degenerate_rows",
                   "per_gpu_max_sample_gap_s", "metrics"}


def _gpu(index: int, times_s: list[float], watts: float | list[float], energy: bool = True) -> list[PowerSample]:
    powers = watts if isinstance(watts, list) else [watts] * len(times_s)
    return [PowerSample(T0 + round(t * S), index, f"GPU-{index}", p, round(1e6 + 1000 * p * t) if energy else None)
            for t, p in zip(times_s, powers, strict=True)]


def _window(start: float = 1.0, end: float = 9.0) -> BenchmarkWindow:
    return BenchmarkWindow(T0 + round(start * S), T0 + round(end * S), completed=10, input_tokens=4000,
                           output_tokens=1000)


def test_two_constant_gpus_integrate_exactly_and_carry_every_field_the_app_reads() -> None:
    samples = _gpu(0, [0.5 * i for i in range(21)], 300.0) + _gpu(1, [0.5 * i for i in range(21)], 100.0)
    doc = at_audit_precision(power_validation(samples, _window(), 2, precision=None))
    assert APP_SCHEMA_KEYS <= set(doc) and doc["schema_version"] == 1
    assert doc["power_valid"] is True and doc["reasons"] == []
    assert doc["observed_gpu_ids"] == ["0", "1"] and doc["observed_gpu_count"] == doc["expected_gpu_count"] == 2
    assert doc["per_gpu_energy_j"] == pytest.approx({"0": 2400.0, "1": 800.0})
    assert doc["benchmark_window"]["start_time_unix"] == 1_800_000_001.0
    assert doc["benchmark_window"]["end_time_unix"] == 1_800_000_009.0
    metrics = doc["metrics"]
    assert metrics["total_gpu_energy_j"] == 3200.0 and metrics["avg_total_gpu_power_w"] == 400.0
    assert metrics["avg_power_w"] == 200.0 and metrics["joules_per_output_token"] == 3.2
    assert metrics["p90_total_gpu_power_w"] == 400.0
    assert json.loads(json.dumps(doc)) == doc   # plain JSON


def test_edges_are_interpolated_on_a_ramp() -> None:
    ramp = _gpu(0, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0], [100.0, 300.0, 500.0, 700.0, 900.0, 1100.0])
    doc = power_validation(ramp, _window(1.0, 9.0), 1, precision=None)
    # power = 100 + 100 t on [1, 9]: the integral is 800 + 50 (81 - 1) = 4800 J
    assert doc["power_valid"] and doc["per_gpu_energy_j"]["0"] == pytest.approx(4800.0, rel=1e-12)


def test_a_zero_reading_before_the_window_does_not_bracket_it() -> None:
    doc = power_validation(_gpu(0, [0.0, 2.0, 10.0], [0.0, 100.0, 100.0]), _window(1.0, 9.0), 1)
    assert doc["reasons"] == ["benchmark_window_not_bracketed"] and doc["boundary_degenerate_rows"] == {"0": 1}


def test_teardown_rows_outside_the_window_are_counted_not_fatal() -> None:
    samples = _gpu(0, [0.5 * i for i in range(19)], 300.0) + _gpu(0, [9.5, 10.0], 0.0)
    doc = power_validation(samples, _window(1.0, 9.0), 1)
    assert doc["power_valid"] and doc["boundary_degenerate_rows"] == {"0": 2}


def test_a_zero_reading_inside_the_window_is_kept_and_a_negative_one_invalidates() -> None:
    zero = _gpu(0, [0.0, 2.5, 5.0, 7.5, 10.0], [300.0, 300.0, 0.0, 300.0, 300.0])
    assert power_validation(zero, _window(), 1)["power_valid"]
    negative = _gpu(0, [0.0, 2.5, 5.0, 7.5, 10.0], [300.0, 300.0, -1.0, 300.0, 300.0])
    doc = power_validation(negative, _window(), 1)
    assert not doc["power_valid"] and "invalid_power_sample" in doc["reasons"] and doc["metrics"] == {}


@pytest.mark.parametrize(("samples", "expected", "reason"), [
    (_gpu(0, [2.0, 5.0, 10.0], 300.0), 1, "benchmark_window_not_bracketed"),
    (_gpu(0, [0.0, 4.5, 10.0], 300.0), 1, "sampling_gap_exceeded"),
    (_gpu(0, [0.5], 300.0), 1, "insufficient_power_samples"),
    (_gpu(0, [0.0, 5.0, 10.0], 300.0), 2, "expected_gpu_count_mismatch"),
    (_gpu(0, [20.0, 21.0], 300.0), 1, "no_usable_power_samples"),   # nothing within 3 s of the window
    ([], 1, "no_usable_power_samples"),
])
def test_each_rule_names_inferencex_reason(samples: list[PowerSample], expected: int, reason: str) -> None:
    doc = power_validation(samples, _window(), expected)
    assert not doc["power_valid"] and reason in doc["reasons"] and doc["metrics"] == {}


def test_a_gap_far_outside_the_window_does_not_count() -> None:
    # a 4 s gap ending 1.5 s before the window start: InferenceX looks only at the samples covering the window
    samples = _gpu(0, [-5.0, -1.0, -0.5, *[0.5 * i for i in range(1, 21)]], 300.0)
    doc = power_validation(samples, _window(), 1)
    assert doc["power_valid"] and doc["per_gpu_max_sample_gap_s"]["0"] == pytest.approx(0.5)


def test_no_window_and_bad_counts() -> None:
    assert power_validation(_gpu(0, [0.0, 10.0], 1.0), None, 1)["reasons"] == ["profile_window_missing"]
    bad = BenchmarkWindow(T0 + S, T0 + 9 * S, completed=0, input_tokens=1, output_tokens=0)
    reasons = power_validation(_gpu(0, [0.0, 10.0], 1.0), bad, 1)["reasons"]
    assert {"invalid_successful_query_count", "invalid_output_token_count"} <= set(reasons)
    backwards = BenchmarkWindow(T0 + 9 * S, T0 + S, 1, 1, 1)
    assert power_validation(_gpu(0, [0.0, 10.0], 1.0), backwards, 1)["reasons"] == ["invalid_benchmark_window"]


def test_harness_reasons_map_onto_inferencex_names() -> None:
    assert inferencex_reason(rc.WINDOW_NOT_BRACKETED) == "benchmark_window_not_bracketed"
    assert inferencex_reason(rc.NO_SAMPLES) == "no_usable_power_samples"
    assert inferencex_reason(rc.GPU_COUNT_MISMATCH) == "expected_gpu_count_mismatch"
    assert inferencex_reason(rc.ENERGY_COUNTER_MISMATCH) is None   # InferenceX integrates power alone
    assert set(rc.DESCRIPTIONS) <= set(INFERENCEX_REASON)   # every code of ours has a decided InferenceX name


def test_energy_snapshots_need_every_counter() -> None:
    samples = _gpu(0, [0.0, 10.0], 100.0) + _gpu(1, [0.0, 10.0], 200.0)
    start, end = energy_snapshots(samples) or ({}, {})
    assert start == {"0": 1000.0, "1": 1000.0} and end == {"0": 2000.0, "1": 3000.0}
    assert energy_snapshots(_gpu(0, [0.0, 10.0], 100.0, energy=False)) is None


def test_evidence_files_are_written_beside_the_point(tmp_path: Path) -> None:
    samples = _gpu(0, [0.5 * i for i in range(21)], 300.0)
    status = {"gpus": [{"index": 0, "uuid": "GPU-0", "name": "NVIDIA H200", "pci_bus_id": "00000000:18:00.0",
                        "driver_version": "580.159.04"}]}
    write_evidence(tmp_path, samples, status, power_validation(samples, _window(), 1))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["agentic_power_timezone_offset.txt", "gpu_metrics.csv", "gpu_metrics_context.json",
                     "gpu_metrics_energy_end.csv", "gpu_metrics_energy_start.csv", "gpu_metrics_identity.csv",
                     "gpu_metrics_identity.json", "power_validation_inferencex.json"]
    assert json.loads((tmp_path / "gpu_metrics_context.json").read_text()) == {"timestamp_timezone": "UTC"}
    assert (tmp_path / "gpu_metrics_identity.csv").read_text() == (
        "index, uuid, pci.bus_id, name, driver_version\n0, GPU-0, 00000000:18:00.0, NVIDIA H200, 580.159.04\n")
    # the first CSV row is the first sample, in UTC (T0 = 2027-01-15 08:00:00 UTC)
    assert (tmp_path / "gpu_metrics.csv").read_text().splitlines()[1].startswith("2027/01/15 08:00:00.000, 0, GPU-0")
    assert (tmp_path / "gpu_metrics_energy_start.csv").read_text() == "gpu,total_energy_consumption\n0,1000.000\n"


def test_identity_without_nvml_names_is_marked_unknown() -> None:
    rows = identity_rows(None, _gpu(3, [0.0], 1.0))
    assert identity_csv(rows).splitlines()[1] == "3, GPU-3, [N/A], [N/A], [N/A]"
