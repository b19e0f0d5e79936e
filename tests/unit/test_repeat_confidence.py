"""`--repeat N`: per metric the mean, standard deviation, CV, standard error and Student-t 95 % interval over the runs,
in the run's summary and `repeats.json`, in `report` and in `compare` (text and JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.report.analysis.spread import render, repeats_json, spreads
from tests.store_support import latencies, write_point

T_975_2 = 4.302652729749462   # Student-t 0.975 quantile, 2 degrees of freedom


def _record(tput: float) -> dict[str, object]:
    return {"num_requests_successful": 100, "request_metrics": {
        "throughput": {"per_gpu": {"total_tput_tps": tput}},
        "latency": {"e2el": {"p50": 1.0, "p90": 2.0}, "ttft": {"p50": 0.1, "p90": 0.2}}}}


def test_the_interval_is_students_t_over_the_runs() -> None:
    rows = spreads([_record(90), _record(100), _record(110)])
    tput = next(s for s in rows if s.metric == "total tok/s/GPU")
    iv = tput.interval
    assert iv is not None and (iv.n, iv.mean, iv.std) == (3, 100.0, 10.0)
    assert iv.se == pytest.approx(10 / 3 ** 0.5) and iv.cv_pct == pytest.approx(10.0)
    assert (iv.low, iv.high) == pytest.approx((100 - T_975_2 * 10 / 3 ** 0.5, 100 + T_975_2 * 10 / 3 ** 0.5))
    text = render(rows, 3)
    assert "Student-t 95% interval" in text and f"[{iv.low:.4g}, {iv.high:.4g}]" in text and "10.0%" in text
    body = repeats_json(rows, 3, ["a", "b", "c"])
    assert body["metrics"]["total tok/s/GPU"]["ci95"] == pytest.approx([iv.low, iv.high])
    assert body["attempts"] == ["a", "b", "c"] and body["runs"] == 3


def _repeated(root: Path, name: str, tputs: list[float]) -> Path:
    point = root / name / "quickstart-sim" / "conc4"
    for i, tput in enumerate(tputs):
        target = point if i == len(tputs) - 1 else point / "attempts" / f"a{i}"
        write_point(target, attempt=f"{name}{i}", e2el=latencies(30, 5.0, i), tput=tput)
    return root / name


def test_report_and_compare_give_the_interval_of_each_repeated_point(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _repeated(tmp_path, "a", [90.0, 100.0, 110.0]), _repeated(tmp_path, "b", [100.0, 120.0])
    assert cli_main(["report", str(a), "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "repeats: the mean over the runs with its Student-t 95% interval" in out
    assert "quickstart-sim c4  total tok/s/GPU  mean 100 [" in out and "(3 runs)" in out
    report = json.loads((tmp_path / "r" / "report.json").read_text())   # the report's files carry them too
    tput = report["curves"][0]["points"][0]["repeats"]["metrics"]["total tok/s/GPU"]
    assert (tput["n"], tput["mean"], tput["std"]) == (3, pytest.approx(100.0), pytest.approx(10.0))
    assert tput["ci95"][0] == pytest.approx(100 - 4.302653 * 10 / 3 ** 0.5, rel=1e-5)   # t(0.975, 2) = 4.3027
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Repeated points" in html and f"[{tput['ci95'][0]:.4g}, {tput['ci95'][1]:.4g}]" in html
    assert cli_main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "c4 A  total tok/s/GPU  mean 100 [" in out and "c4 B  total tok/s/GPU  mean 110 [" in out
    assert cli_main(["compare", str(a), str(b), "--json"]) == 0
    point = json.loads(capsys.readouterr().out)["comparisons"][0]["points"][0]
    assert point["repeats"]["a"]["total tok/s/GPU"]["n"] == 3 and point["repeats"]["b"]["total tok/s/GPU"]["std"] \
        == pytest.approx(200 ** 0.5)
