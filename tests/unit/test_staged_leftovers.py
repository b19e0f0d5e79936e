"""A staged build's hidden directory left by a killed process is removed by the next build into the same parent;
one of a live process, of another host, or of a name the harness did not make, is left alone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.artifacts import staged_dir, stale_staging, write_text


def leftover(parent: Path, name: str) -> Path:
    path = parent / name
    path.mkdir()
    (path / "row.json").write_text("{}")
    return path


def test_only_this_hosts_staging_of_a_dead_pid_is_stale(tmp_path: Path) -> None:
    dead = leftover(tmp_path, ".OUT.partial-41@node-a-k2x_9q")
    leftover(tmp_path, ".OUT.partial-42@node-a-abc")     # alive
    leftover(tmp_path, ".OUT.partial-41@node-b-abc")     # another host
    leftover(tmp_path, ".OUT.partial-x1y2z3")            # no owner in its name
    leftover(tmp_path, ".notes.partial")
    assert stale_staging(tmp_path, "node-a", alive=lambda pid: pid == 42) == [dead]


def test_the_next_export_removes_a_killed_exports_staging_and_says_so(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from harness.artifacts import _host

    child = subprocess.Popen(["true"])
    child.wait()   # a finished and reaped child: its pid is no longer alive
    killed = leftover(tmp_path, f".OUT.partial-{child.pid}@{_host()}-abc123")
    live = leftover(tmp_path, f".OUT.partial-{os.getpid()}@{_host()}-def456")
    with staged_dir(tmp_path / "OUT", "export") as tmp:
        write_text(tmp / "a.txt", "a\n")
    assert not killed.exists() and live.exists()
    assert (tmp_path / "OUT" / "a.txt").read_text() == "a\n"
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"export: removed 1 partial copy left by a stopped run in {tmp_path}: {killed.name}"]
