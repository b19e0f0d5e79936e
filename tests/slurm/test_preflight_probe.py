"""`harness preflight --probe` against the local Slurm: its pyxis-compatible plugin accepts `--container-image`
but runs no container, which is exactly what a cluster whose compute nodes lack pyxis does; the probe says so
from the root filesystem the step saw. A mount source missing on the node and one outside the allowed roots fail
too, the container step then in the runtime's own words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .conftest import LOCAL_CI, QUICKSTART, harness


def _preflight(env: dict[str, str], tmp_path: Path, mounts: list[str], roots: list[str]) -> dict[tuple[str, str], str]:
    data: dict[str, Any] = yaml.safe_load(LOCAL_CI.read_text())
    data["default_mounts"] = mounts
    data["container"]["mount_roots"] = roots
    profile = tmp_path / "probe-ci.yaml"
    profile.write_text(yaml.safe_dump(data))
    proc = harness(env, "preflight", str(QUICKSTART), "--cluster", str(profile), "--probe", "--json", timeout=300)
    assert proc.returncode == 2, proc.stderr
    return {(f["code"], f["level"]): f["message"] for f in json.loads(proc.stdout)["findings"]}


def test_probe_catches_an_ignored_container_image(slurm: None, harness_env: dict[str, str], tmp_path: Path) -> None:
    findings = _preflight(harness_env, tmp_path, [f"{tmp_path}:/data"], [str(tmp_path)])
    message = findings[("container_image", "fail")]
    assert message.startswith("--container-image was ignored: the step saw the node's own root filesystem")
    pretty = next(ln for ln in Path("/etc/os-release").read_text().splitlines() if ln.startswith("PRETTY_NAME="))
    assert f"(/etc/os-release: {pretty.split('=', 1)[1].strip(chr(34))})" in message
    assert ("mount_root", "pass") in findings and ("mount_source", "fail") not in findings


def test_probe_names_mount_sources_missing_on_the_node_and_outside_the_roots(
        slurm: None, harness_env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "not-on-the-node"
    findings = _preflight(harness_env, tmp_path, [f"{tmp_path}:/data", f"{missing}:/gone", "/var/tmp:/outside"],
                          [str(tmp_path)])
    assert findings[("mount_source", "fail")].startswith(f"{missing} does not exist")
    assert findings[("mount_root", "fail")].startswith("/var/tmp lies outside container.mount_roots")
    # the container step fails as pyxis would, in the plugin's own words
    assert f"mount source does not exist: {missing}" in findings[("container_image", "fail")]
