"""Which GPUs a process may use, resolved from CUDA_VISIBLE_DEVICES and Slurm's variables (pure)."""

from __future__ import annotations

import re

import pytest

from harness.power.gpu_info import DeviceId, SelectionError, resolve_visible

NODE = [DeviceId(i, i, f"GPU-{i}{i}{i}{i}aaaa-0000") for i in range(8)]


def picked(env: dict[str, str], devices: list[DeviceId] = NODE) -> list[int]:
    return [d.index for d in resolve_visible(env, devices).devices]


def test_nothing_set_means_every_gpu() -> None:
    sel = resolve_visible({}, NODE)
    assert [d.index for d in sel.devices] == list(range(8)) and sel.source == "all"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"CUDA_VISIBLE_DEVICES": "2,3"}, [2, 3]),
        ({"CUDA_VISIBLE_DEVICES": "5, 4"}, [5, 4]),  # order kept, spaces tolerated
        ({"CUDA_VISIBLE_DEVICES": "GPU-3333aaaa-0000,GPU-1111aaaa-0000"}, [3, 1]),
        ({"CUDA_VISIBLE_DEVICES": "GPU-6666"}, [6]),  # unique prefix, as CUDA accepts
        ({"CUDA_VISIBLE_DEVICES": "gpu-7777aaaa-0000"}, [7]),
        ({"CUDA_VISIBLE_DEVICES": ""}, []),
        ({"CUDA_VISIBLE_DEVICES": "-1"}, []),
        ({"CUDA_VISIBLE_DEVICES": "NoDevFiles"}, []),
        ({"GPU_DEVICE_ORDINAL": "3"}, [3]),
        # Slurm lists are node-global device numbers and need not start at 0.
        ({"SLURM_STEP_GPUS": "4-7"}, [4, 5, 6, 7]),
        ({"SLURM_JOB_GPUS": "4,5,6,7"}, [4, 5, 6, 7]),
        ({"SLURM_STEP_GPUS": "6,7", "SLURM_JOB_GPUS": "4,5,6,7"}, [6, 7]),
        # Under device confinement Slurm renumbers CUDA_VISIBLE_DEVICES from 0.
        ({"SLURM_JOB_GPUS": "4,5,6,7", "CUDA_VISIBLE_DEVICES": "0,1,2,3"}, [4, 5, 6, 7]),
        ({"SLURM_STEP_GPUS": "4,5,6,7", "CUDA_VISIBLE_DEVICES": "1,3"}, [5, 7]),
        ({"SLURM_JOB_GPUS": "4,5", "GPU_DEVICE_ORDINAL": "0,1"}, [4, 5]),
        # Without confinement CUDA_VISIBLE_DEVICES repeats the global numbers.
        ({"SLURM_JOB_GPUS": "4,5,6,7", "CUDA_VISIBLE_DEVICES": "4,5,6,7"}, [4, 5, 6, 7]),
        ({"SLURM_JOB_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "6"}, [6]),
        # UUIDs in CUDA_VISIBLE_DEVICES are unambiguous and win over Slurm's list.
        ({"SLURM_JOB_GPUS": "4,5", "CUDA_VISIBLE_DEVICES": "GPU-0000"}, [0]),
        ({"SLURM_JOB_GPUS": "", "CUDA_VISIBLE_DEVICES": "1"}, [1]),
    ],
)
def test_selection(env: dict[str, str], expected: list[int]) -> None:
    assert picked(env) == expected


def test_slurm_numbers_match_device_minor_numbers_not_nvml_indices() -> None:
    # Inside a container NVML may show only the allocated GPUs, numbered from 0; their device
    # minor numbers still carry the node-global numbers Slurm uses.
    container = [DeviceId(0, 2, "GPU-x2"), DeviceId(1, 3, "GPU-x3")]
    assert picked({"SLURM_JOB_GPUS": "2,3"}, container) == [0, 1]
    assert picked({"SLURM_JOB_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "1"}, container) == [1]
    # Without minor numbers the Slurm numbers are taken as NVML indices.
    no_minor = [DeviceId(i, None, f"GPU-n{i}") for i in range(4)]
    assert picked({"SLURM_JOB_GPUS": "2,3"}, no_minor) == [2, 3]


def test_selection_records_its_source() -> None:
    sel = resolve_visible({"SLURM_STEP_GPUS": "4,5", "CUDA_VISIBLE_DEVICES": "0"}, NODE)
    assert (sel.source, sel.value) == ("SLURM_STEP_GPUS+CUDA_VISIBLE_DEVICES", "4,5 / 0")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CUDA_VISIBLE_DEVICES": "9"}, "index [9]"),
        ({"CUDA_VISIBLE_DEVICES": "a,b"}, "expected comma-separated GPU indices or UUIDs"),
        ({"CUDA_VISIBLE_DEVICES": "GPU-ffff"}, "matches no GPU"),
        ({"CUDA_VISIBLE_DEVICES": "GPU-"}, "is ambiguous"),
        ({"SLURM_JOB_GPUS": "x"}, "expected GPU numbers"),
        ({"SLURM_JOB_GPUS": "8-9"}, "not on this node"),
    ],
)
def test_impossible_selections_are_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(SelectionError, match=re.escape(message)):
        resolve_visible(env, NODE)
