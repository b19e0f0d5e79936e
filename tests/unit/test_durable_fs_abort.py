"""Results written by the harness survive a filesystem abort: on a loop-mounted ext4 (`errors=remount-ro`) the
kernel's `trigger_fs_error` aborts the filesystem right after the writes, as an I/O error does; remounted, every
result is whole, while a file renamed into place without fsync (the control) is gone. Needs root and a loop device;
skipped elsewhere."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import artifacts

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not Path("/dev/loop-control").exists()
                                or shutil.which("mkfs.ext4") is None, reason="needs root, loop devices and mkfs.ext4")


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


@pytest.fixture
def ext4(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A fresh ext4 mounted with `errors=remount-ro`: (its mount point, its image)."""
    image, mnt = tmp_path / "fs.img", tmp_path / "mnt"
    mnt.mkdir()
    with open(image, "wb") as fh:
        fh.truncate(32 * 1024 * 1024)
    if _run("mkfs.ext4", "-q", "-F", str(image)).returncode != 0:
        pytest.skip("mkfs.ext4 failed")
    mounted = _run("mount", "-o", "loop,errors=remount-ro", str(image), str(mnt))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a loop device here: {mounted.stderr.strip()}")
    try:
        yield mnt, image
    finally:
        _run("umount", str(mnt))


def _abort(mnt: Path) -> None:
    device = _run("findmnt", "-no", "SOURCE", str(mnt)).stdout.strip()
    trigger = Path("/sys/fs/ext4") / Path(device).name / "trigger_fs_error"
    if not trigger.exists():
        pytest.skip(f"no {trigger}")
    trigger.write_text("durability test\n")


def test_results_written_by_the_harness_survive_a_filesystem_abort(ext4: tuple[Path, Path]) -> None:
    mnt, image = ext4
    pdir = mnt / "runs" / "conc1"
    artifacts.write_json(pdir / "point_result.json", {"state": "completed", "validity": {"valid": True}})
    artifacts.write_foreign_json(pdir / "bmk_agentic_x_conc1.json", {"conc": 1, "tput_per_gpu": 1845.2})
    (pdir / "aiperf").mkdir()
    with open(pdir / "aiperf" / "profile_export.jsonl", "w") as fh:   # as AIPerf writes it, unsynced
        fh.write('{"request": 1}\n' * 500)
    artifacts.sync_tree(pdir)
    with artifacts.staged_dir(mnt / "export", "export") as tmp:
        with open(tmp / "bmk_agentic_x_conc1.json", "w") as fh:      # as the export copies it
            fh.write('{"conc": 1}')
    control = pdir / "unsynced.json"
    with open(pdir / ".unsynced.tmp", "w") as fh:
        fh.write('{"conc": 2}' * 500)
    os.replace(pdir / ".unsynced.tmp", control)
    _abort(mnt)
    assert _run("umount", str(mnt)).returncode == 0
    assert _run("mount", "-o", "loop", str(image), str(mnt)).returncode == 0   # replays the journal
    if control.exists() and control.stat().st_size:
        pytest.skip("the abort lost nothing unsynced here (written back first): it cannot tell synced from not")
    assert artifacts.read_json(pdir / "point_result.json")["state"] == "completed"
    assert artifacts.read_json(pdir / "bmk_agentic_x_conc1.json")["tput_per_gpu"] == 1845.2
    assert (pdir / "aiperf" / "profile_export.jsonl").read_text() == '{"request": 1}\n' * 500
    assert (mnt / "export" / "bmk_agentic_x_conc1.json").read_text() == '{"conc": 1}'
