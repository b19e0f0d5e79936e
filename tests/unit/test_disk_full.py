"""A full disk: recognising ENOSPC wherever it comes from, the status written through the reserve (also on a
really full filesystem, where root may mount one), and the point runner's one place that maps it."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from harness.point.state.disk_full import FreeSpaceCheck, disk_full_error, disk_full_reason, mount_point
from harness.point.state.status import PointStatus
from harness.point.state.status_reserve import RESERVE_FILE, StatusReserve
from tests.tmpfs import mounted_tmpfs

ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/data/runs/x/status.json")


def test_disk_full_error_is_found_through_the_chain_of_causes():
    try:
        try:
            raise ENOSPC
        except OSError as exc:
            raise RuntimeError("while exporting") from exc
    except RuntimeError as outer:
        assert disk_full_error(outer) is ENOSPC
    assert disk_full_error(OSError(errno.EDQUOT, "Disk quota exceeded")) is not None
    assert disk_full_error(PermissionError(errno.EACCES, "Permission denied")) is None
    assert disk_full_error(ValueError("x")) is None


def test_reason_names_the_file_and_the_filesystem(tmp_path):
    reason = disk_full_reason(OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "a.json")), tmp_path)
    fs = mount_point(tmp_path)
    assert reason.startswith(f"disk_full: No space left on device at {tmp_path / 'a.json'} (filesystem {fs}: ")
    assert reason.endswith(" bytes free)")
    assert f"at {tmp_path} (" in disk_full_reason(OSError(errno.ENOSPC, "No space left on device"), tmp_path)


def _status(pdir: Path) -> PointStatus:
    status = PointStatus(pdir, 4, "k")
    status.phase("profiling")
    return status


def test_final_status_goes_through_the_reserve_blocks_and_renames_over_status_json(tmp_path):
    status = _status(tmp_path)
    reserve = StatusReserve(tmp_path)
    reserve.make()
    inode = (tmp_path / RESERVE_FILE).stat().st_ino
    status.finish("failed", "disk_full: test", 1, reserve=reserve)
    assert status.path.stat().st_ino == inode and not (tmp_path / RESERVE_FILE).exists()
    data = json.loads(status.path.read_text())
    assert data["schema_version"] == 1 and data["state"] == "failed" and data["reason"] == "disk_full: test"
    assert data["phases"]["profiling"] > 0
    assert "[state] failed: disk_full: test" in (tmp_path / "harness.log").read_text()


def test_without_a_reserve_the_final_status_is_an_ordinary_write(tmp_path):
    status = _status(tmp_path)
    status.finish("failed", "disk_full: test", 1, reserve=StatusReserve(tmp_path))
    assert json.loads(status.path.read_text())["state"] == "failed"


def test_free_space_check_passes_on_a_disk_with_room(tmp_path):
    check = FreeSpaceCheck(tmp_path, every_s=0)
    check()


@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A real 1 MiB filesystem (tmpfs)."""
    with mounted_tmpfs(tmp_path / "disk", "1m") as mnt:
        yield mnt


