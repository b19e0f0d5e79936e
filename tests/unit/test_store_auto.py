"""The automatic ingest at the end of `report` (and of `run`, `sweep` and `follow`, which call the same
`ingest_after`): the run lands in the store in use and one line says where; `HARNESS_DB=off` skips it; a store that
cannot be written is a warning line, never the command's failure; the test suite itself writes into no user store."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.store.auto import ingest_after
from tests.store_support import latencies, write_point


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    write_point(run / "quickstart-sim" / "conc4", attempt="a", e2el=latencies(30, 5.0, 1))
    return run


def test_the_suite_writes_into_no_user_store() -> None:
    assert os.environ["HARNESS_DB"] == "off"   # tests/conftest.py; a test that wants a store names one


def test_report_ingests_into_the_store_in_use_and_says_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path)
    db = tmp_path / "db.sqlite3"
    monkeypatch.setenv("HARNESS_DB", str(db))
    assert cli_main(["report", str(run)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("results store:")]
    assert lines == [f"results store: 1 new entry as run 1, 0 already there -> {db}"]
    assert cli_main(["report", str(run), "--json", "--out", str(tmp_path / "r2")]) == 0   # stdout stays JSON; the line goes to stderr
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert captured.err.strip() == f"results store: 0 new entries, 1 already there -> {db}"


def test_off_skips_it_and_a_bad_store_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path)
    assert cli_main(["report", str(run), "--out", str(tmp_path / "r1")]) == 0
    assert "results store" not in capsys.readouterr().out
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("HARNESS_DB", str(blocker / "x.sqlite3"))
    assert cli_main(["report", str(run), "--out", str(tmp_path / "r2")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: not stored: results store") and "HARNESS_DB=off" in err[0]
    assert ingest_after([tmp_path / "nothing"], option=str(tmp_path / "y.sqlite3")) is None   # no points: no line


def test_follow_stores_the_jobs_out_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    import slurm.follow
    import slurm.jobs
    import slurm.progress
    import slurm.report

    run = _run(tmp_path)
    monkeypatch.setattr(slurm.jobs, "find_job", lambda job, out: {"out_dir": str(run)})
    monkeypatch.setattr(slurm.follow, "follow", lambda record, **kw: [])
    monkeypatch.setattr(slurm.progress, "render_table", lambda views: "table")
    monkeypatch.setattr(slurm.progress, "exit_status", lambda views, strict: 0)
    monkeypatch.setattr(slurm.report, "job_report", lambda record: (["report: x"], None))
    db = tmp_path / "db.sqlite3"
    monkeypatch.setenv("HARNESS_DB", str(db))
    assert cli_main(["follow", "42"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == \
        f"results store: 1 new entry as run 1, 0 already there -> {db}"
