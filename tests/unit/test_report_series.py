"""A report's curve is one InferenceX series, as InferenceX-app draws it and its code-owner review counts it:
every config of the series on one frontier (throughput per GPU vs E2EL p90, p75 beside it), KV offload and
the other settings as point attributes; a tuned variant and simulated results stay curves of their own."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.report import build_report
from harness.report.analysis.curves import CURVE_DEFINITION, frontiers_for, group_curves
from harness.report.results.configs import group_configs
from harness.report.results.points import load_results
from harness.report.results.series import Series, hardware_key

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "results"
INFERENCEX = FIX / "inferencex"

# CONSTRUCTED VALUES, not InferenceX output: the GB300 Muse Spark curve's concurrencies (GPU-resident KV at
# c1-c15, DRAM HiCache at c24-c48) with made-up metrics shaped like the review's count of that curve: split by
# KV offload it reads 4/5 and 5/6 on the E2EL p90 frontier, as one curve 9/11 with c1 and c30 dominated.
# conc -> (kv_offloading, E2EL p90 s, E2EL p75 s, total tok/s/GPU)
GB300_CONSTRUCTED: dict[int, tuple[str, float, float, float]] = {
    1: ("none", 30.0, 24.0, 150.0),     # dominated by c5
    5: ("none", 25.0, 20.0, 600.0),
    8: ("none", 32.0, 26.0, 800.0),
    10: ("none", 40.0, 32.0, 900.0),
    15: ("none", 55.0, 44.0, 1100.0),
    24: ("dram", 70.0, 56.0, 1300.0),
    28: ("dram", 80.0, 64.0, 1400.0),
    30: ("dram", 95.0, 76.0, 1380.0),   # dominated by c28
    34: ("dram", 100.0, 80.0, 1500.0),
    44: ("dram", 120.0, 96.0, 1600.0),
    48: ("dram", 140.0, 112.0, 1650.0),
}


def _template(directory: str, pattern: str) -> dict[str, Any]:
    """A row InferenceX's aggregator wrote (`tests/fixtures/results/inferencex/README.md`), as the field template."""
    (path,) = sorted((INFERENCEX / directory).rglob(pattern))
    return json.loads(path.read_text())


