"""srt-slurm's own `diff_fingerprints` (vendored unmodified, tests/fixtures/srt-slurm) on fingerprints the harness
captured for real: the capture script run by a server interpreter through the local launcher, written as
`fingerprint_agg_w0.json` and read back.

- two captures of one environment: srt-slurm matches every field and package, `harness fingerprint diff`
  says `identical`;
- one venv, `sglang` 0.5.2 then 0.5.3 (real wheels from PyPI, `--no-deps`) behind two image references:
  srt-slurm reports exactly the sglang change, the harness's diff the framework, package and image;
- two Pythons (where this machine has a second minor version, or `HARNESS_OTHER_PYTHON` names one): srt-slurm
  reports `python_version`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.point.fingerprint import build_fingerprint, capture_in_server_env
from harness.point.fingerprint_diff import fingerprint_diff
from launchers import LaunchContext, get_launcher

pytestmark = pytest.mark.slow
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "srt-slurm" / "upstream" / "fingerprint.py"


def srt_slurm() -> Any:
    spec = importlib.util.spec_from_file_location("srt_slurm_fingerprint", FIXTURE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # its dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def capture(tmp: Path, name: str, python: str, image: str) -> dict[str, Any]:
    """A real capture by `python` (standing for an SGLang server's interpreter), as the point runner writes it."""
    pdir = tmp / name
    pdir.mkdir()
    argv = [python, "-m", "sglang.launch_server", "--model-path", "m", "--port", "30000"]
    ctx = LaunchContext(point_dir=pdir, image=image, engine="sglang", container_name=f"harness-{name}")
    launcher = get_launcher("local")
    captured, record = capture_in_server_env(launcher, argv, {"SGLANG_ENABLE_X": "1"}, ctx)
    assert captured is not None, record
    fp = build_fingerprint(captured=captured, capture=record, server={"version": "n/a"}, image=image,
                           digest={"digest": None, "digest_reason": "local"}, engine="sglang",
                           server_argv=launcher.render(argv, {}, ctx), server_env={"SGLANG_ENABLE_X": "1"},
                           launcher="local")
    path = pdir / "fingerprint_agg_w0.json"
    path.write_text(json.dumps(fp, indent=2) + "\n")
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def test_the_vendored_file_is_srt_slurms_unmodified():
    readme = (FIXTURE.parent.parent / "README.md").read_text()
    assert hashlib.sha256(FIXTURE.read_bytes()).hexdigest() in readme


def test_two_captures_of_one_environment_match(tmp_path):
    srt = srt_slurm()
    a = capture(tmp_path, "a", sys.executable, "img:1")
    b = capture(tmp_path, "b", sys.executable, "img:1")
    d = srt.diff_fingerprints(a, b)
    assert d.field_changes == {}
    assert set(d.matching_fields) == {"arch", "os", "python_version", "cuda_version", "nccl_version", "gpu.driver"}
    assert d.packages_matched > 20 and d.package_diffs == []       # it parsed our labelled pip_packages
    assert fingerprint_diff(a, b) == []


def _venv(path: Path, python: str, *args: str) -> Path:
    subprocess.run([python, "-m", "venv", *args, str(path)], check=True, capture_output=True, timeout=300)
    return path / "bin" / "python"


def _pip_install(py: Path, requirement: str) -> None:
    proc = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "-q",
                           requirement], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        message = f"pip install {requirement} failed (PyPI unreachable?): {proc.stderr.strip()[-300:]}"
        if os.environ.get("HARNESS_REQUIRE_PYPI") == "1":
            pytest.fail(message)
        pytest.skip(message)


def test_srt_slurm_reports_an_sglang_upgrade_between_two_images(tmp_path):
    srt = srt_slurm()
    py = _venv(tmp_path / "venv", sys.executable)
    _pip_install(py, "sglang==0.5.2")
    a = capture(tmp_path, "a", str(py), "lmsysorg/sglang:v0.5.2-cu126")
    _pip_install(py, "sglang==0.5.3")
    b = capture(tmp_path, "b", str(py), "lmsysorg/sglang:v0.5.3-cu126")
    assert a["frameworks"]["sglang"] == "0.5.2" and b["frameworks"]["sglang"] == "0.5.3"

    d = srt.diff_fingerprints(a, b)
    assert [(p.package, p.status.value, p.version_a, p.version_b) for p in d.package_diffs] == [
        ("sglang", "mismatch", "0.5.2", "0.5.3")]
    assert d.packages_changed == 1 and d.packages_added == d.packages_removed == 0
    assert "sglang: 0.5.2  ->  0.5.3" in srt.format_diff(d)

    ours = fingerprint_diff(a, b)
    assert 'frameworks.sglang: "0.5.2" -> "0.5.3"' in ours
    assert f'pip_packages.{py}.sglang: "0.5.2" -> "0.5.3"' in ours
    assert 'image.reference: "lmsysorg/sglang:v0.5.2-cu126" -> "lmsysorg/sglang:v0.5.3-cu126"' in ours


def _other_python() -> str | None:
    """A Python of another minor version: `HARNESS_OTHER_PYTHON`, else `python3.N` on PATH, else pyenv's."""
    candidates = [os.environ.get("HARNESS_OTHER_PYTHON", "")]
    candidates += [shutil.which(f"python3.{minor}") or "" for minor in (13, 12, 11, 10, 9)]
    candidates += sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.*/bin/python3"))
    for exe in filter(None, candidates):
        probe = subprocess.run([exe, "-c", "import sys, venv; print(sys.version_info[1])"], capture_output=True,
                               text=True, timeout=60)
        if probe.returncode == 0 and probe.stdout.strip() not in ("", str(sys.version_info.minor)):
            minor = int(probe.stdout.strip())
            if minor >= 8:   # the capture script's floor
                return exe
    return None


def test_srt_slurm_reports_a_different_python(tmp_path):
    other = _other_python()
    if other is None:
        pytest.skip("no Python of another minor version on PATH (the SGLang-upgrade test covers packages)")
    srt = srt_slurm()
    py = _venv(tmp_path / "venv", other, "--without-pip")
    a = capture(tmp_path, "a", sys.executable, "img:py311")
    b = capture(tmp_path, "b", str(py), "img:other")
    d = srt.diff_fingerprints(a, b)
    assert d.field_changes["python_version"] == (a["python_version"], b["python_version"])
    assert a["python_version"] != b["python_version"]
    assert d.packages_removed > 0        # the harness's venv packages are not in the bare one
    assert f'python_version: "{a["python_version"]}" -> "{b["python_version"]}"' in fingerprint_diff(a, b)
