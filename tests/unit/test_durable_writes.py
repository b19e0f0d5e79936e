"""Every result writer is durable: the bytes are written to a temporary file beside the target and fsynced, the file
is renamed into place, then its directory is fsynced; a move into place syncs what it moves, then the directory it
moved into. The order is observed by recording `os.fsync`, `os.replace` and `os.rename` as the writers call them."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from harness import artifacts
from harness.point.state.attempt import set_aside
from harness.point.state.status_reserve import StatusReserve
from harness.redact import remember

Event = tuple[str, ...]


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[Event]:
    """`("fsync", path, "dir"|"file", size)`, `("replace", src, dst)` and `("rename", src, dst)`, in call order."""
    seen: list[Event] = []
    fsync, replace, rename = os.fsync, os.replace, os.rename

    def on_fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        kind = "dir" if os.path.isdir(path) else "file"
        seen.append(("fsync", path, kind, str(os.fstat(fd).st_size)))
        fsync(fd)

    def on_replace(src: str | Path, dst: str | Path) -> None:
        seen.append(("replace", str(src), str(dst)))
        replace(src, dst)

    def on_rename(src: str | Path, dst: str | Path) -> None:
        seen.append(("rename", str(src), str(dst)))
        rename(src, dst)

    monkeypatch.setattr(os, "fsync", on_fsync)
    monkeypatch.setattr(os, "replace", on_replace)
    monkeypatch.setattr(os, "rename", on_rename)
    return seen


def assert_durable_write(seen: list[Event], target: Path) -> None:
    """The write of `target`: fsync of a full temporary file beside it → rename over it → fsync of its directory."""
    moved = [i for i, e in enumerate(seen) if e[0] == "replace" and e[2] == str(target)]
    assert len(moved) == 1, seen
    i = moved[0]
    tmp = seen[i][1]
    assert Path(tmp).parent == target.parent and tmp != str(target)
    synced = [e for e in seen[:i] if e[:3] == ("fsync", tmp, "file")]
    assert synced and synced[-1][3] == str(target.stat().st_size), seen   # synced whole, before the rename
    assert ("fsync", str(target.parent), "dir", str(target.parent.stat().st_size)) in seen[i + 1:], seen


WRITERS: dict[str, Callable[[Path], object]] = {
    "record": lambda p: artifacts.write_json(p, {"state": "completed"}),
    "row": lambda p: artifacts.write_foreign_json(p, {"conc": 4}),
    "text": lambda p: artifacts.write_text(p, "python -m sglang.launch_server\n"),
    "bytes": lambda p: artifacts.write_bytes(p, b"\x00\x01" * 1000),
    "command": lambda p: artifacts.write_command(p, [(None, ["sglang", "--tp", "4"], {"A": "1"})]),
    "bulk": lambda p: artifacts.write_bulk_json(p, {"series": [1, 2, 3]}, ["series"]),
}


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_each_writer_syncs_its_temporary_file_renames_it_then_syncs_the_directory(
        kind: str, tmp_path: Path, events: list[Event]) -> None:
    target = tmp_path / "point" / f"out_{kind}"
    WRITERS[kind](target)
    assert_durable_write(events, target)


def test_a_figure_is_written_durably(tmp_path: Path, events: list[Event]) -> None:
    target = tmp_path / "curve.png"
    artifacts.write_figure(target, Figure(figsize=(1, 1)))
    assert_durable_write(events, target)


def test_a_scrubbed_log_is_synced_before_it_replaces_the_log(tmp_path: Path, events: list[Event]) -> None:
    log = tmp_path / "server.log"
    log.write_text("started with api key sk-durable-test-0123456789abcdef\nready\n")
    remember(["sk-durable-test-0123456789abcdef"])
    artifacts.scrub_log(log)
    assert "sk-durable-test" not in log.read_text()
    assert_durable_write(events, log)


def test_an_export_syncs_every_staged_file_before_it_renames_the_directory_into_place(
        tmp_path: Path, events: list[Event]) -> None:
    out = tmp_path / "export"
    with artifacts.staged_dir(out, "export") as tmp:
        (tmp / "agentic_c4").mkdir()
        with open(tmp / "agentic_c4" / "profile_export.jsonl", "w") as fh:   # a copy, as the export makes
            fh.write('{"request": 1}\n')
    renamed = [i for i, e in enumerate(events) if e[0] == "rename" and e[2] == str(out)]
    assert len(renamed) == 1, events
    i = renamed[0]
    staged = Path(events[i][1])
    before = [e[1:3] for e in events[:i] if e[0] == "fsync"]
    assert (str(staged / "agentic_c4" / "profile_export.jsonl"), "file") in before
    assert before[-2:] == [(str(staged / "agentic_c4"), "dir"), (str(staged), "dir")]
    assert ("fsync", str(tmp_path), "dir") in [e[:3] for e in events[i + 1:]]
    assert (out / "agentic_c4" / "profile_export.jsonl").read_text() == '{"request": 1}\n'


def test_a_report_merged_over_an_earlier_one_syncs_the_files_then_the_directory_it_moved_them_into(
        tmp_path: Path, events: list[Event]) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "curve.png").write_bytes(b"old")
    with artifacts.staged_dir(out, "report", merge=True) as tmp:
        with open(tmp / "curve.png", "wb") as fh:
            fh.write(b"new")
    moved = [i for i, e in enumerate(events) if e[0] == "replace" and e[2] == str(out / "curve.png")]
    assert len(moved) == 1, events
    i = moved[0]
    assert ("fsync", events[i][1], "file") in [e[:3] for e in events[:i]]
    assert ("fsync", str(out), "dir") in [e[:3] for e in events[i + 1:]]
    assert (out / "curve.png").read_bytes() == b"new"


def test_a_points_outputs_from_other_processes_are_synced_logs_and_earlier_attempts_left_alone(
        tmp_path: Path, events: list[Event]) -> None:
    pdir = tmp_path / "conc4"
    (pdir / "aiperf" / "logs").mkdir(parents=True)
    (pdir / "attempts" / "earlier").mkdir(parents=True)
    for name in ("aiperf/profile_export.jsonl", "aiperf/profile_export_aiperf.json", "aiperf/logs/aiperf.log",
                 "power.csv", "server.log", "attempts/earlier/point_result.json"):
        (pdir / name).write_text("x\n")
    artifacts.sync_tree(pdir, skip=lambda name: name.endswith(".log") or name == "attempts")
    synced = {(Path(e[1]).relative_to(tmp_path).as_posix(), e[2]) for e in events if e[0] == "fsync"}
    assert synced == {("conc4/aiperf/profile_export.jsonl", "file"), ("conc4/aiperf/profile_export_aiperf.json", "file"),
                      ("conc4/power.csv", "file"), ("conc4/aiperf/logs", "dir"), ("conc4/aiperf", "dir"),
                      ("conc4", "dir")}
    order = [e[1] for e in events]
    assert order.index(str(pdir / "aiperf" / "profile_export.jsonl")) < order.index(str(pdir / "aiperf"))
    assert order[-1] == str(pdir)


def test_an_earlier_attempt_set_aside_is_synced_where_it_went_and_where_it_left(
        tmp_path: Path, events: list[Event]) -> None:
    pdir = tmp_path / "conc4"
    pdir.mkdir()
    (pdir / "point_result.json").write_text("{}")
    (pdir / "status.json").write_text('{"state": "completed", "attempt": "a1"}')
    target = set_aside(pdir)
    assert target is not None
    last_move = max(i for i, e in enumerate(events) if e[0] == "replace")
    after = [e[1:3] for e in events[last_move + 1:] if e[0] == "fsync"]
    assert (str(target), "dir") in after and (str(pdir), "dir") in after


def test_the_final_status_through_the_reserve_is_synced_then_its_directory(
        tmp_path: Path, events: list[Event]) -> None:
    reserve = StatusReserve(tmp_path)
    reserve.make()
    events.clear()
    reserve.write_json(tmp_path / "status.json", {"state": "completed"})
    assert_durable_write(events, tmp_path / "status.json")
    assert json.loads((tmp_path / "status.json").read_text())["state"] == "completed"


def test_a_row_moved_aside_is_synced_where_it_went_and_where_it_left(tmp_path: Path, events: list[Event]) -> None:
    row = tmp_path / "conc4" / "bmk_agentic_x_conc4.json"
    row.parent.mkdir()
    row.write_text("{}")
    dst = artifacts.move_aside(row, tmp_path / "conc4" / "quarantine" / row.name)
    moved = [i for i, e in enumerate(events) if e[0] == "replace" and e[2] == str(dst)]
    assert len(moved) == 1, events
    after = [e[1:3] for e in events[moved[0] + 1:] if e[0] == "fsync"]
    assert (str(dst.parent), "dir") in after and (str(row.parent), "dir") in after
