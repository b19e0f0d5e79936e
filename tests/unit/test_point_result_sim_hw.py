"""A real recipe run on the simulator never records a real GPU as its hardware, in our record or the row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.point.record.result import build_point_result
from harness.point.record.validity import Thresholds
from harness.recipe.points import load_plans

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "tests" / "fixtures" / "results" / "sim-run" / "quickstart-sim" / "conc4" / "aiperf"


def _result(tmp_path: Path, overrides: list[str]) -> tuple[dict, dict]:
    _, plans = load_plans(ROOT / "recipes" / "musespark-fp4-h200-sglang-agentic-dflash.yaml", ["c4"], overrides)
    pdir, artifacts = tmp_path / "c4", tmp_path / "c4" / "aiperf"
    shutil.copytree(RECORDS, artifacts)   # a simulator run's real AIPerf records
    result, _ = build_point_result(
        plans[0], overrides=tuple(overrides), labels={}, thresholds=Thresholds(), pdir=pdir,
        artifact_dir=artifacts, client_run=None, metrics_before=None, metrics_after=None, state="completed",
        reason=None, corpus={})
    assert result is not None
    return result, json.loads((pdir / result["row"]).read_text())


def test_a_real_recipe_on_the_simulator_records_hw_sim(tmp_path: Path) -> None:
    result, row = _result(tmp_path, ["engine=sim"])
    assert (result["hw"], result["recipe_hw"], result["simulated"], row["hw"]) == ("sim", "h200", True, "sim")


def test_the_real_engine_records_the_recipes_gpu(tmp_path: Path) -> None:
    result, row = _result(tmp_path, [])
    assert (result["hw"], result["recipe_hw"], result["simulated"], row["hw"]) == ("h200", "h200", False, "h200")


def test_the_report_reads_an_older_simulated_record_naming_the_recipes_gpu_as_sim(tmp_path: Path) -> None:
    from harness.report.results.load import parse_result

    p = parse_result({"conc": 4, "engine": "sim", "simulated": True, "hw": "h200"}, tmp_path / "point_result.json")
    assert (p.simulated, p.hw) == (True, "sim")