def _constructed_row(template: dict[str, Any], conc: int) -> dict[str, Any]:
    """The template with only its concurrency, KV offloading and the counted metrics replaced."""
    kv, p90, p75, tput = GB300_CONSTRUCTED[conc]
    row = copy.deepcopy(template)
    row["conc"], row["kv_offloading"] = conc, kv
    row["request_metrics"]["latency"]["e2el"].update(p90=p90, p75=p75)
    row["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = tput
    return row


def _write_rows(root: Path, rows: list[dict[str, Any]]) -> Path:
    for i, row in enumerate(rows):
        d = root / f"bmk_agentic_constructed_{i:02d}"
        d.mkdir(parents=True)
        (d / f"constructed_conc{row['conc']}.json").write_text(json.dumps(row))
    return root


TEMPLATES = {
    # one recipe fingerprint for every point (InferenceX's one-config rows)
    "one recipe": lambda kv: _template("one-config", "*conc2*.json"),
    # two recipes of one series: GPU-resident KV rows from one fingerprint, HiCache rows from another
    "two recipes": lambda kv: _template("artifacts", "*conc2*recipe-3b8f*.json" if kv == "none"
                                        else "*conc2*recipe-0bd6*.json"),
}


@pytest.mark.parametrize("templates", sorted(TEMPLATES))
def test_the_gb300_curve_is_one_curve_counted_as_the_review_counts(tmp_path: Path, templates: str) -> None:
    rows = [_constructed_row(TEMPLATES[templates](kv), conc) for conc, (kv, *_) in GB300_CONSTRUCTED.items()]
    out = build_report([_write_rows(tmp_path / "rows", rows)], tmp_path / "report", with_records=False)
    (curve,) = out.curves
    assert curve.series == Series("agentic-coder-8b", "agentic-coding", "sim_sglang", "bf16")
    assert [p.conc for p in curve.points] == list(GB300_CONSTRUCTED)
    by_id = {pid: p.conc for pid, p in curve.labelled()}
    f = curve.frontiers["e2el_p90"]
    assert f.coverage == "9/11" and sorted(by_id[i] for i in f.dominated) == [1, 30]
    assert curve.frontiers["e2el_p75"].coverage == "9/11"   # reported beside p90
    # each point says its KV offload: the HiCache points are named so, the GPU-resident ones need no word
    assert [pid.endswith("(kv dram)") for pid in curve.ids] == [c >= 24 for c in GB300_CONSTRUCTED]
    assert "kv_offloading" in curve.varying

    if templates == "one recipe":
        assert curve.ids[0] == "c1" and curve.ids[5] == "c24 (kv dram)"
        assert f.dominated == ["c1", "c30 (kv dram)"]
    else:   # the config is an attribute too, and one frontier runs through both recipes' points
        assert curve.ids[0] == "c1 recipe 3b8f70b0" and curve.ids[5] == "c24 recipe 0bd6cc1a (kv dram)"
        configs = group_configs(curve.points)
        split = [frontiers_for(c.points, [f"c{p.conc}" for p in c.points])["e2el_p90"].coverage for c in configs]
        assert sorted(split) == ["4/5", "5/6"]   # what splitting the curve by recipe would count

    md = out.markdown_path.read_text()
    assert CURVE_DEFINITION in md
    p90_line = next(ln for ln in md.splitlines() if ln.startswith("- `e2el_p90`: 9/11 on the frontier"))
    assert p90_line.endswith(f"dominated: {', '.join(f.dominated)}")
    # 13 requests a point: each is marked as resting on little (harness.report.analysis.thin)
    assert f"| {curve.ids[5][1:]} \u25ca | valid |" in md
    data = json.loads(out.json_path.read_text())
    (c,) = data["curves"]
    assert data["curve_definition"] == CURVE_DEFINITION
    assert c["frontier"]["e2el_p90"]["dominated"] == f.dominated
    points = {p["id"]: p for p in c["points"]}
    assert points[curve.ids[5]]["attributes"]["kv_offloading"] == "dram"
    assert points[curve.ids[0]]["attributes"]["topology"] == "tp1"
    assert f"<td class=\"n\">{curve.ids[5][1:]} \u25ca</td>" in out.html_path.read_text()


def _our_rows(run: Path, key: str, changes: dict[int, tuple[float, float]]) -> None:
    """Our published rows of the sim-run fixture under config key `key`, with (E2EL p90, tok/s/GPU) changed."""
    for conc, (p90, tput) in changes.items():
        src = FIX / "sim-run" / "quickstart-sim" / f"conc{conc}" / f"bmk_agentic_quickstart-sim_conc{conc}.json"
        row = json.loads(src.read_text())
        row["config_key"], row["recipe_fingerprint"] = key, "sha256:" + "cd" * 32
        row["request_metrics"]["latency"]["e2el"]["p90"] = p90
        row["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = tput
        dst = run / key / f"conc{conc}" / f"bmk_agentic_{key}_conc{conc}.json"
        dst.parent.mkdir(parents=True)
        dst.write_text(json.dumps(row))


def test_two_config_keys_of_one_series_share_one_frontier(tmp_path: Path) -> None:
    """A point dominated by the other config's point is dominated: quickstart-sim's c4 (E2EL p90 3.0 s,
    300 tok/s/GPU) by cfgB's c4 (2.9 s, 320), which quickstart-sim alone counts on its frontier."""
    run = tmp_path / "run"
    shutil.copytree(FIX / "sim-run", run)
    _our_rows(run, "cfgB", {4: (2.9, 320.0), 8: (4.4, 340.0)})
    (curve,) = group_curves(load_results([run]))
    assert curve.config_keys == ("cfgB", "quickstart-sim")
    assert curve.ids == ["c1 quickstart-sim", "c2 quickstart-sim", "c4 cfgB", "c4 quickstart-sim", "c8 cfgB",
                         "c8 quickstart-sim", "c16 quickstart-sim", "c32 quickstart-sim"]
    f = curve.frontiers["e2el_p90"]
    assert f.frontier == ["c1 quickstart-sim", "c2 quickstart-sim", "c4 cfgB", "c8 cfgB", "c16 quickstart-sim"]
    assert f.dominated == ["c4 quickstart-sim", "c8 quickstart-sim"] and f.coverage == "5/7"
    # each config alone would count its own c4 and c8 as frontier points
    alone = {c.config_key: frontiers_for(c.points, [f"c{p.conc}" for p in c.points])["e2el_p90"]
             for c in group_configs(curve.points)}
    assert alone["quickstart-sim"].dominated == ["c8"] and alone["cfgB"].coverage == "2/2"


def test_a_variant_stays_a_curve_of_its_own(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIX / "sim-run", run)
    src = run / "quickstart-sim" / "conc4" / "bmk_agentic_quickstart-sim_conc4.json"
    row = {**json.loads(src.read_text()), "variant": "mrr64", "overrides": ["args.max-running-requests=64"]}
    row["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = 900.0   # would dominate c1..c8
    dst = run / "quickstart-sim" / "variants" / "mrr64" / "conc4" / src.name
    dst.parent.mkdir(parents=True)
    dst.write_text(json.dumps(row))
    recipe, variant = group_curves(load_results([run]))
    assert (recipe.variant, variant.variant, variant.key) == (None, "mrr64", "quickstart-sim [mrr64]")
    assert [p.conc for p in variant.points] == [4] and recipe.frontiers["e2el_p90"].coverage == "4/5"
    assert recipe.series == variant.series   # the same series, still two curves


def test_simulated_and_real_results_of_one_series_never_share_a_curve() -> None:
    """The simulator is an engine the harness keeps apart: the real run's rows (hw `sim-h200`) name the same
    series as the simulated ones (`sim_sglang`), and still draw a curve of their own."""
    curves = group_curves(load_results([FIX / "sim-run", FIX / "real-run"]))
    assert [(c.series, c.simulated, [p.conc for p in c.points]) for c in curves] == [
        (curves[0].series, False, [1, 2, 4]), (curves[0].series, True, [1, 2, 4, 8, 16, 32])]
    assert curves[0].series == Series("Qwen3-0.6B", "agentic-coding", "sim_sglang", "bf16")


def test_hardware_key_is_inferencex_apps() -> None:
    assert hardware_key("gb300-nv", "sglang") == "gb300_sglang" == hardware_key("gb300-cw", "SGLang")
    assert hardware_key("h200", "trtllm") == "h200_trt" and hardware_key("b200-nb", "") == "b200"
