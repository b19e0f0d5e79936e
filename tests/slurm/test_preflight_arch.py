"""Preflight asks the real local Slurm for the architecture of the partition's nodes (`scontrol show node`)."""

from __future__ import annotations

from pathlib import Path

from harness.preflight.run import cluster_preflight
from slurm.arch import local_arch
from tests.slurm.conftest import LOCAL_CI, QUICKSTART


def _arch(report: object) -> tuple[str, str]:
    found = [f for f in report.findings if f.code == "cpu_arch"]  # type: ignore[attr-defined]
    assert len(found) == 1
    return found[0].level, found[0].line()


def test_the_nodes_architecture_is_checked_against_cpu_arch(slurm: None, tmp_path: Path) -> None:
    here = local_arch()   # the local Slurm's one node is this machine
    level, line = _arch(cluster_preflight(QUICKSTART, LOCAL_CI))
    assert level == "pass" and f"are {here}" in line
    other = "aarch64" if here == "x86_64" else "x86_64"
    wrong = tmp_path / "local-ci.yaml"
    wrong.write_text(LOCAL_CI.read_text().replace(f"cpu_arch: {here}", f"cpu_arch: {other}"))
    report = cluster_preflight(QUICKSTART, wrong)
    level, line = _arch(report)
    assert not report.ok and level == "fail"
    assert f"{wrong}:cpu_arch: {other}, but the nodes of partition 'debug' are {here}" in line
