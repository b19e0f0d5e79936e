"""Power sampling and integration on a real GPU: idle vs bf16 matmul load, counter vs trapezoid.

Set POWER_GPU_OUT to a directory to keep the CSV, the validation files and the figures.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from harness.artifacts import write_json
from harness.power import PowerSampler, integrate_power
from harness.power.gpu_info import gpu_inventory, visible_gpus

pytestmark = pytest.mark.gpu


def _out_dir(tmp_path: Path) -> Path:
    out = Path(os.environ.get("POWER_GPU_OUT") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_inventory_describes_the_visible_gpus(tmp_path: Path) -> None:
    inv = gpu_inventory()
    assert inv["gpus"], inv
    for gpu in inv["gpus"]:
        assert gpu["uuid"].startswith("GPU-")
        assert gpu["name"] and gpu["driver_version"] and gpu["cuda_driver_version"]
        assert gpu["memory_total_bytes"] > 10**9
        assert gpu["power_limit_w"] > 50
    refs, reason = visible_gpus()
    assert reason is None
    assert [r.uuid for r in refs] == [g["uuid"] for g in inv["gpus"]]
    first = inv["gpus"][0]
    by_uuid = gpu_inventory({"CUDA_VISIBLE_DEVICES": first["uuid"]})
    by_index = gpu_inventory({"CUDA_VISIBLE_DEVICES": str(first["index"])})
    by_prefix = gpu_inventory({"CUDA_VISIBLE_DEVICES": first["uuid"][:12]})
    none = gpu_inventory({"CUDA_VISIBLE_DEVICES": ""})
    assert [g["uuid"] for g in by_uuid["gpus"]] == [first["uuid"]]
    assert [g["uuid"] for g in by_index["gpus"]] == [first["uuid"]]
    assert [g["uuid"] for g in by_prefix["gpus"]] == [first["uuid"]]
    assert none["gpus"] == []
    bad = gpu_inventory({"CUDA_VISIBLE_DEVICES": "GPU-00000000-dead"})
    assert bad["gpus"] == [] and bad["reason"].startswith("gpu_selection_invalid")
    write_json(
        _out_dir(tmp_path) / "gpu_inventory.json", {"all": inv, "by_uuid": by_uuid, "by_index": by_index}
    )


def _torch_device_for(uuid: str) -> int:
    import torch

    for i in range(torch.cuda.device_count()):
        props_uuid = getattr(torch.cuda.get_device_properties(i), "uuid", None)
        if props_uuid is not None and f"GPU-{props_uuid}" == uuid:
            return i
    return 0


@pytest.mark.slow
def test_power_rises_under_load_and_counter_agrees_with_trapezoid(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    refs, _ = visible_gpus()
    gpu = refs[0]
    device = torch.device("cuda", _torch_device_for(gpu.uuid))
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device=device)
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device=device)
    torch.cuda.synchronize(device)
    out = _out_dir(tmp_path)
    csv_path = out / "power.csv"

    with PowerSampler([gpu], csv_path, rate_hz=10.0) as sampler:
        time.sleep(2.0)  # let the GPU settle to idle
        idle_start = time.time_ns()
        time.sleep(4.0)
        idle_end = time.time_ns()
        load_begun = time.monotonic()
        products = 0
        load_start = load_end = 0
        while time.monotonic() - load_begun < 8.0:
            for _ in range(20):
                torch.matmul(a, b)
            torch.cuda.synchronize(device)
            products += 20
            elapsed = time.monotonic() - load_begun
            if not load_start and elapsed >= 1.5:  # after the power reading has followed the step
                load_start = time.time_ns()
        load_end = time.time_ns()
        time.sleep(2.0)
        whole_end = time.time_ns()
    assert sampler.unavailable_reason is None

    idle = integrate_power(csv_path, idle_start, idle_end, 1)
    load = integrate_power(csv_path, load_start, load_end, 1)
    whole = integrate_power(csv_path, idle_start, whole_end, 1)
    figures = {}
    for name, report in (("idle", idle), ("load", load), ("idle_load_idle", whole)):
        write_json(out / f"power_validation_{name}.json", report.validation_json())
        g = report.gpus[0]
        figures[name] = {
            "valid": report.valid,
            "reasons": report.reason_codes(),
            "window_s": round(report.duration_s, 3),
            "avg_power_w": g.avg_power_w,
            "counter_energy_j": g.counter_energy_j,
            "trapezoid_energy_j": g.trapezoid_energy_j,
            "rel_diff": g.to_json()["counter_vs_trapezoid_rel_diff"],
            "samples_in_window": g.samples_in_window,
            "max_gap_s": g.max_gap_s,
        }
    figures["gpu"] = gpu.uuid
    figures["matmuls_8192_bf16"] = products
    write_json(out / "power_gpu_figures.json", figures)
    print(json.dumps(figures, indent=2))

    for report in (idle, load, whole):
        assert report.valid, report.validation_json()["reasons"]
        g = report.gpus[0]
        assert g.energy_source == "energy_counter"
        assert g.counter_energy_j is not None and g.trapezoid_energy_j is not None
        assert abs(g.counter_energy_j - g.trapezoid_energy_j) <= 0.05 * g.counter_energy_j
    idle_w = idle.gpus[0].avg_power_w or 0.0
    load_w = load.gpus[0].avg_power_w or 0.0
    assert load_w > idle_w + 150.0, (idle_w, load_w)
    assert load_w > 2 * idle_w, (idle_w, load_w)
