"""Reading InferenceX's own rows (written by its aggregator and collector, see the fixture's README):
both row forms, mixed `agg_bmk.json` lists, arms drawn on one curve of their series by report and kept
apart by compare."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.errors import UserError
from harness.report.analysis.compare import compare_points
from harness.report.analysis.curves import group_curves
from harness.report.results.arms import Arm, arm_of
from harness.report.results.configs import group_configs
from harness.report.results.points import load_results, load_results_noted

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "inferencex"
ARTIFACTS = FIX / "artifacts"
BASE_FP = "3b8f70b040dcdea3e2c6951e4ddba0325d1a649100e48a4dbe52e584cbe3e06c"
HICACHE_FP = "0bd6cc1a2ac5b3b18d8b14374cb79cb926b067b3a28968fbccac6c86fb3a6bdd"
KEY = "agentic-coder-8b-bf16-sim-sglang"


def _rows() -> list[tuple[Path, dict]]:
    return [(p, json.loads(p.read_text())) for p in sorted(ARTIFACTS.rglob("*.json"))]


def _copy_rows(dst: Path, keep) -> Path:
    """A directory holding some of the real row files, unchanged (one artifact directory each)."""
    for path, row in _rows():
        if keep(row):
            (dst / path.parent.name).mkdir(parents=True)
            shutil.copy2(path, dst / path.parent.name / path.name)
    return dst


def test_both_row_forms_are_read_into_one_curve_of_their_series_and_one_config_per_arm():
    points = load_results([ARTIFACTS])  # the fixed-sequence row (a lone object) is not an agentic result
    assert len(points) == 5 and all(p.simulated and p.config_key is None for p in points)
    (curve,) = group_curves(points)
    assert curve.key == "agentic-coder-8b/agentic-coding/sim_sglang/bf16"
    assert [p.conc for p in curve.points] == [2, 2, 4, 4, 4]
    configs = group_configs(points)
    assert [(c.key, [p.conc for p in c.points]) for c in configs] == [
        (f"{KEY}-tp1-ep1 {{kv dram, recipe 0bd6cc1a}}", [2, 4]),
        (f"{KEY}-tp1-ep1 {{recipe 3b8f70b0}}", [2, 4]),
        (f"{KEY}-tp2-ep1 {{disagg 1p1d tp1/tp1}}", [4]),
    ]
    dram, base, disagg = (c.arm for c in configs)
    assert dram == Arm("none", "dram", "false", "agg", HICACHE_FP)
    assert base == Arm("none", "none", "false", "agg", BASE_FP)
    assert disagg == Arm("none", "none", "false", "disagg 1p1d tp1/tp1", None)  # no fingerprint given


def test_numbers_are_the_rows_numbers():
    by_file = {p.source: p for p in load_results([ARTIFACTS])}
    for path, row in _rows():
        if "scenario_type" not in row:
            continue
        p = by_file[path.resolve()]
        per_gpu = row["request_metrics"]["throughput"]["per_gpu"]
        assert (p.total_tput_per_gpu, p.output_tput_per_gpu) == (per_gpu["total_tput_tps"], per_gpu["output_tput_tps"])
        assert p.stat("e2el", "p90") == row["request_metrics"]["latency"]["e2el"]["p90"]
        assert (p.num_requests_total, p.num_requests_successful) == (row["num_requests_total"],
                                                                      row["num_requests_successful"])
    multinode = next(p for p in by_file.values() if p.arm.disagg != "agg")
    assert multinode.num_gpus is None and multinode.tp == 2  # v2 row: tp sums both roles; 2 GPUs in the row
    assert multinode.total_tput_per_gpu == pytest.approx(1715.82359 / 2, abs=1e-5)


def test_inferencex_and_our_rows_of_the_same_aiperf_files_read_the_same():
    """InferenceX's aggregator and this harness, on one set of AIPerf files: one arm, the same numbers."""
    ix = {p.conc: p for p in load_results([ARTIFACTS]) if p.arm.recipe_fingerprint == BASE_FP}
    ours = {p.conc: p for p in load_results([FIX / "ours" / "sim_tp1_conc2", FIX / "ours" / "sim_tp1_conc4"])}
    assert sorted(ix) == sorted(ours) == [2, 4]
    compared = 0
    for conc in (2, 4):
        a, b = ix[conc], ours[conc]
        assert a.arm == b.arm
        assert (a.num_requests_total, a.num_requests_successful) == (b.num_requests_total, b.num_requests_successful)
        for name in ("total_tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu"):
            assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-6, abs=1e-5)
        for metric in ("ttft", "e2el", "itl", "intvty", "e2e_norm_intvty"):
            for stat in ("mean", "p50", "p75", "p90", "p95", "std"):
                # InferenceX rounds to 5 decimals
                assert a.stat(metric, stat) == pytest.approx(b.stat(metric, stat), rel=1e-6, abs=1e-5)
                compared += 1
    assert compared == 60


