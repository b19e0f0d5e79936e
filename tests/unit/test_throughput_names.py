"""One vocabulary for throughput: predict, run/sweep/report tables, the report's HTML and compare name total and
output tokens per second per GPU the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.report.analysis.compare import METRICS
from harness.report.analysis.spread import spreads
from harness.report.analysis.table import COLUMNS, OUTPUT_PER_GPU, TOTAL_PER_GPU

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "quickstart-sim.yaml"


def test_predict_and_the_run_table_share_the_column_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert (TOTAL_PER_GPU, OUTPUT_PER_GPU) == ("total tok/s/GPU", "out tok/s/GPU")
    assert COLUMNS[1:3] == (TOTAL_PER_GPU, OUTPUT_PER_GPU)
    assert ("total_tput_per_gpu", TOTAL_PER_GPU, "max") in METRICS
    record = {"request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 10.0, "output_tput_tps": 1.0}}}}
    assert [s.metric for s in spreads([record, record])][:2] == [TOTAL_PER_GPU, OUTPUT_PER_GPU]
    assert cli_main(["predict", str(RECIPE), "--points", "c2", "--duration", "10"]) == 0
    header = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("point"))
    assert f"  {TOTAL_PER_GPU}  {OUTPUT_PER_GPU}  " in header and "/GPU" not in header.replace(
        TOTAL_PER_GPU, "").replace(OUTPUT_PER_GPU, "")


def test_predicts_total_counts_input_and_output_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["predict", str(RECIPE), "--points", "c2", "--duration", "10", "--json"]) == 0
    (p,) = json.loads(capsys.readouterr().out)["points"]
    assert p["total_tok_s_per_gpu"] == pytest.approx((p["input_tok_s"] + p["output_tok_s"]) / p["gpus"])
    assert p["output_tok_s_per_gpu"] == pytest.approx(p["output_tok_s"] / p["gpus"])
