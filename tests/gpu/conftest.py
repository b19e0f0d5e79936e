"""GPU tests: real NVML on a real NVIDIA GPU. Skipped where NVML or a GPU is absent."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items:
        return
    from harness.power import PowerSampler

    ok, reason = PowerSampler.available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs an NVIDIA GPU with NVML ({reason})")
    for item in gpu_items:
        item.add_marker(skip)
