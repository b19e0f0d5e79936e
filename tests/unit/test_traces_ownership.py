"""The traces writers (`harness traces synth|cap --out DIR`) delete and overwrite only what the harness wrote."""

import errno
import json
import os
from pathlib import Path

import pytest

from harness.cli import main
from harness.traces import files

USER_FILES = {"results.json": '{"mine": 1}\n', "notes.json": "[]\n", "README.md": "my notes\n"}


def _synth(out: Path, sessions: int, seed: int = 0) -> int:
    return main(["traces", "synth", "--sessions", str(sessions), "--seed", str(seed), "--out", str(out)])


def _traces(out: Path) -> list[str]:
    return sorted(p.name for p in out.glob("synth-*.json"))


def test_user_files_survive_synth_cap_and_a_second_synth(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    assert _synth(out, 4) == 0
    for name, text in USER_FILES.items():
        (out / name).write_text(text)
    assert _synth(out, 2, seed=1) == 0  # a smaller corpus: the harness's four old traces go, the user's stay
    assert _traces(out) == ["synth-s1-0000.json", "synth-s1-0001.json"]
    assert json.loads((out / ".harness-traces").read_text())["files"] == _traces(out)
    src = tmp_path / "src"
    assert _synth(src, 3) == 0
    assert main(["traces", "cap", str(src), "--max-context", "4000", "--out", str(out)]) == 0
    assert _traces(out) == [f"synth-s0-000{i}.json" for i in range(3)]
    assert _synth(out, 1, seed=2) == 0
    assert _traces(out) == ["synth-s2-0000.json"]
    assert {name: (out / name).read_text() for name in USER_FILES} == USER_FILES


def test_a_directory_the_harness_did_not_write_is_refused_untouched(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "results.json").write_text('{"mine": 1}\n')
    assert _synth(out, 2) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith(f"error: --out {out}: holds files the harness did not write (results.json); nothing was")
    assert sorted(p.name for p in out.iterdir()) == ["results.json"]
    src = tmp_path / "src"
    assert _synth(src, 2) == 0
    assert main(["traces", "cap", str(src), "--max-context", "4000", "--out", str(out)]) == 2
    assert sorted(p.name for p in out.iterdir()) == ["results.json"]
    (out / "results.json").unlink()
    assert _synth(out, 2) == 0  # an empty directory is the harness's


def test_a_user_file_named_like_a_trace_is_not_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "corpus"
    assert _synth(out, 1) == 0
    (out / "synth-s0-0001.json").write_text("user's\n")
    assert _synth(out, 2) == 2
    assert "synth-s0-0001.json is a file the harness did not write" in capsys.readouterr().err
    assert (out / "synth-s0-0001.json").read_text() == "user's\n"


def test_the_manifest_is_not_read_as_a_trace(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    assert _synth(out, 2) == 0
    assert [t.id for t in files.read_local(out).traces] == ["synth-s0-0000", "synth-s0-0001"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_target_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert _synth(ro / "corpus", 2) == 2
        assert main(["traces", "synth", "--sessions", "2", "--out", str(ro / "c.jsonl")]) == 2
    finally:
        ro.chmod(0o755)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2
    assert "cannot write the trace corpus: Permission denied" in lines[0] and str(ro / "corpus") in lines[0]
    assert "cannot write the trace corpus: Permission denied" in lines[1]
    assert list(ro.iterdir()) == []


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_write_error_is_one_line_and_leaves_no_partial_file(code: int, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "corpus"
    assert _synth(out, 2) == 0
    real = files._atomic_write

    def full(path: Path, text: str) -> None:
        if path.name == "synth-s1-0001.json":
            raise OSError(code, os.strerror(code), str(path))
        real(path, text)

    monkeypatch.setattr(files, "_atomic_write", full)
    assert _synth(out, 2, seed=1) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {out / 'synth-s1-0001.json'}: cannot write the trace corpus: {os.strerror(code)}"
    assert not [p for p in out.iterdir() if p.name.startswith(".synth")]
    monkeypatch.setattr(files, "_atomic_write", real)
    assert _synth(out, 2, seed=1) == 0  # every file the failed write left is named in the manifest: a rerun replaces it
    assert _traces(out) == ["synth-s1-0000.json", "synth-s1-0001.json"]
