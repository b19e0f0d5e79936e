"""A real small filesystem for disk-full tests: a tmpfs mount, which needs root (CI runs as root)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def mounted_tmpfs(mnt: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of `size` (e.g. `32m`) at `mnt` for the block; skip the test where that cannot be done."""
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a real full disk needs a tmpfs mount, which needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
