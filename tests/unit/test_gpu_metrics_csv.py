"""`gpu_metrics.csv` in nvidia-smi's form (InferenceX's power aggregation reads it; see the README of
tests/fixtures/inferencex-contract for the recorded run of InferenceX's `integrate_power` on such a file)."""

from __future__ import annotations

from datetime import UTC, timedelta, timezone
from pathlib import Path

from harness.power.gpu_metrics import CSV_NAME, HEADER, OFFSET_NAME, gpu_metrics_csv, utc_offset_text, write_gpu_metrics
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


def test_write_gpu_metrics_writes_the_csv_and_its_offset_or_nothing(tmp_path: Path) -> None:
    samples = [PowerSample(timestamp_ns=1_764_550_000_000_000_000, gpu_index=0, gpu_uuid="GPU-0", power_w=100.0)]
    assert write_gpu_metrics([], tmp_path) is None and not (tmp_path / CSV_NAME).exists()
    assert write_gpu_metrics(samples, tmp_path) == tmp_path / CSV_NAME
    assert (tmp_path / CSV_NAME).read_text().splitlines()[1].endswith("100.00 W, [N/A], [N/A], [N/A], [N/A]")
    assert (tmp_path / OFFSET_NAME).read_text().strip()[0] in "+-"
