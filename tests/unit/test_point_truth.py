"""One truth per point: `status`, `report`, `export` and a sweep's resume read a point's status and record the same
way (`harness.point.state.truth.reconcile`)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from harness.artifacts import write_json
from harness.cli import main
from harness.point.record.result import point_dir
from harness.point.sequence import completed_before
from harness.point.state.status_dir import dir_views
from harness.point.state.truth import PointTruth, Unreadable, reconcile
from harness.recipe.points import load_plans
from harness.report.results.points import load_results_noted
from tests.unit.test_export_inferencex import _point

RECIPE = str(Path(__file__).resolve().parents[2] / "recipes" / "quickstart-sim.yaml")
DONE = {"state": "completed", "reason": None}
KILLED = {"state": "failed", "reason": "harness_killed: gone"}


@pytest.mark.parametrize(("status", "record", "expected"), [
    (DONE, {"state": "completed"}, PointTruth("completed", None, True)),
    (DONE, {}, PointTruth("completed", None, True)),    # a record from before states were recorded
    (KILLED, {"state": "completed"}, PointTruth("failed", "harness_killed: gone", False)),
    ({"state": "cancelled", "reason": "SIGTERM"}, {"state": "completed"}, PointTruth("cancelled", "SIGTERM", False)),
    (KILLED, {"state": "failed", "state_reason": "x"}, PointTruth("failed", "harness_killed: gone", True)),
    (DONE, {"state": "failed", "state_reason": "power_invalid: x"}, PointTruth("failed", "power_invalid: x", True)),
    (DONE, Unreadable("p: cut"), PointTruth("failed", "record_corrupt: p: cut", False, True)),
    (KILLED, Unreadable("p: cut"), PointTruth("failed", "harness_killed: gone", False, True)),
    (DONE, None, PointTruth("failed", "record_missing: status.json says completed but point_result.json is absent",
                            False)),
    (KILLED, None, PointTruth("failed", "harness_killed: gone", False)),
    ({"state": "running"}, {"state": "completed"}, PointTruth("running", None, False)),
    (None, {"state": "completed"}, PointTruth("completed", None, True)),
    (None, {"state": "failed", "state_reason": "y"}, PointTruth("failed", "y", True)),
    (None, Unreadable("p: cut"), PointTruth("failed", "record_corrupt: p: cut", False, True)),
])
def test_reconcile(status: dict[str, object] | None, record: object, expected: PointTruth) -> None:
    truth = reconcile(status, record)  # type: ignore[arg-type]
    assert truth == expected
    assert truth.is_result == truth.done == (expected.state == "completed" and expected.record_usable)


def _run(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A run of two completed points, k/conc4 and k/conc8, each with its status, record and row."""
    run = tmp_path / "run"
    good = _point(run)
    write_json(good / "status.json", {"config_key": "k", "conc": 4, "state": "completed", "exit_status": 0})
    other = run / "k" / "conc8"
    shutil.copytree(good, other)
    record = json.loads((other / "point_result.json").read_text())
    (other / "point_result.json").write_text(json.dumps({**record, "conc": 8}))
    write_json(other / "status.json", {"config_key": "k", "conc": 8, "state": "completed", "exit_status": 0})
    return run, good, other


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _export(run: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["export", "--inferencex", "--include-unofficial", str(run), str(out)]) == 0
    return capsys.readouterr().out


def test_a_record_whose_harness_was_killed_is_no_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, _, killed = _run(tmp_path)   # killed just after its record: status.json still says running
    write_json(killed / "status.json", {"config_key": "k", "conc": 8, "state": "running", "phase": "collecting",
                                        "harness_pid": _dead_pid(), "harness_host": socket.gethostname()})
    points, notes = load_results_noted([run])
    by_conc = {p.conc: p for p in points}
    assert sorted(by_conc) == [4, 8] and notes == []
    assert by_conc[4].recorded and by_conc[4].state == "completed" and by_conc[4].total_tput_per_gpu
    c8 = by_conc[8]
    assert (c8.recorded, c8.state, c8.valid, c8.total_tput_per_gpu) == (False, "failed", False, None)
    assert c8.invalid_reasons[0].code == "point_failed"
    assert c8.invalid_reasons[0].message.startswith("harness_killed: the harness process")
    out = _export(run, tmp_path / "out", capsys)
    assert sorted(p.name for p in (tmp_path / "out").glob("bmk_agentic_*")) == ["bmk_agentic_k_conc4"]
    assert "left out 1 failed point(s), never exported" in out and "harness_killed" in out
    views = {v["conc"]: v for v in dir_views(run)}
    assert (views[4]["state"], views[8]["state"]) == ("completed", "failed")
    assert views[8]["reason"].startswith("harness_killed")


def test_a_truncated_record_is_failed_named_and_blocks_nothing(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    run, _, cut = _run(tmp_path)
    body = (cut / "point_result.json").read_bytes()
    (cut / "point_result.json").write_bytes(body[: len(body) // 2])
    points, notes = load_results_noted([run])
    by_conc = {p.conc: p for p in points}
    assert sorted(by_conc) == [4, 8] and by_conc[4].recorded and by_conc[4].valid
    assert (by_conc[8].recorded, by_conc[8].state, by_conc[8].total_tput_per_gpu) == (False, "failed", None)
    assert by_conc[8].invalid_reasons[0].message.startswith("record_corrupt: ")
    assert len(notes) == 1 and notes[0].startswith(f"{cut / 'point_result.json'}: not read, the point counts as failed")
    assert main(["report", str(run), "--out", str(tmp_path / "rep")]) == 0
    assert f"note: {cut / 'point_result.json'}: not read" in capsys.readouterr().out
    out = _export(run, tmp_path / "out", capsys)
    assert sorted(p.name for p in (tmp_path / "out").glob("bmk_agentic_*")) == ["bmk_agentic_k_conc4"]
    assert "record_corrupt" in out
    assert {v["conc"]: v["state"] for v in dir_views(run)} == {4: "completed", 8: "failed"}


def test_resume_runs_a_corrupt_or_missing_record_again(tmp_path: Path) -> None:
    _, plans = load_plans(RECIPE, ["c2"])
    pdir = point_dir(tmp_path, plans[0])
    write_json(pdir / "status.json", {"config_key": plans[0].config_key, "conc": 2, "state": "completed",
                                      "fingerprint": plans[0].fingerprint, "exit_status": 0})
    assert completed_before(pdir, plans[0]) is None                      # no record
    (pdir / "point_result.json").write_text('{"config_key": "quickstart-sim", "conc"')
    assert completed_before(pdir, plans[0]) is None                      # a truncated one
    write_json(pdir / "point_result.json", {"config_key": plans[0].config_key, "conc": 2, "state": "completed"})
    assert completed_before(pdir, plans[0]) is not None                  # a whole one: skipped
