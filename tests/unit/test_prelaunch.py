"""Checked before any server starts: the directory corpus (every file: regular, bounded, trace schema) and
the AIPerf client (found, executable, its interpreter present and able to import aiperf). A failure is one
line naming the file, exit status 2, and no server is launched (no `server.log`, no point directory)."""

from __future__ import annotations

import shutil
import stat
import sys
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.point.replay import aiperf, aiperf_check
from harness.point.replay.aiperf_check import check_aiperf
from tests.unit.test_bad_input import BASE, ROOT, one_error_line, run


def _recipe_with_corpus(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "traces" / "quickstart"
    shutil.copytree(ROOT / "recipes" / "traces" / "quickstart", corpus)
    (tmp_path / "r.yaml").write_text(BASE)
    return tmp_path / "r.yaml", corpus


def _run(capsys: pytest.CaptureFixture[str], recipe: Path, out: Path) -> str:
    line = one_error_line(*run(capsys, "run", str(recipe), "--point", "c2", "--out", str(out)))
    assert not list(out.rglob("server.log")) and not list(out.rglob("status.json")), "a server was started"
    return line


@pytest.mark.parametrize(("damage", "expected"), [
    (lambda f: f.write_text('{"id": "x", "models": ['), "synth-s0-0003.json: invalid JSON"),
    (lambda f: f.write_text(f.read_text().replace('"in":', '"input":', 1)), "synth-s0-0003.json"),
    (lambda f: (f.unlink(), f.symlink_to(f.name)), "synth-s0-0003.json: a symlink loop"),
    (lambda f: (f.unlink(), f.symlink_to("/dev/zero")), "synth-s0-0003.json: is a character device"),
])
def test_a_bad_file_in_a_directory_corpus_is_refused_before_launch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: object, expected: str) -> None:
    recipe, corpus = _recipe_with_corpus(tmp_path)
    damage(corpus / "synth-s0-0003.json")  # type: ignore[operator]
    line = _run(capsys, recipe, tmp_path / "runs")
    assert expected in line, line


def test_a_missing_aiperf_is_refused_before_launch(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    recipe, _ = _recipe_with_corpus(tmp_path)
    monkeypatch.setattr(aiperf, "aiperf_executable", lambda: str(tmp_path / "bin" / "aiperf"))
    line = _run(capsys, recipe, tmp_path / "runs")
    assert f"{tmp_path / 'bin' / 'aiperf'}: AIPerf not found" in line, line


def _script(path: Path, shebang: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{shebang}\nimport sys\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_broken_aiperf_is_refused_naming_the_file(tmp_path: Path) -> None:
    aiperf_check._check.cache_clear()
    gone = _script(tmp_path / "a" / "aiperf", "/nonexistent/venv/bin/python3")
    with pytest.raises(UserError, match=r"a/aiperf: AIPerf's interpreter /nonexistent/venv/bin/python3 is missing"):
        check_aiperf(str(gone))
    # an interpreter that runs but has no aiperf package (python -I ignores this checkout's environment)
    isolated = _script(tmp_path / "b" / "aiperf", f"{sys.executable} -I -S")
    with pytest.raises(UserError, match=r"b/aiperf: .*cannot import the aiperf package"):
        check_aiperf(str(isolated))
    not_exec = tmp_path / "c" / "aiperf"
    not_exec.parent.mkdir()
    not_exec.write_text("#!/bin/sh\n")
    with pytest.raises(UserError, match=r"c/aiperf: AIPerf is not executable"):
        check_aiperf(str(not_exec))
    with pytest.raises(UserError, match=r"no-such-aiperf-xyz: AIPerf not found \(not on PATH"):
        check_aiperf("no-such-aiperf-xyz")


def test_the_installed_aiperf_passes() -> None:
    aiperf_check._check.cache_clear()
    check_aiperf(aiperf.aiperf_executable())
