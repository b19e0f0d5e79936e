"""A results directory that cannot be written mid-point (a filesystem turned read-only or failed, the directory
gone): the point ends `failed: results_unwritable`, in its status where that can still be written, exit 1."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from harness.point.state.unwritable import unwritable_error, unwritable_reason

SIM_SMALL = Path(__file__).parents[1] / "integration" / "data" / "sim-small.yaml"


def erofs(path: object) -> OSError:
    return OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))


def test_a_read_only_filesystem_anywhere_and_a_vanished_results_directory_are_unwritable(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    try:
        try:
            raise erofs(runs / "p" / "plan.json")
        except OSError as exc:
            raise RuntimeError("while writing") from exc
    except RuntimeError as outer:
        assert unwritable_error(outer, runs) is outer.__cause__
    gone = FileNotFoundError(errno.ENOENT, "No such file or directory", str(runs / "p" / ".status.json.x"))
    assert unwritable_error(gone, runs) is gone
    assert unwritable_error(erofs("/elsewhere/x"), runs) is not None
    assert unwritable_error(FileNotFoundError(errno.ENOENT, "No such file", "/traces/missing.jsonl"), runs) is None
    assert unwritable_error(ValueError("x"), runs) is None
    assert unwritable_reason(erofs(runs / "a.json"), runs) == f"results_unwritable: EROFS writing {runs / 'a.json'}"


def test_a_read_only_write_mid_point_ends_it_failed_with_its_own_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from harness.point import run as run_mod
    from harness.recipe.points import load_plans

    _, plans = load_plans(SIM_SMALL, None, [])
    real = run_mod.write_json

    def read_only(path: Path, data: dict[str, object]) -> Path:
        if Path(path).name == "plan.json":
            raise erofs(path)
        return real(path, data)

    monkeypatch.setattr(run_mod, "write_json", read_only)
    outcome = run_mod.run_point(plans[0], run_mod.PointOptions(out_dir=tmp_path / "runs", cache_dir=tmp_path / "c"))
    assert (outcome.state, outcome.exit_status, outcome.result) == ("failed", 1, None)
    assert outcome.reason == f"results_unwritable: EROFS writing {outcome.point_dir / 'plan.json'}"
    data = json.loads((outcome.point_dir / "status.json").read_text())
    assert (data["state"], data["reason"], data["exit_status"]) == ("failed", outcome.reason, 1)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {outcome.reason} (") and "status.json: failed" in err


def test_when_the_status_cannot_be_written_either_the_sweep_says_why_and_exits_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main as cli_main
    from harness.point import run as run_mod
    from harness.point.state import status as status_mod

    def read_only(path: Path, data: dict[str, object]) -> Path:
        raise erofs(path)

    monkeypatch.setattr(run_mod, "write_json", read_only)
    monkeypatch.setattr(status_mod, "write_json", read_only)
    recipe = str(Path(__file__).parents[2] / "recipes" / "quickstart-sim.yaml")
    code = cli_main(["sweep", recipe, "--points", "c2", "c4", "--out", str(tmp_path), "--no-report"])
    captured = capsys.readouterr()
    assert code == 1
    assert "sweep stopped: the results directory cannot be written" in captured.out
    assert "c4: starting" not in captured.out and "Traceback" not in captured.err
    line = [x for x in captured.err.splitlines() if x.startswith("error: results_unwritable: EROFS writing ")]
    assert len(line) == 1 and "status.json could not be written either" in line[0], captured.err
