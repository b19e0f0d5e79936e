"""GPU inventory and the sampler thread against a fake NVML (the real one is in tests/gpu)."""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.artifacts import read_json
from harness.power import COLUMNS, PowerSampler, integrate_power, status_path
from harness.power.gpu_info import GpuRef, gpu_inventory, visible_gpus


class NVMLError(Exception):
    pass


class FakeNvml:
    """Just enough of pynvml: two GPUs at 100 W and 250 W, energy counters advancing in real time.

    The second GPU has no energy counter (NVML answers NotSupported), as on pre-Volta boards.
    """

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0
    NVMLError = NVMLError

    def __init__(self) -> None:
        self.watts = [100.0, 250.0]
        self.uuids = ["GPU-11111111-aaaa", "GPU-22222222-bbbb"]
        self.t0 = time.monotonic()
        self.inits = 0
        self.shutdowns = 0

    def nvmlInit(self) -> None:
        self.inits += 1

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        if i not in (0, 1):
            raise NVMLError("invalid index")
        return i

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> int:
        return self.uuids.index(uuid)

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return self.uuids[h]

    def nvmlDeviceGetMinorNumber(self, h: int) -> int:
        return h + 4  # allocated GPUs 4 and 5 of the node

    def nvmlDeviceGetName(self, h: int) -> bytes:
        return b"NVIDIA H200"

    def nvmlDeviceGetPciInfo(self, h: int) -> Any:
        return type("Pci", (), {"busId": f"00000000:{0x18 + h:02X}:00.0"})()

    def nvmlSystemGetDriverVersion(self) -> str:
        return "580.159.04"

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        return 13000

    def nvmlDeviceGetMemoryInfo(self, h: int) -> Any:
        return type("Mem", (), {"total": 150754820096})()

    def nvmlDeviceGetEnforcedPowerLimit(self, h: int) -> int:
        return 700000

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return int(self.watts[h] * 1000)

    def nvmlDeviceGetTotalEnergyConsumption(self, h: int) -> int:
        if h == 1:
            raise NVMLError("Not Supported")
        return int(5_000_000 + self.watts[h] * (time.monotonic() - self.t0) * 1000)

    def nvmlDeviceGetClockInfo(self, h: int, kind: int) -> int:
        return 1980 if kind == self.NVML_CLOCK_SM else 3201

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> int:
        return 35

    def nvmlDeviceGetUtilizationRates(self, h: int) -> Any:
        raise NVMLError("Not Supported")  # optional context: left empty


@pytest.fixture
def fake_nvml(monkeypatch: pytest.MonkeyPatch) -> FakeNvml:
    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    for name in ("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"):
        monkeypatch.delenv(name, raising=False)
    return fake


@pytest.fixture
def no_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError


def test_inventory_fields(fake_nvml: FakeNvml) -> None:
    inv = gpu_inventory({"SLURM_JOB_GPUS": "5"})
    assert inv == {
        "gpus": [
            {
                "index": 1,
                "uuid": "GPU-22222222-bbbb",
                "name": "NVIDIA H200",
                "minor_number": 5,
                "driver_version": "580.159.04",
                "cuda_driver_version": "13.0",
                "memory_total_bytes": 150754820096,
                "power_limit_w": 700.0,
            }
        ],
        "selection": {"source": "SLURM_JOB_GPUS", "value": "5"},
    }
    assert fake_nvml.inits == fake_nvml.shutdowns == 1


def test_inventory_bad_selection_and_visible_gpus(fake_nvml: FakeNvml) -> None:
    bad = gpu_inventory({"CUDA_VISIBLE_DEVICES": "7"})
    assert bad["gpus"] == [] and bad["reason"].startswith("gpu_selection_invalid: CUDA_VISIBLE_DEVICES")
    refs, reason = visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-2222"})
    assert (refs, reason) == ([GpuRef(1, "GPU-22222222-bbbb")], None)


def test_inventory_without_nvml(no_nvml: None) -> None:
    inv = gpu_inventory()
    assert inv["gpus"] == [] and inv["reason"].startswith("nvml_unavailable: cannot import pynvml")
    assert visible_gpus()[0] == []
    ok, reason = PowerSampler.available()
    assert not ok and reason.startswith("nvml_unavailable")


