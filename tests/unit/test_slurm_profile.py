"""Cluster profiles: the shipped ones load, mistakes are one line naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.errors import UserError
from slurm.profile import load_profile, time_limit_seconds

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name,gpus,arch", [("gb300", 4, "aarch64"), ("h200", 8, "x86_64"),
                                            ("local-ci", 8, "x86_64")])
def test_shipped_profiles_load(name: str, gpus: int, arch: str) -> None:
    p = load_profile(ROOT / "clusters" / f"{name}.yaml")
    assert (p.name, p.gpus_per_node, p.cpu_arch, p.launcher) == (name, gpus, arch, "pyxis")


def test_local_ci_shares_the_node() -> None:
    p = load_profile(ROOT / "clusters" / "local-ci.yaml")
    assert (p.exclusive, p.task_gpus, p.max_parallel) == (False, 4, 2)


def _write(tmp_path: Path, **changes: object) -> Path:
    data = yaml.safe_load((ROOT / "clusters" / "h200.yaml").read_text())
    data.update(changes)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_unknown_key_is_rejected(tmp_path: Path) -> None:
    path = _write(tmp_path, acount="x")
    with pytest.raises(UserError, match=r"c\.yaml:2: acount: unknown key 'acount' \(did you mean 'account'\?\)$"):
        load_profile(path)


def test_a_misspelt_key_is_named_before_the_key_it_leaves_missing(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "clusters" / "h200.yaml").read_text())
    data["containr"] = data.pop("container")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match=r"containr: unknown key 'containr' \(did you mean 'container'\?\)"):
        load_profile(path)


@pytest.mark.parametrize("changes,where", [
    ({"time_limit": "2h"}, "time_limit"),
    ({"time_limit": "99:99:99"}, r"c\.yaml:\d+: time_limit: '99:99:99': .*below 60"),
    ({"time_limit": "1-25:00"}, "hours below 24"),
    ({"time_limit": "0"}, "longer than zero"),
    ({"gpus_per_task": 16}, "gpus_per_task 16 > gpus_per_node 8"),
    ({"sbatch_directives": ["constraint=x"]}, "sbatch_directives"),
    ({"default_mounts": ["/a"]}, "default_mounts"),
    ({"container": {"runtime": "podman"}}, "container.runtime"),
    ({"cpu_arch": "arm64"}, "cpu_arch"),
])
def test_bad_values(tmp_path: Path, changes: dict[str, object], where: str) -> None:
    with pytest.raises(UserError, match=where):
        load_profile(_write(tmp_path, **changes))


def test_missing_file() -> None:
    with pytest.raises(UserError, match="no such cluster profile"):
        load_profile("/nonexistent/cluster.yaml")


@pytest.mark.parametrize("text,seconds", [("30", 1800), ("1:30", 90), ("02:00:00", 7200), ("1-00", 86400),
                                          ("1-02:03:04", 93784)])
def test_time_limit_seconds(text: str, seconds: int) -> None:
    assert time_limit_seconds(text) == seconds
