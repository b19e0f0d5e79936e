"""The image cache: one locked import per image, reuse of a valid copy, re-import of a broken one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from slurm.images import cache_path, ensure, import_argv

ROOT = Path(__file__).resolve().parents[2]


def test_cache_names() -> None:
    assert cache_path(Path("/c"), "lmsysorg/sglang:v0.5.23@sha256:ab", "pyxis", "aarch64") == \
        Path("/c/aarch64/lmsysorg_sglang_v0.5.23_sha256_ab.sqsh")
    assert cache_path(Path("/c"), "docker://a/b:1", "apptainer", "x86_64") == Path("/c/x86_64/a_b_1.sif")
    assert import_argv("enroot", "a/b:1", Path("/c/x")) == ["enroot", "import", "--output", "/c/x", "docker://a/b:1"]
    assert import_argv("apptainer", "a/b:1", Path("/c/x")) == ["apptainer", "pull", "/c/x", "docker://a/b:1"]


@pytest.fixture
def fake_enroot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An `enroot` that counts its imports and takes a moment, like a real pull."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "imports.log"
    script = bindir / "enroot"
    script.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nsleep 0.3\necho squashfs > \"$3\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    return log


def test_import_once_then_reuse(tmp_path: Path, fake_enroot: Path) -> None:
    dest = tmp_path / "cache" / "img.sqsh"
    assert ensure("a/b:1", dest, "enroot") is True
    assert ensure("a/b:1", dest, "enroot") is False
    assert dest.read_text() == "squashfs\n"
    assert len(fake_enroot.read_text().splitlines()) == 1


def test_broken_copy_is_replaced(tmp_path: Path, fake_enroot: Path) -> None:
    dest = tmp_path / "img.sqsh"
    dest.write_text("")
    assert ensure("a/b:1", dest, "enroot") is True
    assert dest.read_text() == "squashfs\n"


def test_concurrent_tasks_import_once(tmp_path: Path, fake_enroot: Path) -> None:
    dest = tmp_path / "cache" / "img.sqsh"
    cmd = [sys.executable, "-m", "slurm.images", "ensure", "--runtime", "enroot", "a/b:1", str(dest)]
    procs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=30)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted("imported" in o for o in outs) == [False, False, True]
    assert len(fake_enroot.read_text().splitlines()) == 1


def test_the_import_refuses_a_node_of_another_architecture(tmp_path: Path, fake_enroot: Path) -> None:
    from slurm.arch import local_arch

    other = "aarch64" if local_arch() == "x86_64" else "x86_64"
    dest = tmp_path / "cache" / other / "img.sqsh"
    cmd = [sys.executable, "-m", "slurm.images", "ensure", "--runtime", "enroot", "--arch", other, "a/b:1", str(dest)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 1 and f"this node is {local_arch()}, the cache is for {other}" in proc.stderr
    assert not dest.exists() and not fake_enroot.exists()
    here = tmp_path / "cache" / local_arch() / "img.sqsh"
    ok = subprocess.run([*cmd[:7], local_arch(), "a/b:1", str(here)], cwd=ROOT, capture_output=True, text=True,
                        timeout=30, check=False)
    assert ok.returncode == 0 and here.exists()
