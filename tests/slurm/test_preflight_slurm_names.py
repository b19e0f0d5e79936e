"""Preflight asks the real local Slurm for its partitions (`sinfo`) and the user's accounts and QOS (`sacctmgr`):
a misspelled partition fails, naming the partitions that exist, and `harness submit` submits nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.preflight.run import cluster_preflight
from tests.slurm.conftest import LOCAL_CI, QUICKSTART, harness


def _profile(tmp_path: Path, **fields: str) -> Path:
    path = tmp_path / "local-ci.yaml"
    path.write_text(LOCAL_CI.read_text() + "".join(f"{k}: {v}\n" for k, v in fields.items()))
    return path


def _partitions() -> list[str]:
    out = subprocess.run(["sinfo", "-h", "-a", "-o", "%P"], capture_output=True, text=True, check=True).stdout
    return sorted(line.strip().rstrip("*") for line in out.splitlines() if line.strip())


def test_a_misspelled_partition_fails_naming_the_partitions(slurm: None, harness_env: dict[str, str],
                                                            tmp_path: Path) -> None:
    partitions = _partitions()
    wrong = _profile(tmp_path, partition=partitions[0] + "x")
    report = cluster_preflight(QUICKSTART, wrong)
    found = [f for f in report.findings if f.code == "slurm_partition"]
    assert not report.ok and [f.level for f in found] == ["fail"]
    assert f"its partitions: {', '.join(partitions)}" in found[0].message
    proc = harness(harness_env, "submit", str(QUICKSTART), "--cluster", str(wrong), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "slurm_partition" in proc.stderr and not proc.stdout.strip()


def test_the_partition_and_the_users_account_and_qos_pass(slurm: None, tmp_path: Path) -> None:
    import getpass

    assoc = subprocess.run(["sacctmgr", "-n", "-P", "show", "associations", "format=account,qos", "where",
                            f"user={getpass.getuser()}"], capture_output=True, text=True, check=False)
    rows = [ln.split("|") for ln in assoc.stdout.splitlines() if ln.strip()]
    fields = {"partition": _partitions()[0]}
    if assoc.returncode == 0 and rows and rows[0][1]:
        fields |= {"account": rows[0][0], "qos": rows[0][1].split(",")[0]}
    report = cluster_preflight(QUICKSTART, _profile(tmp_path, **fields))
    levels = {f.code: f.level for f in report.findings if f.code.startswith("slurm_")}
    assert levels["slurm_partition"] == "pass"
    if "account" in fields:   # the local Slurm runs with accounting: sacctmgr answers
        assert levels["slurm_account"] == levels["slurm_qos"] == "pass"