def test_mixed_agg_bmk_takes_the_agentic_rows_and_notes_the_others(tmp_path, capsys):
    points, notes = load_results_noted([FIX / "agg_bmk.json"])
    assert len(points) == 5 and len(json.loads((FIX / "agg_bmk.json").read_text())) == 6
    assert notes == [f"{FIX / 'agg_bmk.json'}: read 5 agentic row(s), skipped 1 other row(s) "
                     "(fixed-sequence or not a result)"]
    assert (len(group_curves(points)), len(group_configs(points))) == (1, 3)
    assert cli_main(["report", str(FIX / "agg_bmk.json"), "--out", str(tmp_path), "--no-records"]) == 0
    assert "note: " + notes[0] in capsys.readouterr().out
    assert json.loads((tmp_path / "report.json").read_text())["notes"] == notes
    import csv

    rows = list(csv.DictReader((tmp_path / "report.csv").open()))
    assert [(r["conc"], r["kv_offloading"], r["disagg"], r["recipe_fingerprint"][:8]) for r in rows] == [
        ("2", "dram", "agg", "0bd6cc1a"), ("2", "none", "agg", "3b8f70b0"), ("4", "dram", "agg", "0bd6cc1a"),
        ("4", "none", "agg", "3b8f70b0"), ("4", "none", "disagg 1p1d tp1/tp1", "")]
    assert {r["curve"] for r in rows} == {"agentic-coder-8b/agentic-coding/sim_sglang/bf16"}
    assert [r["point"] for r in rows][::2] == ["c2 recipe 0bd6cc1a (tp1, kv dram)", "c4 recipe 0bd6cc1a (tp1, kv dram)",
                                               "c4 (disagg 1p1d tp1/tp1)"]


def test_compare_refuses_two_arms_in_one_line_and_pairs_them_when_allowed(tmp_path, capsys):
    a = _copy_rows(tmp_path / "a", lambda r: r.get("kv_offloading") == "none" and not r.get("is_multinode"))
    b = _copy_rows(tmp_path / "b", lambda r: r.get("kv_offloading") == "dram")
    assert cli_main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--allow-mixed" in err
    assert "kv_offloading none vs dram" in err and "recipe_fingerprint 3b8f70b040dc… vs 0bd6cc1a2ac5…" in err
    assert cli_main(["compare", str(a), str(b), "--allow-mixed", "--json"]) == 0
    (c,) = json.loads(capsys.readouterr().out)["comparisons"]
    assert c["mixed"] == ["kv_offloading none vs dram", "recipe_fingerprint 3b8f70b040dc… vs 0bd6cc1a2ac5…"]
    assert [p["conc"] for p in c["points"]] == [2, 4]
    assert cli_main(["compare", str(a), str(b), "--allow-mixed"]) == 0
    assert "mixed, compared as one curve as asked: kv_offloading none vs dram; recipe_fingerprint" \
        in capsys.readouterr().out


