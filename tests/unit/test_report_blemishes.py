"""What a screenshot of a report makes public: labels that never overprint, boxes that say what they are,
verdict words that never break, plain terminal text, one eval judgement, and a finished point's phase."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.point.state.status import shown_phase
from harness.point.state.status_dir import dir_views, render_dir_table
from harness.report.render.plain import plain
from harness.report.render.plots import Label, place_labels

FIX = Path(__file__).parent.parent / "fixtures" / "results"


def test_the_same_label_at_one_spot_is_drawn_once() -> None:
    three = [Label(10.0, 100.0, "c4 (25 req)", f"C{i}") for i in range(3)]
    far = Label(30.0, 300.0, "c8", "C0")
    placed = place_labels([*three, far])
    assert [(lb.text, lb.color, lb.dy) for lb in placed] == [("c4 (25 req)", "C0", 4.0), ("c8", "C0", 4.0)]


def test_different_labels_at_one_spot_are_stacked() -> None:
    placed = place_labels([Label(10.0, 100.0, "c4", "C0"), Label(10.01, 100.2, "c4 (kv dram)", "C1"),
                           Label(30.0, 300.0, "c8", "C0")])
    assert [(lb.text, lb.dy) for lb in placed] == [("c4", 4.0), ("c4 (kv dram)", 14.0), ("c8", 4.0)]


def test_on_a_log_axis_nearness_is_measured_on_the_log_scale() -> None:
    # 1 and 2 lie 0.1% apart on a linear 1..1000 axis, 10% apart on its log scale
    labels = [Label(1.0, 5.0, "c1", "C0"), Label(2.0, 5.0, "c2", "C0"), Label(1000.0, 5.0, "c64", "C0")]
    assert [lb.dy for lb in place_labels(labels, log_x=False)] == [4.0, 14.0, 4.0]
    assert [lb.dy for lb in place_labels(labels, log_x=True)] == [4.0, 4.0, 4.0]


def test_the_latency_plot_says_what_its_boxes_are() -> None:
    from harness.report.analysis.curves import group_curves
    from harness.report.render.plots import BOX_CAPTION, Quantiles, _pyplot, latency_figure
    from harness.report.results.points import load_results

    curves = group_curves(load_results([FIX / "sim-run"]))
    q = Quantiles(p5=0.1, p25=0.2, p50=0.3, p75=0.4, p95=0.5, n=20)

    def legend(distributions: dict[tuple[int, int], tuple[Quantiles | None, Quantiles | None]]) -> list[str]:
        fig = latency_figure(curves, distributions)
        names = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
        _pyplot().close(fig)
        return names

    assert BOX_CAPTION in legend({(0, 0): (q, q)})
    assert BOX_CAPTION not in legend({})   # no box drawn: nothing to explain


def test_verdict_words_do_not_break_in_the_html_table(tmp_path: Path) -> None:
    from harness.report import build_report

    page = build_report([FIX / "sim-run"], tmp_path / "report").html_path.read_text()
    assert "td.w{overflow-wrap:normal;word-break:keep-all}" in page
    assert "<td class=\"w\" title=" in page and ">INVALID (error_rate)</td>" in page


def test_plain_takes_markdown_out_of_terminal_lines() -> None:
    assert plain("- `e2el_p90`: 4/5 on the **frontier**, see [docs](docs/running.md)") == \
        "- e2el_p90: 4/5 on the frontier, see docs (docs/running.md)"
    assert plain("a * b and snake_case_name") == "a * b and snake_case_name"


def test_the_terminal_report_prints_no_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(FIX / "sim-run"), "--out", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr().out
    assert "Pareto coverage:" in printed and "e2el_p90: " in printed
    assert "`" not in printed and "**" not in printed


@pytest.mark.parametrize(("status", "shown"), [
    ({"state": "running", "phase": "profiling", "phases": {"profiling": 2}}, "profiling"),
    ({"state": "completed", "phase": "collecting", "phases": {"profiling": 2, "collecting": 3}}, None),
    ({"state": "failed", "phase": "collecting", "phases": {"launching": 1, "loading": 2, "collecting": 3}}, "loading"),
    ({"state": "failed", "phase": "collecting", "phases": {}}, None),
    ({"state": "cancelled", "phase": "warmup", "phases": {"warmup": 5}}, "warmup"),
    ({"state": "failed", "phase": 7}, None),
])
def test_a_finished_point_never_shows_phase_collecting(status: dict[str, object], shown: str | None) -> None:
    assert shown_phase(status) == shown


def test_the_status_table_of_a_finished_run(tmp_path: Path) -> None:
    from harness.artifacts import write_json

    write_json(tmp_path / "k" / "conc2" / "status.json",
               {"state": "completed", "phase": "collecting", "phases": {"profiling": 1, "collecting": 2},
                "exit_status": 0, "reason": None})
    write_json(tmp_path / "k" / "conc2" / "point_result.json", {"config_key": "k", "conc": 2, "state": "completed"})
    table = render_dir_table(tmp_path, dir_views(tmp_path))
    assert "collecting" not in table and table.splitlines()[1].split()[:4] == ["k/conc2", "completed", "-", "0"]


def test_a_partial_eval_reads_as_check_judges_it(tmp_path: Path) -> None:
    from harness.artifacts import write_json
    from harness.report.results.evals import eval_line, newest_evals

    shutil.copytree(FIX / "sim-run", tmp_path / "run")
    write_json(tmp_path / "run" / "quickstart-sim" / "eval-conc4" / "eval_result.json",
               {"config_key": "quickstart-sim", "conc": 4, "task": "gsm8k", "state": "completed", "score": 1.0,
                "score_name": "em_strict", "min_score": 0.9, "threshold_source": "recipe", "passed": True,
                "limit": 10, "partial": True})
    e = newest_evals([tmp_path / "run"])["quickstart-sim"]
    assert (e.gate, e.accepted) == ("PARTIAL", False)
    assert eval_line(e).startswith("accuracy eval: PARTIAL at c4 gsm8k em_strict 1.0000")
