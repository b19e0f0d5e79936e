"""A real recipe run on the simulator never records a real GPU as its hardware, in our record or the row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.point.record.result import build_point_result
from harness.recipe.points import load_plans
from harness.recipe.thresholds import Thresholds

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


def test_a_failed_point_leaves_no_published_row(tmp_path: Path) -> None:
    """InferenceX's collectors glob `runs/**/bmk_agentic_*.json`: a failed or cancelled point leaves none."""
    _, plans = load_plans(ROOT / "recipes" / "quickstart-sim.yaml", ["c4"])
    for state in ("failed", "cancelled"):
        pdir = tmp_path / state
        shutil.copytree(RECORDS, pdir / "aiperf")
        result, path = build_point_result(
            plans[0], overrides=(), labels={}, thresholds=Thresholds(), pdir=pdir, artifact_dir=pdir / "aiperf",
            client_run=None, metrics_before=None, metrics_after=None, state=state, reason="server_crashed: x",
            corpus={})
        assert result is not None and path == pdir / "point_result.json"
        assert (result["state"], result["row"], result["validity"]["valid"]) == (state, None, False)
        assert result["request_metrics"]   # the record keeps what was measured
        assert sorted(p.name for p in pdir.rglob("bmk_agentic_*")) == []
    result, _ = build_point_result(
        plans[0], overrides=(), labels={}, thresholds=Thresholds(), pdir=tmp_path / "ok",
        artifact_dir=_copy(tmp_path / "ok"), client_run=None, metrics_before=None, metrics_after=None,
        state="completed", reason=None, corpus={})
    assert result is not None and (tmp_path / "ok" / "bmk_agentic_quickstart-sim_conc4.json").is_file()
    assert result["row"] == "bmk_agentic_quickstart-sim_conc4.json"


def _copy(pdir: Path) -> Path:
    shutil.copytree(RECORDS, pdir / "aiperf")
    return pdir / "aiperf"
