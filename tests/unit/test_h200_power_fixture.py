"""The point measured on a real H200 (tests/fixtures/h200-power): its published power is what the harness
computes from the recorded NVML samples and AIPerf window, and what InferenceX's own power functions
computed from them (tests/fixtures/inferencex-power/outputs.json)."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path

import pytest

from harness.point.record import inferencex_row
from harness.power.inferencex_window import aiperf_window_ns, inferencex_power
from harness.power.samples import read_telemetry

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "h200-power"
INFERENCEX = json.loads((FIXTURE.parent / "inferencex-power" / "outputs.json").read_text())["h200"]
ROW = json.loads((FIXTURE / "bmk_agentic_quickstart-sim_conc4.json").read_text())
RECORD = json.loads((FIXTURE / "point_result.json").read_text())


def test_recorded_offset_is_utc() -> None:
    assert (FIXTURE / "agentic_power_timezone_offset.txt").read_text().strip() == "+00:00"


def test_row_power_is_recomputed_from_the_samples_and_aiperf_window() -> None:
    summary = json.loads((FIXTURE / "aiperf" / "profile_export_aiperf.json").read_text())
    window = aiperf_window_ns(summary, UTC)
    assert window == (RECORD["power_inferencex"]["start_ns"], RECORD["power_inferencex"]["end_ns"])
    samples, problems, status = read_telemetry(FIXTURE / "power.csv")
    assert status is not None and status["nvml_available"] and not problems
    successful = ROW["num_requests_successful"]
    tokens = RECORD["request_metrics"]["throughput"]["tokens"]
    block = inferencex_power(samples, window, 1, successful, int(tokens["input"]), int(tokens["output"]))
    assert block["valid"] and ROW["power_valid"] == 1
    published = {k: v for k, v in ROW.items() if k in inferencex_row.POWER_METRIC_KEYS}
    # the recorded row divided an energy rounded to the millijoule; InferenceX (and now the harness) divide the
    # unrounded integral: each figure agrees to 1e-7 or its last published digit
    assert inferencex_row.power_metrics(block) == pytest.approx(
        {**published, "power_valid": 1, "power_metric_schema_version": 2}, rel=1e-7, abs=1.01e-6)
    assert 400 < ROW["avg_power_w"] < 700 and ROW["p90_power_w"] > ROW["avg_power_w"]  # loaded, varying


def test_inferencex_functions_gave_the_published_energy_and_percentiles() -> None:
    assert (INFERENCEX["start"], INFERENCEX["end"]) == tuple(RECORD["power_inferencex"][k] / 1e9
                                                             for k in ("start_ns", "end_ns"))
    assert ROW["total_gpu_energy_j"] == pytest.approx(sum(INFERENCEX["energy_j"]), abs=0.01)
    for q, key in (("0.75", "p75_total_gpu_power_w"), ("0.9", "p90_total_gpu_power_w")):
        assert ROW[key] == round(INFERENCEX["percentile_total_w"][q], 3)
