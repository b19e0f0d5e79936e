"""The results store, against SQLite always and PostgreSQL where HARNESS_TEST_POSTGRES_URL is set (the same tests):
idempotent, transactional ingest; failed points kept with their state; samples as compare reads them; schema
migrations; one line and exit 2 for every bad input, nothing half-written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.errors import UserError
from harness.store.db import migrate, open_store, schema_version
from harness.store.entry import read_run_dir
from harness.store.ingest import ingest, write_entries
from harness.store.location import default_path, parse, resolve
from harness.store.schema import SCHEMA_VERSION
from harness.store.select import select_entries
from tests.store_support import latencies, store_url, write_point

__all__ = ["store_url"]
REPO = Path(__file__).resolve().parents[2]


def _store(url: str):  # type: ignore[no-untyped-def]
    location = parse(url)
    assert location is not None
    return open_store(location)


def _count(url: str, table: str = "entries") -> int:
    with _store(url) as store:
        return int(store.query(f"SELECT COUNT(*) FROM {table}")[0][0])


def _run(tmp_path: Path, name: str = "night1", attempts: int = 1, **kw: object) -> Path:
    run = tmp_path / name
    point = run / "quickstart-sim" / "conc4"
    for i in range(attempts):
        target = point if i == attempts - 1 else point / "attempts" / f"2026010{i}T000000Z-{i:06d}"
        write_point(target, attempt=f"{name}-{i}", e2el=latencies(30, 5.0, seed=i), **kw)  # type: ignore[arg-type]
    return run


def test_the_default_store_is_per_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HARNESS_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "harness" / "results.sqlite3"
    loc = resolve()
    assert loc is not None and loc.path == tmp_path / "harness" / "results.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_path() == Path.home() / ".local" / "share" / "harness" / "results.sqlite3"
    monkeypatch.setenv("HARNESS_DB", "off")
    assert resolve() is None
    pg = resolve("postgresql://u:secret@db/x")
    assert pg is not None and pg.kind == "postgresql" and "secret" not in pg.shown


def test_ingest_is_idempotent_and_a_rerun_is_a_new_entry(store_url: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, attempts=2)
    assert cli_main(["ingest", str(run), "--db", store_url]) == 0
    assert "2 new entries as run 1" in capsys.readouterr().out
    assert cli_main(["ingest", str(run), "--db", store_url]) == 0
    assert "0 new entries, 2 already there" in capsys.readouterr().out
    assert _count(store_url) == 2 and _count(store_url, "runs") == 1
    # the point run again: its newest run moves under attempts/, a new attempt id lands: one new entry
    point = run / "quickstart-sim" / "conc4"
    os.rename(point / "point_result.json", point / "attempts" / "x.json")
    write_point(point, attempt="night1-rerun", e2el=latencies(30, 5.0, seed=9))
    assert cli_main(["ingest", str(run), "--db", store_url]) == 0
    assert _count(store_url) == 3 and _count(store_url, "runs") == 2


def test_an_entry_holds_record_row_settings_versions_and_the_samples_compare_reads(store_url: str, tmp_path: Path) -> None:
    run = _run(tmp_path)
    with _store(store_url) as store:
        ingest(store, [run])
        (entry,) = select_entries(store, "run=1")
    ref = latencies(30, 5.0, seed=0)
    assert list(entry.e2el) == pytest.approx(ref) and list(entry.ttft) == pytest.approx([v / 10 for v in ref])
    assert (entry.config_key, entry.point, entry.conc, entry.state, entry.valid) == ("quickstart-sim", "c4", 4,
                                                                                     "completed", True)
    assert (entry.sglang_version, entry.client_version, entry.scenario) == ("0.5.23", "1.0.12",
                                                                             "agentic-coding/agentx")
    assert entry.recipe_revision == "0123456789ab" and entry.host == "vm" and entry.hardware == "sim"
    assert entry.image == "lmsysorg/sglang:v0.5.23-cu130" and entry.tput_per_gpu == 1000.0
    assert entry.settings is not None and entry.settings["args"] == {"max-running-requests": 32}
    assert entry.record is not None and entry.record["attempt"] == "night1-0" and entry.row is not None


def test_failed_and_invalid_points_are_stored_with_their_state_never_in_a_baseline(store_url: str,
                                                                                  tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_point(run / "quickstart-sim" / "conc2", conc=2, state="failed", attempt="f")
    write_point(run / "quickstart-sim" / "conc4", conc=4, valid=False, attempt="i", e2el=latencies(5, 5.0, 1))
    write_point(run / "quickstart-sim" / "conc8", conc=8, attempt="ok", e2el=latencies(30, 5.0, 1))
    with _store(store_url) as store:
        ingest(store, [run])
        every = {e.conc: e for e in select_entries(store, "run=1", baseline=False)}
        baseline = select_entries(store, "run=1", baseline=True)
    assert every[2].state == "failed" and every[2].reasons == ["ready_timeout: the server never answered"]
    assert every[4].state == "completed" and every[4].valid is False
    assert [e.conc for e in baseline] == [8]


def test_a_killed_writer_leaves_no_partial_entry(store_url: str, tmp_path: Path) -> None:
    run = tmp_path / "run"
    for conc in (1, 2, 4, 8):
        write_point(run / "c" / f"conc{conc}", conc=conc, attempt=f"a{conc}", e2el=latencies(20, 1.0, conc))
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from harness.store.db import open_store
        from harness.store.entry import read_run_dir
        from harness.store.ingest import write_entries
        from harness.store.location import parse
        def stall(i):
            if i == 1:
                print("half", flush=True)
                time.sleep(60)
        with open_store(parse({store_url!r})) as store:
            write_entries(store, "x", read_run_dir(Path({str(run)!r})), after_each=stall)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "half"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert _count(store_url) == 0 and _count(store_url, "runs") == 0
    with _store(store_url) as store:   # the store is whole: the next writer stores everything
        assert write_entries(store, "x", read_run_dir(run)).new == 4


def test_concurrent_writers_lose_nothing(store_url: str, tmp_path: Path) -> None:
    runs = []
    for n in range(4):
        run = tmp_path / f"run{n}"
        for conc in (1, 2, 4):
            write_point(run / "c" / f"conc{conc}", conc=conc, attempt=f"r{n}-{conc}", e2el=latencies(20, 1.0, conc))
        runs.append(run)
    # four writers at once, each also ingesting one run another ingests
    procs = [subprocess.Popen([sys.executable, "-m", "harness", "ingest", str(runs[n]), str(runs[(n + 1) % 4]),
                               "--db", store_url], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(4)]
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert _count(store_url) == 12 and _count(store_url, "samples") == 12


def test_an_older_store_upgrades_itself_and_a_newer_one_is_refused(store_url: str) -> None:
    location = parse(store_url)
    assert location is not None
    with open_store(location) as store:
        store.execute("DROP INDEX entries_point")
        store.execute("DROP INDEX entries_run")
        store.execute("DROP INDEX entries_config_point")
        store.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with open_store(location) as store:   # version 1 -> SCHEMA_VERSION
        assert schema_version(store) == SCHEMA_VERSION
        assert migrate(store) == SCHEMA_VERSION
        store.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(UserError, match=f"schema version {SCHEMA_VERSION + 1} is newer than this harness's "
                                        f"{SCHEMA_VERSION}; upgrade the harness"):
        open_store(location)


def _one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_bad_input_is_one_line_and_nothing_is_written(store_url: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    good = _run(tmp_path, "good")
    assert "not a directory" in _one_line_exit_2(["ingest", str(tmp_path / "missing"), "--db", store_url], capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "not a run directory" in _one_line_exit_2(["ingest", str(empty), "--db", store_url], capsys)
    corrupt = _run(tmp_path, "corrupt")
    (corrupt / "quickstart-sim" / "conc4" / "point_result.json").write_text('{"conc": 4, "config_')
    err = _one_line_exit_2(["ingest", str(good), str(corrupt), "--db", store_url], capsys)
    assert "point_result.json" in err
    assert _count(store_url) == 0   # the good run before it is not stored either: all is read before any write


def test_a_bad_store_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path)
    assert "mysql:// is not a store" in _one_line_exit_2(["ingest", str(run), "--db", "mysql://x/y"], capsys)
    not_db = tmp_path / "not.sqlite3"
    not_db.write_text("hello, not a database" * 100)
    assert "file is not a database" in _one_line_exit_2(["ingest", str(run), "--db", str(not_db)], capsys)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert "cannot create" in _one_line_exit_2(["ingest", str(run), "--db", str(blocker / "x.sqlite3")], capsys)
    err = _one_line_exit_2(["ingest", str(run), "--db", "postgresql://nobody:pw@127.0.0.1:1/none"], capsys)
    assert err.startswith("error: results store postgresql://nobody:") and ":pw@" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes where permissions forbid it")
def test_a_store_without_permission_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert "results store" in _one_line_exit_2(["ingest", str(run), "--db", str(locked / "r.sqlite3")], capsys)


def test_postgresql_gone_mid_ingest_is_one_line_and_nothing_stored(store_url: str, tmp_path: Path) -> None:
    if not store_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only")
    import psycopg

    run = tmp_path / "run"
    for conc in (1, 2, 4):
        write_point(run / "c" / f"conc{conc}", conc=conc, attempt=f"a{conc}", e2el=latencies(20, 1.0, conc))
    with _store(store_url) as store:
        pid = store.query("SELECT pg_backend_pid()")[0][0]

        def drop(i: int) -> None:
            if i == 0:
                with psycopg.connect(store_url, autocommit=True) as other:
                    other.execute("SELECT pg_terminate_backend(%s)", (pid,))
                time.sleep(0.2)

        with pytest.raises(UserError, match="results store postgresql://") as exc:
            write_entries(store, "x", read_run_dir(run), after_each=drop)
        assert "\n" not in str(exc.value)
    assert _count(store_url) == 0 and _count(store_url, "runs") == 0
