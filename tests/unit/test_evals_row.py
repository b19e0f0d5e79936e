"""Eval rows: the same row InferenceX's own builder makes from real lm-eval output (fixtures/evals/README.md)."""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.evals.row import EvalRow, build_eval_row, extract_metrics
from tests.inferencex_contract import EVAL_ROW, contract_errors

FIX = Path(__file__).parents[1] / "fixtures" / "evals"
SOURCE = "lm_eval/agentic-coder/results.json"


def _load(name: str):
    return json.loads((FIX / name).read_text())


def test_row_equals_inferencex_build_rows():
    results, meta = _load("lm_eval_results_gsm8k.json"), _load("meta_env.json")
    row = build_eval_row(meta, extract_metrics(results, "gsm8k", SOURCE))
    assert row == _load("inferencex_rows.json")[0]
    assert list(row) == list(_load("inferencex_rows.json")[0])
    assert contract_errors(row, EVAL_ROW) == []   # InferenceX's exported EvalRow schema
    assert row["score_name"] == "em_strict" and row["score"] == results["results"]["gsm8k"]["exact_match,strict-match"]


def test_integration_error_row_equals_inferencex():
    results, meta = _load("lm_eval_results_gsm8k.json"), _load("meta_env.json")
    error = {"type": "server_exited", "message": "server_exited: status 1 during the run"}
    row = build_eval_row(meta, extract_metrics(results, "gsm8k", SOURCE, integration_error=error))
    assert row == _load("inferencex_rows_integration_error.json")[0]
    assert contract_errors(row, EVAL_ROW) == []


def test_invalid_primary_score_is_an_infrastructure_failure():
    results, meta = _load("lm_eval_results_gsm8k.json"), _load("meta_env.json")
    results["results"]["gsm8k"]["exact_match,strict-match"] = 1.5
    row = build_eval_row(meta, extract_metrics(results, "gsm8k", SOURCE))
    assert row["infrastructure_success"] is False and row["score"] is None and row["em_flexible"] is None
    assert row["integration_error"]["type"] == "InvalidPrimaryScore"


def test_zero_effective_samples_is_an_infrastructure_failure():
    results, meta = _load("lm_eval_results_gsm8k.json"), _load("meta_env.json")
    results["n-samples"]["gsm8k"]["effective"] = 0
    row = build_eval_row(meta, extract_metrics(results, "gsm8k", SOURCE))
    assert row["infrastructure_success"] is False and row["n_eff"] == 0
    assert row["integration_error"]["type"] == "InvalidEffectiveSampleCount"


def test_missing_results_row():
    meta = _load("meta_env.json")
    row = build_eval_row(meta, extract_metrics({}, "gsm8k", "lm_eval",
                                               integration_error={"type": "client_failed", "message": "x"}))
    assert row["task"] == "gsm8k" and row["model"] == meta["model"] and row["score"] is None


def test_contract_is_strict():
    row = _load("inferencex_rows.json")[0]
    EvalRow.model_validate(row)
    with pytest.raises(ValidationError):
        EvalRow.model_validate({**row, "simulated": True})       # no extras
    with pytest.raises(ValidationError):
        EvalRow.model_validate({**row, "conc": "8"})              # strict types
    with pytest.raises(ValidationError):
        EvalRow.model_validate({**row, "result_schema_version": 2})
