"""An exported row carries its point's verdict where `check --results` and `report` read it
(`harness_verdicts.json`): the same point counts the same in its run directory and in its export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.artifacts import write_json
from harness.check.measured import measured_coverage
from harness.cli import main
from harness.report.results.points import load_results
from harness.report.results.verdicts import VERDICTS_FILE
from tests.unit.test_export_inferencex import _point

TOO_FEW = {"code": "too_few_requests", "message": "7 successful requests, fewer than the 10 a point needs"}


def _invalid_point(run: Path) -> Path:
    """A completed point whose record says it is invalid (7 requests), as the runner leaves it."""
    pdir = _point(run)
    record = json.loads((pdir / "point_result.json").read_text())
    record.update(state="completed", num_requests_successful=7, validity={"valid": False, "reasons": [TOO_FEW]})
    write_json(pdir / "point_result.json", record)
    write_json(pdir / "status.json", {"config_key": "k", "conc": 4, "state": "completed", "reason": None})
    return pdir


def _counts(path: Path) -> list[tuple[str, int, int, int]]:
    """Check 14 per percentile: axis, frontier points, measured points, points not counted."""
    return [(c.axis, len(c.count.frontier), c.count.measured, len(c.not_counted)) for c in measured_coverage([path])]


def test_an_invalid_point_counts_the_same_in_the_run_and_in_its_unofficial_export(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdir = _invalid_point(tmp_path / "run")
    out = tmp_path / "out"
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"exported 1 point(s) that are not valid, each with its verdict in {out / VERDICTS_FILE}" in printed
    assert f"{pdir} (too_few_requests)" in printed

    in_run = _counts(tmp_path / "run")
    assert in_run == [("e2el_p90", 0, 0, 1), ("e2el_p75", 0, 0, 1)]
    assert _counts(out) == in_run
    (row,) = load_results([out])
    assert (row.valid, [r.code for r in row.invalid_reasons], row.publishable) == (False, ["too_few_requests"], False)

    # the row itself stays InferenceX's row exactly; the verdict lives beside the rows, under a name no
    # collector of bmk_agentic_*.json reads
    exported = json.loads((out / "bmk_agentic_k_conc4" / "bmk_agentic_k_conc4.json").read_text())
    assert not {"validity", "publishable", "state"} & set(exported)
    verdicts = json.loads((out / VERDICTS_FILE).read_text())
    assert verdicts["rows"]["bmk_agentic_k_conc4/bmk_agentic_k_conc4.json"]["validity"]["valid"] is False
    assert sorted(p.relative_to(out).as_posix() for p in out.glob("**/bmk_agentic_*.json")) == \
        ["bmk_agentic_k_conc4/bmk_agentic_k_conc4.json"]


def test_a_valid_point_counts_once_in_the_run_and_in_its_export(tmp_path: Path) -> None:
    pdir = _point(tmp_path / "run")
    write_json(pdir / "status.json", {"config_key": "k", "conc": 4, "state": "completed", "reason": None})
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    in_run = _counts(tmp_path / "run")
    assert in_run == [("e2el_p90", 1, 1, 0), ("e2el_p75", 1, 1, 0)]
    assert _counts(tmp_path / "out") == in_run


def test_the_default_export_leaves_an_invalid_point_out_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdir = _invalid_point(tmp_path / "run")
    assert main(["export", "--inferencex", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    assert f"left out 1 point(s) that are not publishable (--include-unofficial exports them): {pdir}" in \
        capsys.readouterr().out
    assert not list((tmp_path / "out").glob("**/bmk_agentic_*.json"))
