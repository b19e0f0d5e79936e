"""Finding and reading result files: this harness's results, InferenceX aggregates, per-request records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.report.results.load import find_result_files
from harness.report.results.points import load_results
from harness.report.results.samples import read_request_samples, record_file

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "results"


def test_finds_results_recursively_and_skips_companions():
    names = sorted(p.name for p in find_result_files([FIX / "inferencex" / "inputs", FIX / "sim-run"]))
    # AIPerf's companion artifacts are never opened
    assert "profile_export_aiperf.json" not in names and "server_metrics_export.json" not in names
    assert names.count("bmk_agentic_quickstart-sim_conc1.json") == 1
    assert "sim_fixed_isl256_osl64_conc4.json" in names  # opened: benchmark_serving's result, not agentic
    assert load_results([FIX / "inferencex" / "inputs"]) == []
    points = load_results([FIX / "inferencex" / "artifacts"])  # the fixed-sequence row is read but skipped
    assert sorted(p.conc for p in points) == [2, 2, 4, 4, 4]


def test_harness_result_fields():
    (p,) = load_results([FIX / "sim-run/quickstart-sim/conc32/bmk_agentic_quickstart-sim_conc32.json"])
    assert (p.conc, p.curve_key, p.engine, p.simulated) == (32, "quickstart-sim", "sim", True)
    assert p.total_tput_per_gpu == 500.0
    assert p.stat("e2el", "p90") == 8.0 and p.stat("e2el", "p75") == 6.5
    assert (p.errors, p.cancelled_at_cutoff, p.valid) == (10, 7, False)
    assert [r.code for r in p.invalid_reasons] == ["error_rate"]
    assert p.power_valid is False and p.power_invalid_reasons == ("nvml_unavailable",)
    assert p.fingerprint["gpus"] == "1x Simulated H200" and p.fingerprint["host"] == "node-a"


def test_inferencex_aggregates_get_a_derived_key_and_zero_success_is_invalid(tmp_path):
    real = sorted((FIX / "inferencex" / "artifacts").glob("bmk_agentic_*conc4*recipe-3b8f*/*.json"))[0]
    row = json.loads(real.read_text())
    (p,) = load_results([real])
    assert (p.curve_key, p.config_key, p.simulated, p.engine) == ("agentic-coder-8b-bf16-sim-sglang-tp1-ep1",
                                                                  None, True, "sim")  # hw: sim
    assert (p.errors, p.valid) == (0, True)  # records_error_dropped
    # the same row on real hardware, with errors and without a successful request (edited here)
    (tmp_path / "agg.json").write_text(json.dumps(
        [{**row, "hw": "h200-dgxc", "request_accounting": {**row["request_accounting"], "records_error_dropped": 7}},
         {**row, "hw": "h200-dgxc", "conc": 8, "num_requests_successful": 0}]))
    points = {p.conc: p for p in load_results([tmp_path / "agg.json"])}
    assert points[4].curve_key == "agentic-coder-8b-bf16-h200-dgxc-sglang-tp1-ep1" and not points[4].simulated
    assert points[4].errors == 7 and points[4].valid and not points[8].valid
    assert [r.code for r in points[8].invalid_reasons] == ["no_successful_requests"]


def test_request_samples_keep_successful_profiled_uncancelled_requests():
    path = record_file(FIX / "sim-run/quickstart-sim/conc1")
    assert path is not None
    s = read_request_samples(path)
    # warmup, the error, and the cancelled record are dropped; the non-compact line goes through JSON
    assert list(s.e2el) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert [round(t, 6) for t in s.ttft] == [0.1, 0.2, 0.3, 0.4, 0.5]


def test_bad_inputs_are_one_line_user_errors(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        load_results([tmp_path / "missing"])
    bad = tmp_path / "bmk_agentic_x_conc1.json"
    bad.write_text(json.dumps({"conc": "many", "request_metrics": {}}))
    with pytest.raises(UserError, match=r"bmk_agentic_x_conc1.json: conc: expected a positive integer"):
        load_results([tmp_path])
    bad.write_text("{not json")
    with pytest.raises(UserError, match="not readable as JSON"):
        load_results([tmp_path])


def test_point_without_metrics_is_shown_but_unmeasured(tmp_path):
    (tmp_path / "bmk_agentic_k_conc3.json").write_text(json.dumps(
        {"config_key": "k", "conc": 3, "request_metrics": None, "num_requests_total": 5,
         "num_requests_successful": 0, "validity": {"valid": False, "reasons": [{"code": "server_not_ready",
                                                                                "message": "no /health"}]}}))
    (p,) = load_results([tmp_path])
    assert p.total_tput_per_gpu is None and p.stat("e2el", "p90") is None
    assert [r.code for r in p.invalid_reasons] == ["server_not_ready"]


def test_a_point_directory_is_read_from_its_record_not_its_published_row(tmp_path):
    row = json.loads((FIX.parent / "inferencex-contract/bmk_agentic_quickstart-sim_conc2.json").read_text())
    (alone,) = load_results([FIX.parent / "inferencex-contract"])  # our published row, read as InferenceX's
    assert alone.simulated and alone.hw == "sim" and alone.num_requests_total == 7
    (tmp_path / "bmk_agentic_k_conc2.json").write_text(json.dumps(row))
    record = {**row, "config_key": "k", "engine": "sim", "simulated": True,
              "validity": {"valid": False, "reasons": [{"code": "too_few_completed", "message": "m"}]}}
    (tmp_path / "point_result.json").write_text(json.dumps(record))
    assert [p.name for p in find_result_files([tmp_path])] == ["point_result.json"]
    (p,) = load_results([tmp_path])
    assert p.config_key == "k" and not p.valid and p.invalid_reasons[0].code == "too_few_completed"
