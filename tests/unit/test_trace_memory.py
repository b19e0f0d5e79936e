"""Trace and JSON readers take memory in proportion to the file, never a buffer of their size bound: the shipped
corpus validates under a 4 GB address-space limit, and a file whose stated size is wrong (`/proc`) is read whole."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.inputs.json_input import read_file_bytes

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 4_000_000_000


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def test_the_shipped_corpus_validates_under_a_4_gb_address_space_limit():
    done = subprocess.run([sys.executable, "-m", "harness", "traces", "validate", "recipes/traces/quickstart"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=_limit_address_space)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok: 24 traces, "), done.stdout


def test_a_file_is_read_whole_whatever_size_it_states_and_the_bound_still_holds(tmp_path: Path):
    status = read_file_bytes("/proc/self/status", "status")   # stated size 0
    assert b"\nPid:" in status and status.endswith(b"\n")
    big = tmp_path / "big.json"
    big.write_bytes(b"x" * 3_000_000)
    assert len(read_file_bytes(big, "trace", 4 * 1024**3)) == 3_000_000
    with pytest.raises(UserError, match="larger than 2 MiB"):
        read_file_bytes(big, "trace", 2 * 1024 * 1024)
