"""Which NVIDIA GPUs this process may use, and what they are (the GPU part of a worker fingerprint).

NVML numbers GPUs in PCI bus order and ignores `CUDA_VISIBLE_DEVICES`, so the GPUs a server uses are
resolved here from the environment, then identified by UUID everywhere downstream:

1. `CUDA_VISIBLE_DEVICES` naming UUIDs (`GPU-…`, full or a unique prefix): exactly those GPUs.
2. A Slurm GPU list (`SLURM_STEP_GPUS`, else `SLURM_JOB_GPUS`): global device numbers on the node
   (the `/dev/nvidiaN` minor numbers; allocations need not start at 0). If `CUDA_VISIBLE_DEVICES`
   (else `GPU_DEVICE_ORDINAL`) also holds indices that are not that same list, they are positions
   within it when all are smaller than its length (Slurm renumbers from 0 under device
   confinement), otherwise device numbers themselves.
3. `CUDA_VISIBLE_DEVICES` (else `GPU_DEVICE_ORDINAL`) holding indices: NVML indices
   (CUDA enumerates in the same PCI order when `CUDA_DEVICE_ORDER=PCI_BUS_ID`, and on nodes of
   identical GPUs).
4. Nothing set: every GPU NVML sees.

An empty `CUDA_VISIBLE_DEVICES` (or `-1`, `NoDevFiles`) means no GPU. The inventory never raises:
without NVML it returns `{"gpus": [], "reason": "nvml_unavailable: ..."}`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

_NO_DEVICE_VALUES = {"", "-1", "nodevfiles", "none"}


@dataclass(frozen=True)
class GpuRef:
    """One GPU as NVML knows it: its NVML index and its UUID (the stable identity)."""

    index: int
    uuid: str


@dataclass(frozen=True)
class DeviceId:
    """Identity of one GPU NVML enumerates: NVML index, device minor number (or None), UUID."""

    index: int
    minor: int | None
    uuid: str


@dataclass(frozen=True)
class Selection:
    """The GPUs chosen from the environment, and which variable chose them."""

    devices: tuple[DeviceId, ...]
    source: str
    value: str | None


class SelectionError(ValueError):
    """The environment names a GPU that NVML does not show."""


def _split(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _is_uuid(item: str) -> bool:
    return item.upper().startswith(("GPU-", "MIG-"))


def _parse_indices(name: str, value: str) -> list[int]:
    items = _split(value)
    try:
        return [int(item) for item in items]
    except ValueError:
        raise SelectionError(f"{name}={value!r}: expected comma-separated GPU indices or UUIDs") from None


def _expand_slurm_list(name: str, value: str) -> list[int]:
    """Slurm GPU lists: `0,1,4` or ranges such as `4-7` (as Slurm prints them)."""
    out: list[int] = []
    for item in _split(value):
        try:
            if "-" in item:
                lo, hi = item.split("-", 1)
                out.extend(range(int(lo), int(hi) + 1))
            else:
                out.append(int(item))
        except ValueError:
            raise SelectionError(f"{name}={value!r}: expected GPU numbers such as 0,1 or 4-7") from None
    return out


def _by_uuid(devices: Sequence[DeviceId], wanted: list[str], name: str) -> list[DeviceId]:
    chosen: list[DeviceId] = []
    for item in wanted:
        matches = [d for d in devices if d.uuid.lower().startswith(item.lower())]
        if len(matches) != 1:
            what = "matches no GPU" if not matches else "is ambiguous"
            raise SelectionError(f"{name}: {item} {what} (NVML shows {[d.uuid for d in devices]})")
        chosen.append(matches[0])
    return chosen


def _by_index(devices: Sequence[DeviceId], wanted: list[int], name: str) -> list[DeviceId]:
    table = {d.index: d for d in devices}
    missing = [i for i in wanted if i not in table]
    if missing:
        raise SelectionError(f"{name}: GPU index {missing} not shown by NVML (indices {sorted(table)})")
    return [table[i] for i in wanted]


def _by_device_number(devices: Sequence[DeviceId], wanted: list[int], name: str) -> list[DeviceId]:
    if any(d.minor is None for d in devices):
        return _by_index(devices, wanted, name)
    minors = {d.minor: d for d in devices if d.minor is not None}
    missing = [i for i in wanted if i not in minors]
    if missing:
        raise SelectionError(f"{name}: GPU {missing} not on this node (device numbers {sorted(minors)})")
    return [minors[i] for i in wanted]


def resolve_visible(env: Mapping[str, str], devices: Sequence[DeviceId]) -> Selection:
    """Choose the GPUs this process may use from `env` (pure; see the module docstring for the rules)."""
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    ordinal = env.get("GPU_DEVICE_ORDINAL")
    local_name, local = ("CUDA_VISIBLE_DEVICES", cvd) if cvd is not None else ("GPU_DEVICE_ORDINAL", ordinal)
    if local is not None and local.strip().lower() in _NO_DEVICE_VALUES:
        return Selection((), local_name, local)
    if local is not None and any(_is_uuid(item) for item in _split(local)):
        return Selection(tuple(_by_uuid(devices, _split(local), local_name)), local_name, local)

    slurm_name = next((n for n in ("SLURM_STEP_GPUS", "SLURM_JOB_GPUS") if env.get(n, "").strip()), None)
    if slurm_name is not None:
        allocated = _expand_slurm_list(slurm_name, env[slurm_name])
        if local is None:
            return Selection(
                tuple(_by_device_number(devices, allocated, slurm_name)), slurm_name, env[slurm_name]
            )
        positions = _parse_indices(local_name, local)
        source = f"{slurm_name}+{local_name}"
        value = f"{env[slurm_name]} / {local}"
        if positions == allocated:
            numbers = allocated
        elif all(0 <= p < len(allocated) for p in positions):
            numbers = [allocated[p] for p in positions]
        else:
            numbers = positions
        return Selection(tuple(_by_device_number(devices, numbers, source)), source, value)

    if local is not None:
        return Selection(
            tuple(_by_index(devices, _parse_indices(local_name, local), local_name)), local_name, local
        )
    return Selection(tuple(devices), "all", None)


def load_nvml() -> tuple[ModuleType | None, str | None]:
    """Import and initialise NVML; return (module, None) or (None, "nvml_unavailable: why")."""
    try:
        import pynvml  # nvidia-ml-py
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken install: never raise
        return None, f"nvml_unavailable: cannot import pynvml ({exc})"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None, f"nvml_unavailable: nvmlInit failed ({exc})"
    return pynvml, None


def nvml_text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_optional(call: Any, *args: Any) -> Any:
    """`call(*args)`, or None where NVML cannot answer (an optional field of a fingerprint)."""
    try:
        return call(*args)
    except Exception:  # noqa: BLE001 - NVMLError_NotSupported and friends: the field stays empty
        return None


def enumerate_devices(nvml: ModuleType) -> list[tuple[DeviceId, Any]]:
    """Every GPU NVML shows, as (identity, handle), in NVML index order."""
    out = []
    for index in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        minor = nvml_optional(nvml.nvmlDeviceGetMinorNumber, handle)
        out.append((DeviceId(index, minor, nvml_text(nvml.nvmlDeviceGetUUID(handle))), handle))
    return out


def _cuda_version(raw: Any) -> str | None:
    if not isinstance(raw, int) or raw <= 0:
        return None
    return f"{raw // 1000}.{(raw % 1000) // 10}"


def _describe(
    nvml: ModuleType, ident: DeviceId, handle: Any, driver: str | None, cuda: str | None
) -> dict[str, Any]:
    memory = nvml_optional(nvml.nvmlDeviceGetMemoryInfo, handle)
    limit_mw = nvml_optional(nvml.nvmlDeviceGetEnforcedPowerLimit, handle)
    return {
        "index": ident.index,
        "uuid": ident.uuid,
        "name": nvml_text(nvml_optional(nvml.nvmlDeviceGetName, handle) or ""),
        "minor_number": ident.minor,
        "driver_version": driver,
        "cuda_driver_version": cuda,
        "memory_total_bytes": int(memory.total) if memory is not None else None,
        "power_limit_w": round(limit_mw / 1000.0, 3) if limit_mw is not None else None,
    }


def visible_gpus(env: Mapping[str, str] | None = None) -> tuple[list[GpuRef], str | None]:
    """The GPUs this process may use, as NVML refs; ([], "nvml_unavailable: ...") without NVML.

    Raises `SelectionError` when the environment names a GPU NVML does not show.
    """
    nvml, reason = load_nvml()
    if nvml is None:
        return [], reason
    try:
        devices = [ident for ident, _ in enumerate_devices(nvml)]
        chosen = resolve_visible(os.environ if env is None else env, devices)
        return [GpuRef(d.index, d.uuid) for d in chosen.devices], None
    finally:
        nvml_optional(nvml.nvmlShutdown)


def gpu_inventory(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Fingerprint entry for the GPUs this process may use; never raises.

    `{"gpus": [{index, uuid, name, minor_number, driver_version, cuda_driver_version,
    memory_total_bytes, power_limit_w}, ...], "selection": {"source", "value"}}`, or
    `{"gpus": [], "reason": "nvml_unavailable: ..."}` (also `gpu_selection_invalid: ...`).
    """
    nvml, reason = load_nvml()
    if nvml is None:
        return {"gpus": [], "reason": reason}
    try:
        driver = nvml_optional(nvml.nvmlSystemGetDriverVersion)
        cuda_fn = (
            getattr(nvml, "nvmlSystemGetCudaDriverVersion_v2", None) or nvml.nvmlSystemGetCudaDriverVersion
        )
        cuda = _cuda_version(nvml_optional(cuda_fn))
        pairs = enumerate_devices(nvml)
        handles = {ident.uuid: handle for ident, handle in pairs}
        try:
            chosen = resolve_visible(os.environ if env is None else env, [ident for ident, _ in pairs])
        except SelectionError as exc:
            return {"gpus": [], "reason": f"gpu_selection_invalid: {exc}"}
        gpus = [
            _describe(nvml, ident, handles[ident.uuid], nvml_text(driver) if driver else None, cuda)
            for ident in chosen.devices
        ]
        return {"gpus": gpus, "selection": {"source": chosen.source, "value": chosen.value}}
    except Exception as exc:  # noqa: BLE001 - an NVML call failing mid-way: report, never crash a fingerprint
        return {"gpus": [], "reason": f"nvml_unavailable: {type(exc).__name__}: {exc}"}
    finally:
        nvml_optional(nvml.nvmlShutdown)