def test_compare_refuses_aggregated_against_disaggregated(tmp_path):
    a = load_results([_copy_rows(tmp_path / "a", lambda r: r.get("recipe_fingerprint") == BASE_FP)])
    b = load_results([_copy_rows(tmp_path / "b", lambda r: r.get("is_multinode") is True)])
    with pytest.raises(UserError, match=r"differ in disagg agg vs disagg 1p1d tp1/tp1; pass --allow"):
        compare_points(a, b)


def test_the_same_arms_on_both_sides_pair_arm_to_arm():
    """The artifacts and the collector's list hold the same three arms: three comparisons, nothing mixed."""
    comps, only_a, only_b = compare_points(load_results([ARTIFACTS]), load_results([FIX / "agg_bmk.json"]))
    assert (only_a, only_b) == ([], [])
    assert [(c.config_key, c.mixed, [d.conc for d in c.changed]) for c in comps] == [
        (f"{KEY}-tp1-ep1 {{kv dram, recipe 0bd6cc1a}}", (), [2, 4]),
        (f"{KEY}-tp1-ep1 {{recipe 3b8f70b0}}", (), [2, 4]),
        (f"{KEY}-tp2-ep1 {{disagg 1p1d tp1/tp1}}", (), [4]),
    ]
    assert all(d.metric("total_tput_per_gpu")["pct"] == 0.0 for c in comps for d in c.changed)


def test_arm_fields_as_inferencex_writes_them():
    row = json.loads(next(ARTIFACTS.rglob("*conc2*recipe-3b8f*.json")).read_text())
    assert arm_of(row) == Arm(recipe_fingerprint=BASE_FP)
    assert arm_of({**row, "dp_attention": "true"}).differences(arm_of(row)) == ["dp_attention true vs false"]
    assert arm_of({**row, "spec_decoding": "mtp"}).label() == "mtp, recipe 3b8f70b0"
    # our record writes booleans; InferenceX writes strings; an old row without the fields is the default arm
    assert arm_of({"dp_attention": True}).dp_attention == "true" and arm_of({}) == Arm()
    # our record keeps the exact algorithm and InferenceX's label beside it; the arm follows the label
    assert arm_of({"spec_decoding": "eagle3", "inferencex_spec_decoding": "draft_model"}) == \
        arm_of({"spec_decoding": "draft_model"}) == Arm(spec_decoding="draft_model")
    dpa = {"is_multinode": True, "disagg": True, "prefill_num_workers": 2, "prefill_tp": 4, "prefill_ep": 4,
           "prefill_dp_attention": "true", "decode_num_workers": 1, "decode_tp": 8, "decode_ep": 8,
           "decode_dp_attention": "false"}
    assert arm_of(dpa).disagg == "disagg 2p1d dep4/tp8ep8"
    assert arm_of({**dpa, "disagg": False}).disagg.startswith("multinode 2p1d")


def test_rows_of_both_contract_generations_pair_arm_to_arm():
    """InferenceX's older rows (no result_schema_version) against its newer collector's list of our rows of
    the same AIPerf files: the two single-node arms pair, the multinode arm has no partner."""
    contract = load_results([FIX / "contract" / "agg_sim.json"])
    assert len(contract) == 4
    rows = json.loads((FIX / "contract" / "agg_sim.json").read_text())
    assert {(r["result_schema_version"], r["num_gpus"]) for r in rows} == {(1, 1)}
    comps, only_a, only_b = compare_points(load_results([ARTIFACTS]), contract)
    assert [c.config_key for c in comps] == [f"{KEY}-tp1-ep1 {{kv dram, recipe 0bd6cc1a}}",
                                             f"{KEY}-tp1-ep1 {{recipe 3b8f70b0}}"]
    assert (only_a, only_b) == ([f"{KEY}-tp2-ep1 {{disagg 1p1d tp1/tp1}}"], [])
    for c in comps:
        assert [d.conc for d in c.changed] == [2, 4] and c.mixed == ()
        for d in c.changed:   # InferenceX rounds to 5 decimals
            assert abs(d.metric("total_tput_per_gpu")["pct"] or 0.0) < 1e-4
