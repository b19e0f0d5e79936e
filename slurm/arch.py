"""CPU architectures: of this machine, of a partition's compute nodes as Slurm reports them
(`scontrol show node`, the `Arch=` field), and of a venv's compiled packages.

Names are `uname -m`'s (`aarch64`, `x86_64`); `arm64` and `amd64` are read as their Linux names.
"""

from __future__ import annotations

import platform
import re
from pathlib import Path

from slurm.query import SlurmError, run_scontrol

ALIASES = {"arm64": "aarch64", "amd64": "x86_64"}
EXTENSION_ARCH = re.compile(r"\.cpython-\d+[a-z]*-(\w+?)-linux-gnu\.so$")


def normalize(machine: str) -> str:
    """`uname -m` or a platform tag as the profile's `cpu_arch` spells it (`arm64` -> `aarch64`)."""
    machine = machine.strip()
    return ALIASES.get(machine.lower(), machine)


def local_arch() -> str:
    """The architecture of the machine running this process."""
    return normalize(platform.machine())


def _field(line: str, key: str) -> str | None:
    match = re.search(rf"(?:^|\s){key}=(\S*)", line)
    return match.group(1) if match else None


def default_partition(scontrol_partitions: str) -> str | None:
    """The partition marked `Default=YES` in `scontrol -o show partition` output."""
    for line in scontrol_partitions.splitlines():
        if _field(line, "Default") == "YES":
            return _field(line, "PartitionName")
    return None


def node_arches(scontrol_nodes: str, partition: str) -> dict[str, str]:
    """node name -> architecture of the nodes of `partition`, from `scontrol -o show node` output (one node a
    line). A node that has not registered reports `Arch=(null)` and is left out."""
    out: dict[str, str] = {}
    for line in scontrol_nodes.splitlines():
        name, arch = _field(line, "NodeName"), _field(line, "Arch")
        partitions = (_field(line, "Partitions") or "").split(",")
        if name and arch and arch != "(null)" and partition in partitions:
            out[name] = normalize(arch)
    return out


def partition_arches(partition: str | None) -> tuple[str, dict[str, str]]:
    """The partition (None: the cluster's default) and the architecture of each of its nodes, asked of Slurm.
    Raises `slurm.query.SlurmError` when Slurm cannot be asked."""

    if partition is None:
        partition = default_partition(run_scontrol(["-o", "show", "partition"]))
        if partition is None:
            raise SlurmError("scontrol: no default partition (set partition in the profile)")
    return partition, node_arches(run_scontrol(["-o", "show", "node"]), partition)


def venv_arch(python: str | Path) -> str | None:
    """The architecture a venv's compiled packages were built for (from the platform tag of the pydantic-core
    extension the harness depends on, `..cpython-312-aarch64-linux-gnu.so`), or None when `python` is not the
    interpreter of such a venv."""
    root = Path(python).parent.parent
    for ext in sorted(root.glob("lib/python3*/site-packages/pydantic_core/_pydantic_core.*.so")):
        match = EXTENSION_ARCH.search(ext.name)
        if match:
            return normalize(match.group(1))
    return None
