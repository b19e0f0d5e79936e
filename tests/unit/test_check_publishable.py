"""`harness check --results`: the publishable rule fails unpublishable points of a curve meant for publishing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.artifacts import write_json
from harness.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "recipes" / "musespark-fp4-h200-sglang-agentic-dflash.yaml"
KEY = "musespark-fp4-h200-sglang-agentic-dflash"


def write_record(run: Path, conc: int, label: str, ok: bool) -> None:
    write_json(run / KEY / f"conc{conc}" / "point_result.json",
               {"conc": conc, "publishable": {"publishable": ok, "reasons": [], "label": label}})


def rule(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    cli(["check", str(H200), "--json", *args])
    report = json.loads(capsys.readouterr().out)["recipes"][0]
    return next(r for r in report["rules"] if r["id"] == "publishable")


def test_unpublishable_points_fail_unless_waived(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    write_record(run, 1, "publishable", True)
    assert rule(capsys, "--results", str(run))["status"] == "PASS"
    write_record(run, 2, "unofficial (AIPerf: unsafe_override)", False)
    failed = rule(capsys, "--results", str(run))
    assert failed["status"] == "FAIL"
    assert "1 of 2 points not publishable: c2 unofficial (AIPerf: unsafe_override)" in failed["findings"][0]["evidence"]
    waived = rule(capsys, "--results", str(run), "--waive-unofficial", "smoke run for the review")
    assert waived["status"] == "WARN" and "smoke run for the review" in waived["findings"][0]["evidence"]
    waiver = json.loads((run / KEY / "publish_waiver.json").read_text())
    assert waiver["reason"] == "smoke run for the review" and waiver["rule"] == "publishable"


def test_a_waiver_needs_results_and_a_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["check", str(H200), "--waive-unofficial", "x"]) == 2
