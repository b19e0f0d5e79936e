"""build_report and the report command on fixtures: exact frontiers, tables and files."""

from __future__ import annotations

import html
import json
from pathlib import Path

from harness.cli import main as cli_main
from harness.report import build_report, render_table

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "results"

EXPECTED_SIM_FRONTIER = {
    "e2el_p90": {"frontier": ["c1", "c2", "c4", "c16"], "dominated": ["c8"], "excluded": ["c32"], "coverage": "4/5"},
    "e2el_p75": {"frontier": ["c1", "c2", "c4", "c8", "c16"], "dominated": [], "excluded": ["c32"],
                 "coverage": "5/5"},
    "intvty_p90": {"frontier": ["c1", "c2", "c4", "c16"], "dominated": ["c8"], "excluded": ["c32"],
                   "coverage": "4/5"},
    "e2e_norm_intvty_p90": {"frontier": ["c1", "c4", "c16"], "dominated": ["c2", "c8"], "excluded": ["c32"],
                            "coverage": "3/5"},
}

EXPECTED_TABLE = """\
conc  total tok/s/GPU  out tok/s/GPU  E2EL p50 (s)  E2EL p90 (s)  TTFT p50 (s)  errors  verdict
   1            100.0           10.0         1.000         2.000         0.100       0  valid
   2            180.0           18.0         1.400         2.500         0.150       0  valid
   4            300.0           30.0         1.800         3.000         0.200       0  valid
   8            280.0           28.0         1.900         4.500         0.300       0  valid
  16            450.0           45.0         3.000         6.000         0.500       0  valid
  32            500.0           50.0         5.000         8.000         1.200      10  INVALID (error_rate)
"""


def test_build_report_writes_every_output(tmp_path):
    out = build_report([FIX / "sim-run", FIX / "inferencex" / "artifacts"], tmp_path / "report")
    assert out.html_path.name == "report.html" and out.markdown_path.name == "report.md"
    names = [p.name for p in out.png_paths]
    assert names == ["pareto.png", "pareto_e2el_p75.png", "pareto_intvty_p90.png",
                     "pareto_e2e_norm_intvty_p90.png", "latency_by_conc.png"]
    for p in out.png_paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = out.html_path.read_text()
    assert html.count("data:image/png;base64,") == 5
    assert "http://" not in html and "https://" not in html  # self-contained
    assert "INVALID (error_rate)" in html and "node-a" in html
    # simulated points: power is "not measured", never "invalid (clock_sync_failed)"
    assert "not measured (simulator)" in html and "clock_sync_failed" not in html
    assert "<h3>agentic-coder-8b/agentic-coding/sim_sglang/bf16 · recipe 0bd6cc1a, recipe 3b8f70b0" in html
    # verdicts first, then the Pareto coverage, the plots and the details
    order = [html.index(s) for s in ('<table class="verdict">', 'id="frontier"', "data:image/png", 'id="details"')]
    assert order == sorted(order), order
    assert html.startswith('<!DOCTYPE html>') and "<h1>SIMULATED: Agentic sweep report</h1>" in html

    data = json.loads(out.json_path.read_text())
    assert data["schema_version"] == 1
    # one curve per series: InferenceX's rows of two recipes, aggregated and disaggregated, on one line
    keys = [(c["key"], c["configs"], c["varying"]) for c in data["curves"]]
    assert keys == [("Qwen3-0.6B/agentic-coding/sim_sglang/bf16", ["quickstart-sim"], []),
                    ("agentic-coder-8b/agentic-coding/sim_sglang/bf16", ["recipe 0bd6cc1a", "recipe 3b8f70b0"],
                     ["config", "topology", "kv_offloading"])]
    assert all(c["simulated"] for c in data["curves"])  # InferenceX rows with hw: sim
    sim = data["curves"][0]
    assert sim["frontier"] == EXPECTED_SIM_FRONTIER
    assert [p["conc"] for p in sim["points"]] == [1, 2, 4, 8, 16, 32]
    assert sim["points"][5]["valid"] is False and sim["points"][5]["cancelled_at_cutoff"] == 7
    ix = data["curves"][1]
    assert [p["id"] for p in ix["points"]] == [
        "c2 recipe 0bd6cc1a (tp1, kv dram)", "c2 recipe 3b8f70b0 (tp1)", "c4 recipe 0bd6cc1a (tp1, kv dram)",
        "c4 recipe 3b8f70b0 (tp1)", "c4 (disagg 1p1d tp1/tp1)"]
    # the disaggregated c4 (the same server's numbers over two GPUs) is dominated by the aggregated one
    assert ix["frontier"]["e2el_p90"] == {
        "frontier": ["c2 recipe 0bd6cc1a (tp1, kv dram)", "c2 recipe 3b8f70b0 (tp1)", "c4 recipe 3b8f70b0 (tp1)"],
        "dominated": ["c4 recipe 0bd6cc1a (tp1, kv dram)", "c4 (disagg 1p1d tp1/tp1)"], "excluded": [],
        "coverage": "3/5"}
    assert ix["points"][4]["attributes"] == {
        "config": None, "image": "lmsysorg/sglang:v0.5.23-cu130", "hw": "sim", "topology": "disagg 1p1d tp1/tp1",
        "spec_decoding": "none", "dp_attention": "false", "kv_offloading": "none", "recipe_fingerprint": None}


def test_render_table_exact():
    assert render_table([FIX / "sim-run"]) == EXPECTED_TABLE
    as_dicts = [json.loads(p.read_text()) for p in sorted((FIX / "sim-run").rglob("bmk_agentic_*.json"))]
    assert render_table(as_dicts) == EXPECTED_TABLE


