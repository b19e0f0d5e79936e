"""The `power.csv` format: one row per GPU per sampling tick, wall-clock nanosecond timestamps.

Columns: `timestamp_ns,gpu_index,gpu_uuid,power_w,energy_mj,sm_clock_mhz,mem_clock_mhz,temp_c,util_pct`.
`energy_mj` is NVML's total-energy counter (millijoules since the driver loaded), empty where the GPU
has none; the last four columns are context and may be empty. The sampler writes a status sidecar
(`power.sampler.json` beside `power.csv`) saying whether NVML was available and which GPUs it read.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.power import reasons as rc
from harness.power.reasons import Reason

COLUMNS = (
    "timestamp_ns",
    "gpu_index",
    "gpu_uuid",
    "power_w",
    "energy_mj",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "temp_c",
    "util_pct",
)
REQUIRED_COLUMNS = ("timestamp_ns", "gpu_index", "gpu_uuid", "power_w", "energy_mj")


@dataclass(frozen=True)
class PowerSample:
    """One reading of one GPU."""

    timestamp_ns: int
    gpu_index: int
    gpu_uuid: str
    power_w: float
    energy_mj: int | None = None
    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    temp_c: int | None = None
    util_pct: int | None = None

    @property
    def gpu_key(self) -> str:
        """The GPU's identity in reports: its UUID, or its index where the UUID is unknown."""
        return self.gpu_uuid or str(self.gpu_index)


@dataclass(frozen=True)
class ParsedTelemetry:
    """Samples read from a CSV plus the file-level problems met while reading it."""

    samples: list[PowerSample]
    problems: list[Reason]


def status_path(csv_path: Path) -> Path:
    """Where the sampler's status sidecar for `csv_path` lives (`power.csv` → `power.sampler.json`)."""
    csv_path = Path(csv_path)
    return csv_path.with_name(csv_path.stem + ".sampler.json")


def format_row(sample: PowerSample) -> list[str]:
    """The CSV cells of one sample, in COLUMNS order (empty cell = not available)."""

    def cell(value: object) -> str:
        return "" if value is None else str(value)

    return [
        str(sample.timestamp_ns),
        str(sample.gpu_index),
        sample.gpu_uuid,
        f"{sample.power_w:.3f}",
        cell(sample.energy_mj),
        cell(sample.sm_clock_mhz),
        cell(sample.mem_clock_mhz),
        cell(sample.temp_c),
        cell(sample.util_pct),
    ]


def _optional_int(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text else None


def parse_row(row: dict[str, str]) -> PowerSample:
    """One CSV row as a sample; raises ValueError on an unparsable or impossible value."""
    power = float(row["power_w"])
    if not math.isfinite(power) or power < 0:
        raise ValueError(f"power_w={row['power_w']!r}")
    energy = _optional_int(row.get("energy_mj"))
    if energy is not None and energy < 0:
        raise ValueError(f"energy_mj={energy}")
    timestamp = int(row["timestamp_ns"])
    if timestamp <= 0:
        raise ValueError(f"timestamp_ns={timestamp}")
    return PowerSample(
        timestamp_ns=timestamp,
        gpu_index=int(row["gpu_index"]),
        gpu_uuid=(row.get("gpu_uuid") or "").strip(),
        power_w=power,
        energy_mj=energy,
        sm_clock_mhz=_optional_int(row.get("sm_clock_mhz")),
        mem_clock_mhz=_optional_int(row.get("mem_clock_mhz")),
        temp_c=_optional_int(row.get("temp_c")),
        util_pct=_optional_int(row.get("util_pct")),
    )


def read_power_csv(path: Path) -> ParsedTelemetry:
    """Read a power CSV; problems are reason codes, never exceptions."""
    path = Path(path)
    if not path.exists():
        return ParsedTelemetry([], [Reason(rc.TELEMETRY_FILE_MISSING, f"{path} does not exist")])
    try:
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames
            if not header:
                return ParsedTelemetry([], [Reason(rc.TELEMETRY_FILE_EMPTY, f"{path} has no header line")])
            missing = [c for c in REQUIRED_COLUMNS if c not in header]
            if missing:
                return ParsedTelemetry(
                    [],
                    [Reason(rc.TELEMETRY_COLUMN_MISSING, f"{path}: missing column(s) {', '.join(missing)}")],
                )
            samples: list[PowerSample] = []
            bad: list[str] = []
            for line_no, row in enumerate(reader, start=2):
                try:
                    samples.append(parse_row(row))
                except (ValueError, TypeError) as exc:
                    bad.append(f"line {line_no}: {exc}")
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        return ParsedTelemetry([], [Reason(rc.TELEMETRY_FILE_UNREADABLE, f"{path}: {exc}")])
    problems = []
    if bad:
        shown = "; ".join(bad[:10]) + (f"; {len(bad) - 10} unnamed" if len(bad) > 10 else "")
        problems.append(Reason(rc.INVALID_SAMPLE_ROW, f"{path}: {len(bad)} unparsable row(s): {shown}"))
    return ParsedTelemetry(samples, problems)


def read_sampler_status(csv_path: Path) -> dict[str, Any] | None:
    """The sampler's status sidecar for `csv_path`, or None when absent or unreadable."""
    path = status_path(csv_path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_telemetry(csv_path: Path) -> tuple[list[PowerSample], list[Reason], dict[str, Any] | None]:
    """`power.csv`'s samples, the problems met reading it (NVML unavailable included), the sampler's status."""
    parsed = read_power_csv(Path(csv_path))
    status = read_sampler_status(Path(csv_path))
    problems: list[Reason] = []
    if status is not None and status.get("nvml_available") is False:
        problems.append(Reason(rc.NVML_UNAVAILABLE, str(status.get("reason") or "NVML unavailable")))
    problems.extend(parsed.problems)
    return parsed.samples, problems, status
