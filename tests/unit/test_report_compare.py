"""harness compare: per point old -> new, added/removed points, and refusing mixed curves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.errors import UserError
from harness.report.analysis.compare import compare_points, pct_change
from harness.report.results.points import load_results

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "results"


def test_compare_two_runs_exact(capsys):
    assert cli_main(["compare", str(FIX / "sim-run"), str(FIX / "sim-run-new"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (c,) = data["comparisons"]
    assert c["config_key"] == "quickstart-sim"
    assert (c["added"], c["removed"]) == ([24], [32])
    by_conc = {p["conc"]: p for p in c["points"]}
    assert sorted(by_conc) == [1, 2, 4, 8, 16]
    assert by_conc[8]["total_tput_per_gpu"] == {"old": 280.0, "new": 350.0, "pct": 25.0}
    assert by_conc[8]["e2el_p90"] == {"old": 4.5, "new": 3.6, "pct": -20.0}
    assert by_conc[4]["ttft_p50"] == {"old": 0.2, "new": 0.25, "pct": 25.0}
    assert by_conc[1]["e2el_p75"] == {"old": 1.5, "new": 1.4, "pct": -6.67}


def test_compare_text_output(capsys):
    assert cli_main(["compare", str(FIX / "sim-run"), str(FIX / "sim-run-new")]) == 0
    out = capsys.readouterr().out
    assert "   8  280.0 -> 350.0 (+25.0%)  1.900 -> 1.900 (+0.0%)   2.200 -> 2.200 (+0.0%)   4.500 -> 3.600 (-20.0%)" \
        in out   # E2EL p50 and p75 beside p90
    assert "E2EL p50 (s)" in out.splitlines()[1]
    assert "added: c24; removed: c32" in out


def test_refuses_simulated_vs_real_unless_allowed(capsys):
    assert cli_main(["compare", str(FIX / "sim-run"), str(FIX / "real-run")]) == 2
    err = capsys.readouterr().err
    assert "simulated (sim)" in err and "real (sglang)" in err and "--allow-mixed" in err
    assert cli_main(["compare", str(FIX / "sim-run"), str(FIX / "real-run"), "--allow-mixed"]) == 0
    assert "100.0 -> 200.0 (+100.0%)" in capsys.readouterr().out


def test_refuses_a_side_mixing_images_unless_allowed():
    mixed = load_results([FIX / "sim-run", FIX / "real-run"])
    with pytest.raises(UserError, match=r"^A: quickstart-sim: results of different engines, images or arms \(engine"):
        compare_points(mixed, load_results([FIX / "sim-run-new"]))
    comps, _, _ = compare_points(mixed, load_results([FIX / "sim-run-new"]), allow_mixed=True)
    assert comps[0].added == [24] and comps[0].removed == [32]
    assert "A: engine real (sglang) vs simulated (sim)" in comps[0].mixed  # the mix within A is named too


def test_pct_change():
    assert pct_change(200.0, 150.0) == -25.0
    assert pct_change(0.0, 1.0) is None and pct_change(None, 1.0) is None


def test_compare_gives_n_and_a_distribution_free_interval_per_latency_percentile(capsys):
    """conc4 has 21 per-request records on each side, conc1 five, conc2 none; throughput has no interval; a p90
    needs 42 requests a side (below that its order statistics cannot bound it above at (1 - 95 %) / 4)."""
    run = str(FIX / "sim-run")
    assert cli_main(["compare", run, run, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["noise_method"]["level"] == 0.95 and "order statistics" in data["noise_method"]["interval"]
    by_conc = {p["conc"]: p["noise"] for p in data["comparisons"][0]["points"]}
    four = by_conc[4]["e2el_p75"]
    assert (four["n_a"], four["n_b"], four["within_noise"], four["reason"]) == (21, 21, True, None)
    assert four["diff"][0] < 0 < four["diff"][1] and four["pct"][0] < 0 < four["pct"][1]
    assert by_conc[4]["e2el_p90"]["reason"] == "fewer than 42 requests (21 vs 21): no interval"
    assert data["noise_method"]["min_requests"] == {"e2el_p50": 10, "e2el_p75": 16, "e2el_p90": 42, "ttft_p50": 10}
    assert by_conc[1]["ttft_p50"]["reason"] == "fewer than 10 requests (5 vs 5): no interval"
    assert by_conc[2]["e2el_p75"] == {"n_a": None, "n_b": None, "diff": None, "pct": None, "within_noise": None,
                                      "reason": "no per-request records: no interval", "runs_a": 1, "runs_b": 1,
                                      "repeat_spread_pct": None, "to_resolve": None}
    assert by_conc[4]["total_tput_per_gpu"]["reason"] == "whole-run figure: no per-request interval"

    assert cli_main(["compare", run, run]) == 0
    out = capsys.readouterr().out
    assert "   4  E2EL p75 (s)   21   21  -1.000 s .. +1.000 s  -33.3% .. +50.0%   within noise" in out
    assert "   4  E2EL p90 (s)   21   21" in out and "fewer than 42 requests (21 vs 21): no interval" in out
    assert "   2  latency         -    -" in out and "no per-request records: no interval" in out


def test_compare_with_no_concurrency_in_common_says_so(capsys):
    run = FIX / "sim-run" / "quickstart-sim"
    assert cli_main(["compare", str(run / "conc1"), str(run / "conc2")]) == 0
    out = capsys.readouterr().out
    assert "no concurrency in common: nothing to compare point by point" in out and "added: c2; removed: c1" in out
