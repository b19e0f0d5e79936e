"""Background NVML sampler: one `power.csv` row per GPU per tick, stamped with `time.time_ns()`.

Start it before the client's profiling window and stop it after: stopping takes one last sample so
the window end is bracketed. Without NVML nothing raises: the CSV holds only its header and the
status sidecar (`power.sampler.json`) says `nvml_available: false` with the reason, which the
integrator reports as `nvml_unavailable`.
"""

from __future__ import annotations

import contextlib
import csv
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, Any, Self

from harness.artifacts import write_json
from harness.power.gpu_info import GpuRef, enumerate_devices, load_nvml, nvml_optional, nvml_text, resolve_visible
from harness.power.samples import COLUMNS, PowerSample, format_row, status_path

MAX_RATE_HZ = 100.0


@dataclass
class _Device:
    ref: GpuRef
    handle: Any
    has_energy_counter: bool
    identity: dict[str, str | None]   # name, pci_bus_id, driver_version (`gpu_metrics_identity`), None unknown


class PowerSampler:
    """Samples power, energy counter, clocks, temperature and utilisation of `gpus` at `rate_hz`.

    `gpus=None` samples the GPUs this process may use (see `harness.power.gpu_info`).
    """

    def __init__(self, gpus: list[GpuRef] | None, csv_path: Path, rate_hz: float = 10.0) -> None:
        if not 0 < rate_hz <= MAX_RATE_HZ:
            raise ValueError(f"rate_hz must be in (0, {MAX_RATE_HZ:g}], got {rate_hz}")
        self.csv_path = Path(csv_path)
        self.rate_hz = float(rate_hz)
        self._requested = None if gpus is None else list(gpus)
        self._nvml: ModuleType | None = None
        self._devices: list[_Device] = []
        self._reason: str | None = None
        self._file: IO[str] | None = None
        self._writer: Any = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._started_ns: int | None = None
        self._stopped_ns: int | None = None
        self.rows_written = 0
        self.read_errors = 0
        self._last_error: str | None = None

    @staticmethod
    def available() -> tuple[bool, str]:
        """(True, "N GPU(s)") when NVML loads and shows a GPU, else (False, "nvml_unavailable: why")."""
        nvml, reason = load_nvml()
        if nvml is None:
            return False, reason or "nvml_unavailable"
        try:
            count = nvml.nvmlDeviceGetCount()
        except nvml.NVMLError as exc:
            return False, f"nvml_unavailable: nvmlDeviceGetCount failed ({exc})"
        finally:
            with contextlib.suppress(nvml.NVMLError):
                nvml.nvmlShutdown()
        if count < 1:
            return False, "nvml_unavailable: NVML shows no GPU"
        return True, f"{count} GPU(s)"

    @property
    def gpus(self) -> list[GpuRef]:
        """The GPUs being sampled (empty before start or without NVML)."""
        return [d.ref for d in self._devices]

    @property
    def unavailable_reason(self) -> str | None:
        """Why nothing is sampled (`nvml_unavailable: ...`), or None when sampling."""
        return self._reason

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Write the CSV header, open NVML, take the first sample and start the sampling thread.

        Never raises for NVML problems: they leave a header-only CSV and `unavailable_reason` set.
        """
        if self._file is not None:
            raise RuntimeError("PowerSampler already started")
        self.csv_path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.csv_path, "w", newline="")  # noqa: SIM115 - open until stop()
        self._writer = csv.writer(self._file)
        self._writer.writerow(COLUMNS)
        self._file.flush()
        self._started_ns = time.time_ns()
        self._nvml, self._reason = load_nvml()
        if self._nvml is not None:
            try:
                self._devices = self._open_devices(self._nvml)
            except Exception as exc:  # noqa: BLE001 - start() never raises for NVML problems
                self._reason = f"nvml_unavailable: {type(exc).__name__}: {exc}"
                self._devices = []
            if not self._devices and self._reason is None:
                self._reason = "nvml_unavailable: no GPU selected"
        self._write_status()
        if self._devices:
            self._tick()  # first sample before start() returns: a window opened afterwards is bracketed
            self._thread = threading.Thread(target=self._run, name="power-sampler", daemon=True)
            self._thread.start()

    def _open_devices(self, nvml: ModuleType) -> list[_Device]:
        if self._requested is None:
            pairs = enumerate_devices(nvml)
            chosen = resolve_visible(os.environ, [ident for ident, _ in pairs])
            handles = {ident.uuid: h for ident, h in pairs}
            refs = [(GpuRef(d.index, d.uuid), handles[d.uuid]) for d in chosen.devices]
        else:
            refs = []
            for ref in self._requested:
                if ref.uuid:
                    handle = nvml.nvmlDeviceGetHandleByUUID(ref.uuid)
                else:
                    handle = nvml.nvmlDeviceGetHandleByIndex(ref.index)
                uuid = nvml.nvmlDeviceGetUUID(handle)
                refs.append(
                    (GpuRef(ref.index, uuid.decode() if isinstance(uuid, bytes) else str(uuid)), handle)
                )
        devices = []
        driver = nvml_optional(nvml.nvmlSystemGetDriverVersion)
        for ref, handle in refs:
            try:
                nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
                has_counter = True
            except nvml.NVMLError:
                has_counter = False
            name, pci = nvml_optional(nvml.nvmlDeviceGetName, handle), nvml_optional(nvml.nvmlDeviceGetPciInfo, handle)
            bus_id = getattr(pci, "busId", None)
            identity = {"name": None if name is None else nvml_text(name),
                        "pci_bus_id": None if bus_id is None else nvml_text(bus_id),
                        "driver_version": None if driver is None else nvml_text(driver)}
            devices.append(_Device(ref, handle, has_counter, identity))
        return devices

    def _read(self, device: _Device) -> PowerSample | None:
        nvml = self._nvml
        assert nvml is not None
        handle = device.handle
        timestamp = time.time_ns()
        try:
            power_w = nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
        except nvml.NVMLError as exc:
            self.read_errors += 1
            self._last_error = f"GPU {device.ref.uuid}: power read failed: {exc}"
            return None
        energy = None
        if device.has_energy_counter:
            try:
                energy = int(nvml.nvmlDeviceGetTotalEnergyConsumption(handle))
            except nvml.NVMLError as exc:
                self.read_errors += 1
                self._last_error = f"GPU {device.ref.uuid}: energy read failed: {exc}"

        def extra(fn: Any, *args: Any) -> Any:
            try:
                return fn(handle, *args)
            except nvml.NVMLError:
                return None

        util = extra(nvml.nvmlDeviceGetUtilizationRates)
        return PowerSample(
            timestamp_ns=timestamp,
            gpu_index=device.ref.index,
            gpu_uuid=device.ref.uuid,
            power_w=power_w,
            energy_mj=energy,
            sm_clock_mhz=extra(nvml.nvmlDeviceGetClockInfo, nvml.NVML_CLOCK_SM),
            mem_clock_mhz=extra(nvml.nvmlDeviceGetClockInfo, nvml.NVML_CLOCK_MEM),
            temp_c=extra(nvml.nvmlDeviceGetTemperature, nvml.NVML_TEMPERATURE_GPU),
            util_pct=None if util is None else int(util.gpu),
        )

    def _tick(self) -> None:
        rows = [s for s in (self._read(d) for d in self._devices) if s is not None]
        with self._lock:
            if self._file is None:
                return
            for sample in rows:
                self._writer.writerow(format_row(sample))
            self._file.flush()
            self.rows_written += len(rows)

    def _run(self) -> None:
        period_ns = int(1e9 / self.rate_hz)
        next_ns = time.monotonic_ns() + period_ns
        try:
            while not self._stop.wait(max(0, next_ns - time.monotonic_ns()) / 1e9):
                self._tick()
                next_ns += period_ns
                now = time.monotonic_ns()
                next_ns = max(next_ns, now)  # after a slow tick, skip the missed slots instead of bursting
            self._tick()  # one sample after stop() so the window end is bracketed
        except Exception as exc:  # noqa: BLE001 - keep the CSV and report why sampling ended early
            self._last_error = f"sampling thread stopped: {type(exc).__name__}: {exc}"

    def stop(self) -> None:
        """Take a final sample, close the CSV and NVML, write the status sidecar. Never raises."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        with self._lock:
            if self._file is not None:
                with contextlib.suppress(OSError):
                    self._file.close()
                self._file = None
        if self._nvml is not None:
            with contextlib.suppress(Exception):
                self._nvml.nvmlShutdown()
            self._nvml = None
        if self._stopped_ns is None and self._started_ns is not None:
            self._stopped_ns = time.time_ns()
            self._write_status()

    def status(self) -> dict[str, Any]:
        """What the status sidecar holds."""
        return {
            "nvml_available": self._reason is None,
            "reason": self._reason,
            "rate_hz": self.rate_hz,
            "csv": self.csv_path.name,
            "gpus": [
                {"index": d.ref.index, "uuid": d.ref.uuid, "energy_counter": d.has_energy_counter, **d.identity}
                for d in self._devices
            ],
            "started_ns": self._started_ns,
            "stopped_ns": self._stopped_ns,
            "rows_written": self.rows_written,
            "read_errors": self.read_errors,
            "last_error": self._last_error,
        }

    def _write_status(self) -> None:
        with contextlib.suppress(OSError):
            write_json(status_path(self.csv_path), self.status())
