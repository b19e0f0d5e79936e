"""Report truth: failed and invalid points appear in every report format with their reason; a recipe's
points are one curve even where single points change a setting (annotated on those points); `compare`
still refuses to pair different configs and never crashes on configs without a shared concurrency."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli
from harness.errors import UserError
from harness.report import build_report
from harness.report.analysis.compare import compare_points, render_comparison
from harness.report.results.points import load_results

SIM_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "sim-run"
NEVER_READY = "ready_timeout: the server did not become ready within 1 s (last phase: loading)"


def _run_with_a_failed_point(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(SIM_RUN, run)
    failed = run / "quickstart-sim" / "conc64"   # failed before AIPerf left any request: status.json only
    failed.mkdir()
    (failed / "status.json").write_text(json.dumps({
        "schema_version": 1, "config_key": "quickstart-sim", "conc": 64, "state": "failed", "reason": NEVER_READY,
        "phase": "collecting", "phases": {}, "exit_status": 1, "engine": "sim", "simulated": True,
        "image": "lmsysorg/sglang:v0.5.23", "variant": None, "tag": None, "note": None}))
    return run


def test_a_point_that_failed_before_any_request_is_in_every_report_format(tmp_path: Path) -> None:
    out = build_report([_run_with_a_failed_point(tmp_path)], tmp_path / "report", with_records=False)
    assert len(out.curves) == 1 and [p.conc for p in out.curves[0].points] == [1, 2, 4, 8, 16, 32, 64]

    md = out.markdown_path.read_text()
    assert f"| 64 | INVALID | - | point_failed: {NEVER_READY} | - | - | - | - | - | - | - | not measured (simulator) |" in md
    assert "c64 (no record: nothing was measured)" in md   # why its achieved concurrency is absent
    assert "| 32 | INVALID | - | error_rate: error rate 8.3% exceeds 5.0% |" in md   # a record's reason too

    page = out.html_path.read_text()
    assert f"<li>c64: point_failed: {NEVER_READY}</li>" in page

    rows = {r["conc"]: r for r in csv.DictReader(out.csv_path.open())}
    assert rows["64"]["state"] == "failed" and rows["64"]["valid"] == "false"
    assert rows["64"]["invalid_messages"] == f"point_failed: {NEVER_READY}"
    assert rows["32"]["state"] == "completed" and rows["32"]["invalid_reasons"] == "error_rate"

    (point,) = [p for p in json.loads(out.json_path.read_text())["curves"][0]["points"] if p["conc"] == 64]
    assert point["state"] == "failed" and point["valid"] is False
    assert point["invalid_reasons"] == [{"code": "point_failed", "message": NEVER_READY}]
    # never on a frontier, counted as excluded
    assert "c64" in out.curves[0].frontiers["e2el_p90"].excluded


def _hicache_from_c16(run: Path) -> Path:
    """The recipe's c16 and c32 turn DRAM HiCache on (a per-point setting, as the GB300 recipe does from c24)."""
    for conc in (16, 32):
        path = run / "quickstart-sim" / f"conc{conc}" / f"bmk_agentic_quickstart-sim_conc{conc}.json"
        record = json.loads(path.read_text())
        record["kv_offloading"] = "dram"
        path.write_text(json.dumps(record))
    return run


def test_a_recipe_with_a_per_point_setting_is_one_curve_annotated_on_its_points(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(SIM_RUN, run)
    out = build_report([_hicache_from_c16(run)], tmp_path / "report", with_records=False)
    (curve,) = out.curves
    assert [p.conc for p in curve.points] == [1, 2, 4, 8, 16, 32]
    f = curve.frontiers["e2el_p90"]
    assert (f.frontier, f.dominated, f.excluded, f.coverage) == (
        ["c1", "c2", "c4", "c16 (kv dram)"], ["c8"], ["c32 (kv dram)"], "4/5")
    assert curve.varying == ("kv_offloading",)
    md = out.markdown_path.read_text()
    assert "varies: kv none: c1, c2, c4, c8; kv dram: c16, c32" in md
    assert "| 16 (kv dram) | valid |" in md and "| 8 | valid |" in md
    assert "<td class=\"n\">16 (kv dram)</td>" in out.html_path.read_text()
    points = {p["conc"]: p for p in json.loads(out.json_path.read_text())["curves"][0]["points"]}
    assert points[16]["settings"] == "kv dram" and points[1]["settings"] is None
    assert (points[16]["id"], points[16]["attributes"]["kv_offloading"]) == ("c16 (kv dram)", "dram")
    assert points[1]["attributes"]["kv_offloading"] == "none"


def test_compare_still_refuses_two_different_configs(tmp_path: Path) -> None:
    a = _hicache_from_c16(shutil.copytree(SIM_RUN, tmp_path / "a"))
    with pytest.raises(UserError, match=r"A and B differ in kv_offloading none/dram vs none"):
        compare_points(load_results([a]), load_results([SIM_RUN]))
    comps, _, _ = compare_points(load_results([a]), load_results([a]))   # the same config on both sides pairs
    assert [d.conc for d in comps[0].changed] == [1, 2, 4, 8, 16, 32]


def test_compare_of_curves_without_a_shared_concurrency_does_not_crash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for side, concs in ((a, (1, 2)), (b, (8, 16))):
        for conc in concs:
            shutil.copytree(SIM_RUN / "quickstart-sim" / f"conc{conc}", side / "quickstart-sim" / f"conc{conc}")
    comps, only_a, only_b = compare_points(load_results([a]), load_results([b]))
    text = render_comparison(comps, only_a, only_b)
    assert "no concurrency in common" in text and "added: c8, c16; removed: c1, c2" in text
    assert cli(["compare", str(a), str(b)]) == 0
    assert "added: c8, c16; removed: c1, c2" in capsys.readouterr().out


INFERENCEX = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "inferencex"


def test_inferencex_rows_of_one_recipe_are_one_curve_whatever_their_per_point_settings() -> None:
    """Rows InferenceX's aggregator wrote for one recipe (one fingerprint), HiCache on at c4 only: one curve,
    the setting on each point; the rows of two other recipes and a disaggregated row of the same series join
    that curve, each point named by its config."""
    from harness.report.analysis.curves import group_curves

    (curve,) = group_curves(load_results([INFERENCEX / "one-config"]))
    assert [p.conc for p in curve.points] == [2, 4] and curve.ids == ["c2", "c4 (kv dram)"]
    assert curve.frontiers["e2el_p90"].coverage == "2/2"
    (joined,) = group_curves(load_results([INFERENCEX / "one-config", INFERENCEX / "artifacts"]))
    assert len(joined.points) == 7 and len(joined.configs) == 4   # this recipe, base, hicache, multinode c4
    assert joined.config_names == ("recipe 0bd6cc1a", "recipe 363537c7", "recipe 3b8f70b0")
