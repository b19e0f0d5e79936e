"""Check 14 on measured points: InferenceX's upper_right count (`pareto-coverage.cjs`), per curve, as
`harness check --results PATH...` and `harness report` print it."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.report import build_report
from harness.report.analysis.pareto import pareto_frontier
from harness.report.analysis.upper_right import upper_right

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "results"
GB300 = FIX / "inferencex-gb300-shaped"
GB300_CURVE = "agentic-coder-8b/agentic-coding/sim_sglang/bf16 (simulated)"


def test_rising_throughput_is_the_frontier_and_a_falling_point_is_not() -> None:
    got = upper_right([("a", 1.0, 100.0), ("b", 2.0, 90.0), ("c", 3.0, 150.0)])
    assert (got.frontier, got.measured, got.invalid, got.count) == (["a", "c"], 3, [], "2/3")


def test_an_equal_throughput_plateau_at_a_larger_x_stays_on_the_frontier() -> None:
    points = [("a", 1.0, 100.0), ("b", 2.0, 100.0), ("c", 3.0, 150.0)]
    assert upper_right(points).frontier == ["a", "b", "c"]
    # the report's own frontier counts strict dominance: b is dominated by a there
    assert pareto_frontier(points, "min", "max").frontier == ["a", "c"]


def test_exact_duplicates_count_once_and_one_x_keeps_its_higher_point() -> None:
    got = upper_right([("b", 1.0, 100.0), ("a", 1.0, 100.0), ("low", 1.0, 80.0), ("c", 2.0, 120.0)])
    assert (got.frontier, got.count) == (["b", "c"], "2/4")   # input order decides between exact duplicates
    # the report keeps both duplicates on its frontier
    assert pareto_frontier([("b", 1.0, 100.0), ("a", 1.0, 100.0)], "min", "max").frontier == ["b", "a"]


def test_ties_in_x_sort_by_higher_throughput_first() -> None:
    assert upper_right([("low", 1.0, 80.0), ("high", 1.0, 100.0)]).frontier == ["high"]


@pytest.mark.parametrize("x, y", [(0.0, 100.0), (-1.0, 100.0), (1.0, 0.0), (1.0, -5.0), (math.nan, 100.0),
                                  (math.inf, 100.0), (1.0, math.inf), (None, 100.0), (1.0, None), (True, 100.0)])
def test_a_point_without_positive_finite_coordinates_is_invalid_and_the_curve_cannot_pass(
        x: float | None, y: float | None) -> None:
    five = [(f"p{i}", float(i), 100.0 * i) for i in range(1, 6)]
    assert upper_right(five).status == "PASS"
    got = upper_right([*five, ("bad", x, y)])
    assert (got.frontier, got.invalid, got.count, got.status) == ([k for k, _, _ in five], ["bad"], "5/6", "WARN")


def test_pass_needs_five_frontier_points() -> None:
    assert upper_right([(f"p{i}", float(i), float(i)) for i in range(1, 5)]).status == "WARN"
    assert upper_right([(f"p{i}", float(i), float(i)) for i in range(1, 6)]).status == "PASS"
    assert upper_right([]).status == "WARN" and upper_right([]).count == "0/0"


def test_check_results_on_the_gb300_shaped_rows_says_9_of_11_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["check", "--results", str(GB300)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Check 14, Pareto coverage on measured points: PASS"
    assert lines[2:] == [f"  PASS {GB300_CURVE}: 9/11 on the E2EL p90 frontier",
                         f"  PASS {GB300_CURVE}: 9/11 on the E2EL p75 frontier"]
    assert cli_main(["check", "--results", str(GB300), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "PASS" and data["inferencex_check"] == 14
    p90 = data["curves"][0]
    assert (p90["axis"], p90["frontier_points"], p90["measured_points"]) == ("e2el_p90", 9, 11)
    assert "c1" not in p90["frontier"] and "c30 (kv dram)" not in p90["frontier"]


def _three_point_run(tmp_path: Path) -> Path:
    """Three points of the quick start's simulated sweep (c1, c2, c4), as a run directory holds them."""
    run = tmp_path / "run" / "quickstart-sim"
    for conc in (1, 2, 4):
        src = FIX / "sim-run" / "quickstart-sim" / f"conc{conc}" / f"bmk_agentic_quickstart-sim_conc{conc}.json"
        (run / f"conc{conc}").mkdir(parents=True)
        shutil.copy(src, run / f"conc{conc}" / src.name)
    return run.parent


def test_check_results_on_a_three_point_run_warns_with_the_count(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["check", "--results", str(_three_point_run(tmp_path))]) == 1
    lines = capsys.readouterr().out.splitlines()
    curve = "Qwen3-0.6B/agentic-coding/sim_sglang/bf16 (simulated)"
    assert lines[0] == "Check 14, Pareto coverage on measured points: WARN"
    assert lines[2] == (f"  WARN {curve}: 3/3 on the E2EL p90 frontier; fewer than 5 frontier points: the review "
                        "needs an admin bypass")


def test_a_point_without_a_valid_measurement_is_named_and_not_counted(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = _three_point_run(tmp_path)
    row_path = next(run.rglob("*conc4.json"))
    row = json.loads(row_path.read_text())
    row["validity"] = {"valid": False, "reasons": [{"code": "errors", "message": "too many errors"}]}
    row_path.write_text(json.dumps(row))
    assert cli_main(["check", "--results", str(run)]) == 1
    p90 = capsys.readouterr().out.splitlines()[2]
    assert p90.endswith(": 2/2 on the E2EL p90 frontier; fewer than 5 frontier points: the review needs an admin "
                        "bypass; not counted (no valid measurement): c4")


def test_check_results_refuses_a_path_without_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["check", "--results", str(tmp_path)]) == 2
    assert "no result files found" in capsys.readouterr().err
    assert cli_main(["check", "--results", str(tmp_path / "missing")]) == 2


def test_the_report_prints_the_same_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = build_report([GB300], tmp_path / "report", with_records=False)
    md = out.markdown_path.read_text()
    assert "- Check 14 (InferenceX's upper_right count): PASS, 9/11 on the E2EL p90 frontier" in md
    assert "<li>Check 14 (InferenceX's upper_right count): PASS, 9/11 on the E2EL p75 frontier</li>" in \
        out.html_path.read_text()
    (curve,) = json.loads(out.json_path.read_text())["curves"]
    assert cli_main(["check", "--results", str(GB300), "--json"]) == 0
    assert curve["check14"] == json.loads(capsys.readouterr().out)["curves"]


def test_with_a_recipe_the_count_is_the_pareto_coverage_rule(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    recipe = str(Path(__file__).resolve().parents[2] / "recipes" / "quickstart-sim.yaml")
    cli_main(["check", recipe, "--results", str(_three_point_run(tmp_path)), "--json"])
    rules = {r["id"]: r for r in json.loads(capsys.readouterr().out)["recipes"][0]["rules"]}
    rule = rules["pareto-coverage"]
    assert (rule["status"], rule["inferencex_check"]) == ("WARN", "14")
    assert [f["evidence"].split(": ", 1)[1].split(";")[0] for f in rule["findings"]] == [
        "3/3 on the E2EL p90 frontier", "3/3 on the E2EL p75 frontier"]
    cli_main(["check", recipe, "--results", str(GB300), "--json"])   # rows of another config key
    rule = {r["id"]: r for r in json.loads(capsys.readouterr().out)["recipes"][0]["rules"]}["pareto-coverage"]
    assert rule["status"] == "WARN"
    assert rule["findings"][0]["evidence"].startswith("coverage unverifiable: no measured points of quickstart-sim")
