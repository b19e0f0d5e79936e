"""Every write fails whole, in one line: `export --inferencex` and `report --out` build in a temporary directory
beside their target and put it in place only when complete; a full disk, a read-only or a forbidden target is
one line naming the path and the cause, with nothing half-written left."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from harness import artifacts
from harness.artifacts import write_json
from harness.cli import main
from tests.unit.test_export_inferencex import _point

ROOT_USER = os.geteuid() == 0
CODES = [errno.ENOSPC, errno.EROFS, errno.EACCES]


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    pdir = _point(run)
    write_json(pdir / "status.json", {"config_key": "k", "conc": 4, "state": "completed", "exit_status": 0})
    return run


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


def _failing_copy(code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills (or turns read-only, or forbidden) at the second file copied."""
    real, calls = shutil.copyfile, []

    def copy(src: str, dst: str, **kw: object) -> object:
        calls.append(dst)
        if len(calls) == 2:
            Path(dst).write_text("half")   # a partial file, as a full disk leaves one
            raise OSError(code, os.strerror(code), str(dst))
        return real(src, dst)

    monkeypatch.setattr(shutil, "copyfile", copy)


@pytest.mark.parametrize("code", CODES)
def test_export_write_error_is_one_line_and_leaves_nothing(code: int, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(tmp_path)
    _failing_copy(code, monkeypatch)
    out = tmp_path / "exports" / "x"
    assert main(["export", "--inferencex", "--include-unofficial", str(run), str(out)]) == 2
    err = _one_line(capsys)
    assert err.startswith(f"error: {out}/") and err.endswith(f": cannot write the export: {os.strerror(code)}")
    assert ".partial-" not in err   # the path as it was to be, not the temporary one
    assert not out.exists() and list((tmp_path / "exports").iterdir()) == []   # no row, no partial directory
    monkeypatch.undo()
    assert main(["export", "--inferencex", "--include-unofficial", str(run), str(out)]) == 0   # then it works
    assert (out / "bmk_agentic_k_conc4" / "bmk_agentic_k_conc4.json").is_file()


def test_export_into_an_empty_directory_replaces_it_when_complete(tmp_path: Path) -> None:
    run = _run(tmp_path)
    (tmp_path / "out").mkdir()
    assert main(["export", "--inferencex", "--include-unofficial", str(run), str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "bmk_agentic_k_conc4" / "bmk_agentic_k_conc4.json").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("code", CODES)
def test_report_write_error_is_one_line_and_keeps_the_earlier_report(code: int, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(tmp_path)
    rep = tmp_path / "rep"
    assert main(["report", str(run), "--out", str(rep)]) == 0
    before = {p.relative_to(rep): p.read_bytes() for p in rep.rglob("*") if p.is_file()}
    assert any(p.parts[0] == "inspect" for p in before)   # the points' inspect pages are part of the report
    capsys.readouterr()
    real = artifacts.write_bytes

    def full(path: Path, data: bytes) -> Path:
        if Path(path).name == "report.html":
            raise OSError(code, os.strerror(code), str(path))
        return real(path, data)

    monkeypatch.setattr(artifacts, "write_bytes", full)
    assert main(["report", str(run), "--out", str(rep)]) == 2
    err = _one_line(capsys)
    assert err == f"error: {rep / 'report.html'}: cannot write the report: {os.strerror(code)}"
    assert {p.relative_to(rep): p.read_bytes() for p in rep.rglob("*") if p.is_file()} == before   # whole
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_report_over_an_earlier_one_replaces_its_inspect_pages_whole(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path)
    rep = tmp_path / "rep"
    assert main(["report", str(run), "--out", str(rep)]) == 0
    stale = rep / "inspect" / "a-point-no-longer-in-the-run.html"
    stale.write_text("stale")
    assert main(["report", str(run), "--out", str(rep)]) == 0   # the same directory again, as make demo reruns
    assert not stale.exists() and any((rep / "inspect").glob("*.html"))
    assert [p.name for p in rep.iterdir() if p.name.startswith(".")] == []
    capsys.readouterr()


def test_a_write_error_no_command_handles_is_still_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "x.json"))

    monkeypatch.setattr("harness.report.results.export.export_inferencex", boom)
    assert main(["export", "--inferencex", str(tmp_path), str(tmp_path / "o")]) == 2
    assert _one_line(capsys) == f"error: {tmp_path / 'x.json'}: No space left on device"


@pytest.mark.skipif(ROOT_USER, reason="root writes into read-only directories")
def test_a_read_only_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert main(["export", "--inferencex", "--include-unofficial", str(run), str(ro / "out")]) == 2
        assert "Permission denied" in _one_line(capsys)
        assert main(["report", str(run), "--out", str(ro / "rep")]) == 2
        assert "Permission denied" in _one_line(capsys)
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)
