"""`gpu_metrics.csv` in nvidia-smi's form (InferenceX's power aggregation reads it; see the README of
tests/fixtures/inferencex-contract for the recorded run of InferenceX's `integrate_power` on such a file)."""

from __future__ import annotations

from datetime import UTC, timedelta, timezone

from harness.power.gpu_metrics import HEADER, gpu_metrics_csv, utc_offset_text
from harness.power.samples import PowerSample

S = 1_000_000_000


def test_header_cells_and_local_timestamps() -> None:
    samples = [PowerSample(1_764_550_000 * S + 5 * S // 1000, 1, "GPU-b", 200.5, temp_c=41, util_pct=87,
                           sm_clock_mhz=1980, mem_clock_mhz=3201),
               PowerSample(1_764_550_000 * S, 0, "GPU-a", 100.0)]
    lines = gpu_metrics_csv(samples, timezone(timedelta(hours=-8))).splitlines()
    assert lines[0] == HEADER
    assert lines[1] == "2025/11/30 16:46:40.000, 0, GPU-a, 100.00 W, [N/A], [N/A], [N/A], [N/A]"
    assert lines[2] == "2025/11/30 16:46:40.005, 1, GPU-b, 200.50 W, 41, 87 %, 1980 MHz, 3201 MHz"


def test_offset_text() -> None:
    assert utc_offset_text(UTC) == "+00:00"
    assert utc_offset_text(timezone(timedelta(hours=-7, minutes=-30))) == "-07:30"
    assert utc_offset_text(timezone(timedelta(hours=5, minutes=45))) == "+05:45"