def test_sampler_writes_rows_and_status(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    csv_path = tmp_path / "point" / "power.csv"
    sampler = PowerSampler(None, csv_path, rate_hz=50.0)
    sampler.start()
    assert sampler.rows_written == 2  # the first tick happens before start() returns
    start_ns = time.time_ns()
    time.sleep(0.4)
    end_ns = time.time_ns()
    sampler.stop()
    sampler.stop()  # idempotent

    rows = list(csv.DictReader(csv_path.read_text().splitlines()))
    assert tuple(rows[0]) == COLUMNS
    by_gpu = {u: [r for r in rows if r["gpu_uuid"] == u] for u in fake_nvml.uuids}
    assert 5 <= len(by_gpu["GPU-11111111-aaaa"]) <= 30  # ~0.4 s at 50 Hz, plus first and last
    assert all(r["energy_mj"] for r in by_gpu["GPU-11111111-aaaa"])
    assert not any(r["energy_mj"] for r in by_gpu["GPU-22222222-bbbb"])
    assert {r["power_w"] for r in by_gpu["GPU-22222222-bbbb"]} == {"250.000"}
    assert rows[-1]["sm_clock_mhz"] == "1980" and rows[-1]["util_pct"] == ""
    stamps = [int(r["timestamp_ns"]) for r in by_gpu["GPU-11111111-aaaa"]]
    assert stamps == sorted(stamps) and stamps[-1] >= end_ns  # last sample taken after stop()

    status = read_json(status_path(csv_path))
    assert status["nvml_available"] is True and status["rows_written"] == len(rows)
    assert status["gpus"] == [
        {"index": 0, "uuid": "GPU-11111111-aaaa", "energy_counter": True, "name": "NVIDIA H200",
         "pci_bus_id": "00000000:18:00.0", "driver_version": "580.159.04"},
        {"index": 1, "uuid": "GPU-22222222-bbbb", "energy_counter": False, "name": "NVIDIA H200",
         "pci_bus_id": "00000000:19:00.0", "driver_version": "580.159.04"},
    ]
    assert fake_nvml.shutdowns == fake_nvml.inits

    report = integrate_power(csv_path, start_ns, end_ns, 2)
    assert report.valid, report.validation_json()["reasons"]
    first, second = report.gpus
    assert first.energy_source == "energy_counter" and second.energy_source == "power_trapezoid"
    assert first.avg_power_w == pytest.approx(100.0, rel=0.03)
    assert second.avg_power_w == pytest.approx(250.0, abs=0.001)


def test_sampler_explicit_gpus(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    with PowerSampler([GpuRef(1, "GPU-22222222-bbbb")], tmp_path / "power.csv", rate_hz=20) as sampler:
        assert sampler.gpus == [GpuRef(1, "GPU-22222222-bbbb")]
    rows = list(csv.DictReader((tmp_path / "power.csv").read_text().splitlines()))
    assert {r["gpu_index"] for r in rows} == {"1"} and len(rows) >= 2


def test_sampler_without_nvml_writes_header_only(no_nvml: None, tmp_path: Path) -> None:
    csv_path = tmp_path / "power.csv"
    sampler = PowerSampler(None, csv_path)
    sampler.start()
    sampler.stop()
    assert csv_path.read_text().splitlines() == [",".join(COLUMNS)]
    assert sampler.unavailable_reason and sampler.unavailable_reason.startswith("nvml_unavailable")
    report = integrate_power(csv_path, 1, 2, 4)
    assert report.reason_codes() == ["nvml_unavailable"]


def test_sampler_misuse(no_nvml: None, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        PowerSampler(None, tmp_path / "p.csv", rate_hz=0)
    PowerSampler(None, tmp_path / "never.csv").stop()  # stop without start: nothing to do
    sampler = PowerSampler(None, tmp_path / "p.csv")
    sampler.start()
    with pytest.raises(RuntimeError):
        sampler.start()
    sampler.stop()