def test_markdown_opens_with_verdicts_then_pareto_coverage_then_plots(tmp_path):
    md = build_report([FIX / "sim-run"], tmp_path, with_records=False).markdown_path.read_text()
    lines = md.splitlines()
    first_row = next(i for i, ln in enumerate(lines) if ln.startswith("| conc |"))
    first_image = next(i for i, ln in enumerate(lines) if ln.startswith("!["))
    assert first_row < lines.index("## Pareto coverage") < first_image
    assert lines[first_image] == "![pareto.png](pareto.png)"
    assert "| 32 | INVALID | - | error_rate: error rate 8.3% exceeds 5.0% | 110 | 11.9 ‡ | 500.0 | 5.000 | " \
           "8.000 | 1.200 | 2.400 | not measured (simulator) |" in md
    section = md[md.index("## Pareto coverage"):]
    assert "- `e2el_p90`: 4/5 on the frontier (c1, c2, c4, c16); dominated: c8; excluded: c32" in section
    assert "- `e2e_norm_intvty_p90`: 3/5 on the frontier (c1, c4, c16); dominated: c2, c8; excluded: c32" in section


def test_simulated_and_real_results_of_one_key_are_separate_curves(tmp_path):
    out = build_report([FIX / "sim-run", FIX / "real-run"], tmp_path)
    assert [(c.config_keys, c.engine, len(c.points)) for c in out.curves] == [
        (("quickstart-sim",), "sglang", 3), (("quickstart-sim",), "sim", 6)]
    assert out.curves[0].series == out.curves[1].series   # one series, two engines: two curves


def test_report_command_json_and_errors(tmp_path, capsys):
    assert cli_main(["report", str(FIX / "sim-run"), "--out", str(tmp_path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["curves"][0]["frontier"] == EXPECTED_SIM_FRONTIER
    assert (tmp_path / "report.html").is_file()
    assert cli_main(["report", str(tmp_path / "empty-dir-that-is-missing")]) == 2
    (tmp_path / "empty").mkdir()
    assert cli_main(["report", str(tmp_path / "empty")]) == 2
    assert "no result files found" in capsys.readouterr().err


def test_markdown_escapes_html_like_the_html_report(tmp_path):
    import json
    import shutil

    run = tmp_path / "run"
    shutil.copytree(FIX / "sim-run", run)
    path = run / "quickstart-sim" / "conc8" / "bmk_agentic_quickstart-sim_conc8.json"
    row = json.loads(path.read_text())
    row["validity"] = {"valid": False, "reasons": [{"code": "x", "message": "<img src=x onerror=alert(1)> | a"}],
                       "thresholds": row["validity"]["thresholds"]}
    path.write_text(json.dumps(row))
    md = build_report([run], tmp_path / "out", with_records=False).markdown_path.read_text()
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt; \\| a" in md


def test_accuracy_evals_one_row_per_config_key_and_a_simulated_curve_is_not_failed(tmp_path):
    """A demo that never ran an eval reads "not run"; a real curve without one is MISSING (check gates on it)."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(FIX / "sim-run", run / "sim")
    src = run / "sim" / "quickstart-sim" / "conc4" / "bmk_agentic_quickstart-sim_conc4.json"
    variant = run / "sim" / "quickstart-sim" / "variants" / "tuned" / "conc4"   # a second curve of the key
    variant.mkdir(parents=True)
    (variant / src.name).write_text(json.dumps({**json.loads(src.read_text()), "variant": "tuned"}))
    out = build_report([run], tmp_path / "sim-only", with_records=False)
    assert len(out.curves) == 2
    rows = [ln for ln in out.markdown_path.read_text().splitlines() if ln.startswith("| quickstart-sim |")]
    assert rows == ["| quickstart-sim | not run (simulated curve; harness eval RECIPE, or harness sweep RECIPE "
                    "--with-eval, adds one) |"]
    page = out.html_path.read_text()
    assert "MISSING" not in page
    assert "`" not in page.split("<h2>Accuracy evals</h2>", 1)[1]   # the eval cell shows no Markdown backticks
    shutil.copytree(FIX / "real-run", run / "real")
    md = build_report([run], tmp_path / "mixed", with_records=False).markdown_path.read_text()
    assert [ln.split(" | ")[1].split(" ")[0] for ln in md.splitlines() if ln.startswith("| quickstart-sim |")] \
        == ["MISSING"]   # one key with a real curve: the eval is missing for it


def test_report_command_names_every_file_it_wrote(tmp_path, capsys):
    assert cli_main(["report", str(FIX / "sim-run"), "--out", str(tmp_path)]) == 0
    tail = capsys.readouterr().out.splitlines()[-4:]
    assert tail == [f"report: {tmp_path / 'report.html'}", f"markdown: {tmp_path / 'report.md'}",
                    f"json: {tmp_path / 'report.json'}", f"csv: {tmp_path / 'report.csv'}"]


def test_report_json_says_power_in_words_like_the_tables(tmp_path):
    out = build_report([FIX / "sim-run", FIX / "real-run"], tmp_path, with_records=False)
    data = json.loads(out.json_path.read_text())
    power = {c["engine"]: {p["power"] for p in c["points"]} for c in data["curves"]}
    assert power["sim"] == {"not measured (simulator)"}
    assert "not measured (simulator)" not in power["sglang"]


def test_without_a_price_report_md_and_html_say_how_to_give_one(tmp_path):
    from harness.point.record.cost import HOW_TO_PRICE

    out = build_report([FIX / "sim-run"], tmp_path, with_records=False)
    md = out.markdown_path.read_text()
    section = md[md.index("## SLO attainment, goodput and cost"):md.index("## Pareto coverage")]
    assert "give a price per GPU-hour (--gpu-hour-price 3.0" in section
    assert html.escape(HOW_TO_PRICE, quote=False) in out.html_path.read_text()
