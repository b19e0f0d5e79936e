"""CPU architectures from `scontrol -o show node` and `show partition`, and of a venv's compiled packages."""

from __future__ import annotations

from pathlib import Path

from slurm.arch import default_partition, node_arches, normalize, venv_arch

NODES = """\
NodeName=gb-001 Arch=aarch64 CoresPerSocket=72 OS=Linux 6.8.0 #1 SMP PREEMPT_DYNAMIC Partitions=gb300,all  State=IDLE
NodeName=gb-002 Arch=(null) CoresPerSocket=1 Partitions=gb300 State=DOWN
NodeName=h-001 Arch=x86_64 CoresPerSocket=48 OS=Linux 5.15 #1 SMP Partitions=h200,all State=MIXED
"""
PARTITIONS = """\
PartitionName=gb300 AllowGroups=ALL Default=NO Nodes=gb-[001-002]
PartitionName=all AllowGroups=ALL Default=YES Nodes=gb-[001-002],h-001
"""


def test_nodes_of_a_partition_and_their_architecture() -> None:
    assert node_arches(NODES, "gb300") == {"gb-001": "aarch64"}          # an unregistered node says (null)
    assert node_arches(NODES, "all") == {"gb-001": "aarch64", "h-001": "x86_64"}
    assert node_arches(NODES, "gb") == {}                                # whole names only
    assert default_partition(PARTITIONS) == "all"
    assert default_partition("PartitionName=x Default=NO\n") is None


def test_names_are_unames() -> None:
    assert [normalize(m) for m in ("arm64", "amd64", "aarch64", "x86_64\n")] == ["aarch64", "x86_64", "aarch64",
                                                                                  "x86_64"]


def test_a_venvs_architecture_is_its_compiled_packages(tmp_path: Path) -> None:
    core = tmp_path / "venv" / "lib" / "python3.12" / "site-packages" / "pydantic_core"
    core.mkdir(parents=True)
    assert venv_arch(tmp_path / "venv" / "bin" / "python") is None
    (core / "_pydantic_core.cpython-312-aarch64-linux-gnu.so").write_bytes(b"")
    assert venv_arch(tmp_path / "venv" / "bin" / "python") == "aarch64"
    assert venv_arch("/usr/bin/python3") in (None, "x86_64", "aarch64")
