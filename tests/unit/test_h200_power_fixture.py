"""The point measured on a real H200 (tests/fixtures/h200-power): its published power is what the harness
and InferenceX's own power functions compute from the recorded NVML samples and AIPerf window."""

from __future__ import annotations

import json
import sys
from datetime import UTC
from pathlib import Path

import pytest

from harness.point import inferencex_row
from harness.power.inferencex_window import aiperf_window_ns, inferencex_power
from harness.power.integrate import read_telemetry

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "h200-power"
UPSTREAM = FIXTURE.parent / "inferencex-power" / "upstream"
sys.path.insert(0, str(UPSTREAM))
from infx.results.power.common import _integrate_device, _percentile_total_power  # noqa: E402

sys.path.remove(str(UPSTREAM))
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
    assert inferencex_row.power_metrics(block) == {**published, "power_valid": 1, "power_metric_schema_version": 2}
    assert 400 < ROW["avg_power_w"] < 700 and ROW["p90_power_w"] > ROW["avg_power_w"]  # loaded, varying


def test_inferencex_functions_give_the_published_energy_and_percentiles() -> None:
    samples, _, _ = read_telemetry(FIXTURE / "power.csv")
    series = sorted((s.timestamp_ns / 1e9, s.power_w) for s in samples)
    start, end = (RECORD["power_inferencex"][k] / 1e9 for k in ("start_ns", "end_ns"))
    assert ROW["total_gpu_energy_j"] == pytest.approx(_integrate_device(series, start_unix=start, end_unix=end),
                                                      abs=0.01)
    for q, key in ((0.75, "p75_total_gpu_power_w"), (0.9, "p90_total_gpu_power_w")):
        theirs = _percentile_total_power([series], start_unix=start, end_unix=end, quantile=q)
        assert ROW[key] == round(theirs, 3)
