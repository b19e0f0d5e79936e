"""The real-H200 point exported as InferenceX's artifacts (tests/fixtures/h200-export): the power evidence is
whole, says what the record says, and agrees with InferenceX's own integration of the same export."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.point.record import inferencex_row
from harness.power.inferencex_audit import BenchmarkWindow, power_validation
from harness.power.inferencex_window import aiperf_window_ns
from harness.power.samples import PowerSample

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "h200-export"
NAME = "quickstart-sim_duration_s=60_conc4"
EXPORT = FIXTURE / "export"
GPU_DIR = EXPORT / f"gpu_metrics_{NAME}"
AUDIT = json.loads((EXPORT / f"power_audit_{NAME}" / f"power_validation_{NAME}.json").read_text())
RECORD = json.loads((FIXTURE / "point_result.json").read_text())
ROW = json.loads((EXPORT / f"bmk_agentic_{NAME}" / f"bmk_agentic_{NAME}.json").read_text())
INFERENCEX = json.loads((FIXTURE / "inferencex-single-node.json").read_text())


def _exported_samples() -> list[PowerSample]:
    """gpu_metrics.csv read as InferenceX reads it with its context file: UTC timestamps, GPU by `index`."""
    assert json.loads((GPU_DIR / "gpu_metrics_context.json").read_text()) == {"timestamp_timezone": "UTC"}
    samples = []
    with (GPU_DIR / "gpu_metrics.csv").open(newline="") as fh:
        for row in csv.DictReader(fh, skipinitialspace=True):
            when = datetime.strptime(row["timestamp"], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=UTC)
            samples.append(PowerSample(round(when.timestamp() * 1e9), int(row["index"]), row["uuid"],
                                       float(row["power.draw [W]"].removesuffix(" W"))))
    return samples


def test_the_export_carries_every_file_inferencex_uploads() -> None:
    assert sorted(p.name for p in GPU_DIR.iterdir()) == [
        "gpu_metrics.csv", "gpu_metrics_context.json", "gpu_metrics_energy_end.csv", "gpu_metrics_energy_start.csv",
        "gpu_metrics_identity.csv", "gpu_metrics_identity.json"]
    identity = json.loads((GPU_DIR / "gpu_metrics_identity.json").read_text())["gpus"]
    assert len(identity) == 1 and identity[0]["name"] == "NVIDIA H200" and identity[0]["driver_version"] == "580.159.04"
    assert identity[0]["uuid"].startswith("GPU-") and identity[0]["uuid"] in (FIXTURE / "env.txt").read_text()
    assert (EXPORT / f"agentic_{NAME}" / "agentic_power_timezone_offset.txt").read_text().strip() == "+00:00"
    assert (EXPORT / f"agentic_{NAME}" / "aiperf_artifacts" / "profile_export_aiperf.json").is_file()


def test_the_audit_is_inferencex_schema_over_aiperf_window_and_says_what_the_record_says() -> None:
    assert AUDIT["schema_version"] == 1 and AUDIT["power_valid"] is True and AUDIT["reasons"] == []
    assert AUDIT["observed_gpu_ids"] == ["0"] and AUDIT["observed_gpu_count"] == 1
    summary = json.loads((EXPORT / f"agentic_{NAME}" / "aiperf_artifacts" / "profile_export_aiperf.json").read_text())
    start_ns, end_ns = aiperf_window_ns(summary, UTC) or (0, 0)
    block = RECORD["power_inferencex"]
    assert (start_ns, end_ns) == (block["start_ns"], block["end_ns"])
    assert AUDIT["benchmark_window"]["start_time_unix"] == pytest.approx(start_ns / 1e9, abs=1e-6)
    assert AUDIT["benchmark_window"]["end_time_unix"] == pytest.approx(end_ns / 1e9, abs=1e-6)
    assert AUDIT["benchmark_window"]["completed"] == RECORD["num_requests_successful"] == ROW["num_requests_successful"]
    assert block["valid"] and AUDIT["metrics"] == {k: round(v, 6) for k, v in block["metrics"].items()}
    assert ROW["power_valid"] == 1 and inferencex_row.power_metrics(block) == {
        k: v for k, v in ROW.items() if k in inferencex_row.POWER_METRIC_KEYS
        or k in ("power_valid", "power_metric_schema_version")}


def test_inferencex_integration_of_the_export_agrees_within_1e_4() -> None:
    ix = INFERENCEX["integration"]
    assert ix["power_valid"] and ix["invalid_reasons"] == [] and ix["observed_gpu_ids"] == AUDIT["observed_gpu_ids"]
    assert INFERENCEX["process_timezone"].startswith("America/Los_Angeles")   # a host whose clock is not UTC
    assert ix["total_gpu_energy_j"] == pytest.approx(AUDIT["metrics"]["total_gpu_energy_j"], rel=1e-4)
    for key in ("avg_power_w", "p75_total_gpu_power_w", "p90_total_gpu_power_w"):
        assert ix[key] == pytest.approx(AUDIT["metrics"][key], rel=1e-4)
    assert INFERENCEX["accumulator_cross_check"]["within_tolerance"] is True


def test_the_harness_recomputes_the_audit_from_the_exported_csv() -> None:
    window = AUDIT["benchmark_window"]
    doc = power_validation(_exported_samples(), BenchmarkWindow(
        round(window["start_time_unix"] * 1e9), round(window["end_time_unix"] * 1e9), window["completed"],
        window["total_input_tokens"], window["total_output_tokens"]), 1)
    assert doc["power_valid"] and doc["per_gpu_sample_counts"] == AUDIT["per_gpu_sample_counts"]
    # the CSV carries nvidia-smi's 0.01 W and 1 ms: the same energy as InferenceX's reading of it
    assert doc["metrics"]["total_gpu_energy_j"] == pytest.approx(INFERENCEX["integration"]["total_gpu_energy_j"],
                                                                 rel=1e-8)   # (InferenceX keeps absolute float seconds: ~1e-7 s each)
    assert doc["metrics"]["total_gpu_energy_j"] == pytest.approx(AUDIT["metrics"]["total_gpu_energy_j"], rel=1e-4)
