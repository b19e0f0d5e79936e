"""The power evidence InferenceX's single-node AgentX jobs upload, written into a point's directory.

Beside `power.csv` (the harness's own samples) a point with measured power holds what InferenceX's review and
its app read, in their formats:

- `gpu_metrics.csv`: the samples as nvidia-smi writes them, timestamps in UTC, with `gpu_metrics_context.json`
  (`{"timestamp_timezone": "UTC"}`) beside it, so InferenceX reads them as UTC on any host;
- `agentic_power_timezone_offset.txt`: this host's UTC offset (`+HH:MM`), which InferenceX applies to AIPerf's
  naive local `start_time`/`end_time`;
- `gpu_metrics_identity.json` and `.csv`: each sampled GPU's index, UUID, PCI bus id, name (SKU) and driver, as
  nvidia-smi's `--query-gpu=index,uuid,pci.bus_id,name,driver_version` writes them (`[N/A]` where NVML did not
  answer);
- `gpu_metrics_energy_start.csv` / `_end.csv`: each GPU's energy counter (J) at the first and the last sample,
  as `gpu,total_energy_consumption`, which InferenceX compares with the integral of the whole stream (only
  when every GPU has a counter);
- `power_validation_inferencex.json`: InferenceX's audit document (`harness.power.inferencex_audit`), over
  AIPerf's profiling window.

`harness export --inferencex` lays these out as `gpu_metrics_<name>/` and `power_audit_<name>/`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.artifacts import write_foreign_json, write_text
from harness.power.gpu_metrics import write_gpu_metrics
from harness.power.inferencex_audit import energy_snapshots
from harness.power.samples import PowerSample

CONTEXT_NAME = "gpu_metrics_context.json"
CONTEXT = {"timestamp_timezone": "UTC"}
IDENTITY_JSON = "gpu_metrics_identity.json"
IDENTITY_CSV = "gpu_metrics_identity.csv"
ENERGY_START = "gpu_metrics_energy_start.csv"
ENERGY_END = "gpu_metrics_energy_end.csv"
AUDIT_NAME = "power_validation_inferencex.json"
IDENTITY_COLUMNS = ("index", "uuid", "pci.bus_id", "name", "driver_version")
_NA = "[N/A]"


def identity_rows(status: Mapping[str, Any] | None, samples: Sequence[PowerSample]) -> list[dict[str, str]]:
    """One row per sampled GPU, in index order: the sampler's NVML identity, `[N/A]` where it is unknown."""
    known = {g.get("uuid"): g for g in (status or {}).get("gpus") or [] if isinstance(g, dict)}
    sampled = sorted({(s.gpu_index, s.gpu_uuid) for s in samples})
    rows = []
    for index, uuid in sampled:
        gpu = known.get(uuid, {})
        rows.append({"index": str(index), "uuid": uuid or _NA, "pci.bus_id": gpu.get("pci_bus_id") or _NA,
                     "name": gpu.get("name") or _NA, "driver_version": gpu.get("driver_version") or _NA})
    return rows


def identity_csv(rows: Sequence[Mapping[str, str]]) -> str:
    lines = [", ".join(IDENTITY_COLUMNS)] + [", ".join(row[c] for c in IDENTITY_COLUMNS) for row in rows]
    return "\n".join(lines) + "\n"


def energy_csv(joules_by_gpu: Mapping[str, float]) -> str:
    return "gpu,total_energy_consumption\n" + "".join(f"{g},{j:.3f}\n" for g, j in joules_by_gpu.items())


def write_evidence(pdir: Path, samples: Sequence[PowerSample], status: Mapping[str, Any] | None,
                   audit: Mapping[str, Any]) -> None:
    """Write every file above into `pdir` (the CSVs only when there are samples)."""
    if write_gpu_metrics(samples, pdir) is not None:
        write_foreign_json(pdir / CONTEXT_NAME, CONTEXT)
        rows = identity_rows(status, samples)
        write_foreign_json(pdir / IDENTITY_JSON, {"gpus": rows})
        write_text(pdir / IDENTITY_CSV, identity_csv(rows))
        snapshots = energy_snapshots(samples)
        if snapshots is not None:
            write_text(pdir / ENERGY_START, energy_csv(snapshots[0]))
            write_text(pdir / ENERGY_END, energy_csv(snapshots[1]))
    write_foreign_json(pdir / AUDIT_NAME, dict(audit))
