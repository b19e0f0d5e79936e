"""A resumed sweep reports the exit status of the points it skips: an earlier invalid point keeps it non-zero."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.artifacts import write_json
from harness.cli import main as cli_main
from harness.point.record.result import point_dir
from harness.recipe.points import load_plans

ROOT = Path(__file__).resolve().parents[2]
RECIPE = str(ROOT / "recipes" / "quickstart-sim.yaml")


@pytest.mark.parametrize(("earlier", "expected"), [(0, 0), (3, 3), (1, 1)])
def test_resume_over_an_earlier_point_keeps_its_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            earlier: int, expected: int) -> None:
    _, plans = load_plans(RECIPE, ["c2"])
    pdir = point_dir(tmp_path, plans[0])
    pdir.mkdir(parents=True)
    write_json(pdir / "status.json", {"config_key": plans[0].config_key, "conc": 2, "state": "completed",
                                      "fingerprint": plans[0].fingerprint, "exit_status": earlier,
                                      "valid": earlier == 0})
    write_json(pdir / "point_result.json", {"config_key": plans[0].config_key, "conc": 2, "state": "completed"})
    code = cli_main(["sweep", RECIPE, "--points", "c2", "--out", str(tmp_path), "--no-report"])
    out = capsys.readouterr().out
    assert "already completed" in out
    assert code == expected, out


@pytest.mark.parametrize("command", [["run", RECIPE, "--point", "c2"], ["sweep", RECIPE, "--points", "c2"]])
def test_unwritable_out_is_one_line_before_launch(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  command: list[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")  # a file where --out's parent directory should be: no one (root included) can write
    code = cli_main([*command, "--out", str(blocker / "runs"), "--no-report"][: None if "sweep" in command else -1])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"error: --out {blocker / 'runs'}: not a writable directory (Not a directory)"]
    assert not list(tmp_path.glob("**/status.json"))


def test_a_variant_sweep_says_where_it_lands_and_how_to_compare(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    overrides = ["args.max-running-requests=64"]
    _, plans = load_plans(RECIPE, ["c2"], overrides)
    pdir = point_dir(tmp_path, plans[0], "max-running-requests=64")
    pdir.mkdir(parents=True)
    write_json(pdir / "status.json", {"config_key": plans[0].config_key, "conc": 2, "state": "completed",
                                      "fingerprint": plans[0].fingerprint, "exit_status": 0, "valid": True})
    write_json(pdir / "point_result.json", {"config_key": plans[0].config_key, "conc": 2, "state": "completed"})
    assert cli_main(["sweep", RECIPE, "--points", "c2", "--out", str(tmp_path), "--no-report",
                     "--set", *overrides]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "c2: already completed" in lines[1]   # the point is the earlier one: nothing was run
    assert lines[0] == (f"variant max-running-requests=64 -> {tmp_path}/quickstart-sim/variants/max-running-requests=64 "
                        "(the recipe's own points are left as they are)")
    # no results of the recipe as written in --out: `compare --variant` would fail, so the line gives `compare A B`
    assert lines[-1] == (f"no results of the recipe as written in {tmp_path}/quickstart-sim to compare the variant "
                         f"with; run them first: harness sweep {RECIPE} --points c2 --out {tmp_path}; then: harness "
                         f"compare {tmp_path}/quickstart-sim --variant max-running-requests=64")