def fill(mnt: Path) -> None:
    with open(mnt / "filler", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    # the last partial block of the buffer: flush byte by byte until not even one fits
    with open(mnt / "filler2", "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 512)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def test_on_a_really_full_disk_the_status_still_ends_failed(tiny_tmpfs):
    pdir = tiny_tmpfs / "runs" / "k" / "conc4"
    pdir.mkdir(parents=True)
    status = _status(pdir)
    reserve = StatusReserve(pdir)
    reserve.make()
    fill(tiny_tmpfs)
    with pytest.raises(OSError) as exc:       # the disk really is full: an ordinary write fails
        status.phase("draining")
    assert disk_full_error(exc.value) is not None
    with pytest.raises(OSError):
        FreeSpaceCheck(pdir, every_s=0)()
    status.finish("failed", disk_full_reason(exc.value, pdir), 1, reserve=reserve)
    data = json.loads(status.path.read_text())
    assert data["state"] == "failed" and data["exit_status"] == 1
    assert data["reason"].startswith("disk_full: No space left on device at ")
    assert f"(filesystem {tiny_tmpfs}: " in data["reason"]


def test_the_point_runner_maps_enospc_from_any_write_to_disk_full(tmp_path, monkeypatch, capsys):
    """Fault injected at the writer boundary: the first write of `plan.json` fails with ENOSPC."""
    from harness.point import run as run_mod
    from harness.recipe.points import load_plans

    _, plans = load_plans(Path(__file__).parents[1] / "integration" / "data" / "sim-small.yaml", None, [])

    real = run_mod.write_json

    def full_disk(path, data):
        if Path(path).name == "plan.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, data)

    monkeypatch.setattr(run_mod, "write_json", full_disk)
    outcome = run_mod.run_point(plans[0], run_mod.PointOptions(out_dir=tmp_path / "runs", cache_dir=tmp_path / "c"))
    assert outcome.state == "failed" and outcome.exit_status == 1 and outcome.result is None
    assert outcome.reason.startswith(f"disk_full: No space left on device at {outcome.point_dir / 'plan.json'} ")
    data = json.loads((outcome.point_dir / "status.json").read_text())
    assert data["state"] == "failed" and data["reason"] == outcome.reason and data["exit_status"] == 1
    assert not (outcome.point_dir / RESERVE_FILE).exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: disk_full: ") and "status.json: failed" in err


def test_a_sweep_stops_at_the_first_point_that_finds_the_disk_full(tmp_path, monkeypatch, capsys):
    from harness.cli import main as cli_main
    from harness.point import run as run_mod

    def full_disk(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(run_mod, "write_json", full_disk)
    recipe = str(Path(__file__).parents[2] / "recipes" / "quickstart-sim.yaml")
    code = cli_main(["sweep", recipe, "--points", "c2", "c4", "--out", str(tmp_path), "--no-report"])
    out = capsys.readouterr().out
    assert code == 1 and "sweep stopped: the disk is full" in out and "c4: starting" not in out
    assert [p.parent.name for p in tmp_path.glob("**/status.json")] == ["conc2"]


def test_a_disk_too_full_for_the_lock_fails_the_point_in_one_line(tmp_path, monkeypatch, capsys):
    """Fault injected where the lock records its holder: nothing starts, the outcome is `disk_full`."""
    from harness.point import run as run_mod
    from harness.point.state import ownership
    from harness.recipe.points import load_plans

    _, plans = load_plans(Path(__file__).parents[1] / "integration" / "data" / "sim-small.yaml", None, [])

    def full_disk(fd, data, offset):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(ownership.os, "pwrite", full_disk)
    outcome = run_mod.run_point(plans[0], run_mod.PointOptions(out_dir=tmp_path / "runs", cache_dir=tmp_path / "c"))
    lock = outcome.point_dir / ownership.LOCK_FILE
    assert outcome.state == "failed" and outcome.exit_status == 1 and outcome.result is None
    assert outcome.reason.startswith(f"disk_full: No space left on device at {lock} (filesystem "), outcome.reason
    assert not (outcome.point_dir / "status.json").exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {outcome.reason}; the point is not started"), err


def test_run_on_a_really_full_disk_ends_disk_full_in_one_line_without_a_traceback(tiny_tmpfs):
    import subprocess
    import sys

    fill(tiny_tmpfs)
    out = tiny_tmpfs / "runs"
    done = subprocess.run([sys.executable, "-m", "harness", "run",
                           str(Path(__file__).parents[1] / "integration" / "data" / "sim-small.yaml"),
                           "--point", "c4", "--out", str(out)], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: disk_full: No space left on device at {out}/"), done.stderr
    assert f".writer.lock (filesystem {tiny_tmpfs}: 0 bytes free)" in done.stderr, done.stderr
