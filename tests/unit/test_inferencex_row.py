"""The published row against InferenceX's AgentX contract and InferenceX's own aggregator.

`check_contract` validates with the JSON Schema that InferenceX's exporter writes from its
`AgentXSingleNodeRow` (tests/fixtures/inferencex-contract/upstream/, commits in its README). The
`server_metrics` fixture is InferenceX's `process_agentic_result` run unmodified on a simulator run's AIPerf
files and server log (tests/fixtures/inferencex-server-metrics/).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.point.record import inferencex_row as ixr
from harness.point.record import inferencex_server_metrics as ixs
from harness.point.replay import aiperf
from tests.inferencex_contract import check_contract, contract_errors

FIX = Path(__file__).parent.parent / "fixtures" / "results"
CONTRACT_FIX = Path(__file__).parent.parent / "fixtures" / "inferencex-contract"
SERVER_FIX = Path(__file__).parent.parent / "fixtures" / "inferencex-server-metrics"


def _record(phase: str, start: int, end: int, *, error: Any = None, isl: int = 100, osl: int = 10) -> dict[str, Any]:
    meta = {"benchmark_phase": phase, "request_start_ns": start, "request_end_ns": end}
    if error:
        return {"metadata": meta, "error": error, "metrics": {}}
    ms = (end - start) / 1e6
    return {"metadata": meta, "error": None, "metrics": {
        "request_latency": {"value": ms, "unit": "ms"}, "time_to_first_token": {"value": ms / 4, "unit": "ms"},
        "inter_token_latency": {"value": ms / 40, "unit": "ms"},
        "input_sequence_length": {"value": isl, "unit": "tokens"},
        "output_sequence_length": {"value": osl, "unit": "tokens"}}}


IDENTITY = {"hw": "sim", "conc": 2, "image": "lmsysorg/sglang:v0.5.23-cu130", "recipe_fingerprint": "a" * 64,
            "model": "demo/agentic-coder-8b", "infmax_model_prefix": "agentic-coder-8b", "framework": "sglang",
            "precision": "bf16", "spec_decoding": "none", "tp": 2, "ep": 1, "pp": 1, "dcp_size": 1, "pcp_size": 1,
            "dp_attention": False, "kv_offloading": "none", "kv_offload_backend": None, "allocated_cpu_dram_gb": 0}
S = 1_000_000_000
RECORDS = [_record("warmup", 0, S), _record("profiling", S, 3 * S), _record("profiling", 2 * S, 5 * S, osl=20),
           _record("profiling", 3 * S, 4 * S, error={"type": "RequestCancelled", "message": "x"}),
           _record("profiling", 4 * S, 7 * S, isl=300, osl=30)]


def test_row_passes_the_contract_types_and_accounting_follows_inferencex() -> None:
    power = {"valid": True, "metrics": {"avg_power_w": 100.0, "total_gpu_energy_j": 1200.0,
                                        "joules_per_successful_query": 400.0, "joules_per_input_token": 1200 / 500,
                                        "p90_power_w": 123.45678}}
    row = ixr.build_row(identity=IDENTITY, raw_records=RECORDS, summary=None,
                        server_log="x\nmax_total_num_tokens=4096, max_running_requests=32\n", counters=None, power=power)
    check_contract(row)
    assert row["request_accounting"] == {"records_total": 5, "records_profiled": 3, "records_dropped_total": 2,
                                         "records_warmup_dropped": 1, "records_error_dropped": 1,
                                         "error_categories": {"RequestCancelled": 1}}
    assert (row["num_requests_total"], row["num_requests_successful"]) == (5, 3)
    assert row["kv_cache_pool_tokens"] == 4096 == row["server_metrics"]["kv_cache"]["gpu_total_tokens"]
    tput = row["request_metrics"]["throughput"]
    assert tput["duration_seconds"] == 6.0   # first successful start (1 s) → last successful end (7 s)
    assert tput["total"]["tokens_per_second"] == pytest.approx((500 + 60) / 6)
    assert tput["per_gpu"]["total_tput_tps"] == pytest.approx((500 + 60) / 6 / 2)
    assert row["request_metrics"]["latency"]["e2el"]["p50"] == pytest.approx(3.0)
    assert "p99" not in row["request_metrics"]["latency"]["e2el"]  # p99 stays in our own record
    assert row["power_valid"] == 1 and row["power_metric_schema_version"] == 2
    assert row["avg_power_w"] == 100.0 and row["joules_per_successful_query"] == 400.0
    assert row["joules_per_input_token"] == 2.4 and row["p90_power_w"] == 123.457  # InferenceX's rounding


def test_invalid_power_publishes_the_verdict_and_no_metric() -> None:
    row = ixr.build_row(identity=IDENTITY, raw_records=RECORDS, summary=None, server_log=None, counters=None,
                        power={"valid": False})
    check_contract(row)
    assert row["power_valid"] == 0 and "avg_power_w" not in row and "total_gpu_energy_j" not in row
    assert row["kv_cache_pool_tokens"] is None and row["warnings"]


def test_the_contract_rejects_what_inferencex_rejects() -> None:
    row = ixr.build_row(identity=IDENTITY, raw_records=RECORDS, summary=None, server_log=None, counters=None,
                        power=None)
    check_contract(row)
    for change in ({"validity": {}}, {"dp_attention": True}, {"power_valid": True}, {"is_multinode": None},
                   {"recipe_fingerprint": "ABC"}, {"p99_e2el": 1.0}, {"conc": 2.0}, {"pcp_size": 0},
                   {"kv_cache_pool_tokens": -1}, {"schema_version": 1}):
        assert contract_errors({**row, **change}), change


@pytest.mark.parametrize("variant", [
    {"dp_attention": True, "tp": 8, "ep": 8},
    {"dcp_size": 4, "tp": 8},
    {"pcp_size": 2, "tp": 4, "pp": 2},
    {"kv_offloading": "dram", "kv_offload_backend": {"name": "hicache", "version": "0.5.23"},
     "allocated_cpu_dram_gb": 1280},
    {"spec_decoding": "draft_model", "hw": "h200"},
], ids=["dp-attention", "dcp", "pcp-pp", "hicache", "draft-model"])
def test_parallelism_and_offload_variants_pass_the_contract(variant: dict[str, Any]) -> None:
    identity = {**IDENTITY, **variant}
    row = ixr.build_row(identity=identity, raw_records=RECORDS, summary=None, server_log=None, counters=None,
                        power={"valid": False})
    check_contract(row)
    assert row["num_gpus"] == identity["tp"] * identity["pp"] * identity["pcp_size"]
    assert row["dp_attention"] == ("true" if identity["dp_attention"] else "false")
    assert (row["dcp_size"], row["pcp_size"]) == (identity["dcp_size"], identity["pcp_size"])


def test_spec_decoding_labels() -> None:
    assert ixr.spec_decoding({}) == "none"
    assert ixr.spec_decoding({"speculative-algorithm": "NEXTN"}) == "mtp"
    assert ixr.spec_decoding({"speculative-algorithm": "EAGLE"}) == "mtp"
    assert ixr.spec_decoding({"speculative-algorithm": "DFLASH",
                              "speculative-draft-model-path": "z/dflash"}) == "draft_model"


@pytest.mark.parametrize("path", sorted(CONTRACT_FIX.glob("bmk_agentic_*.json")), ids=lambda p: p.name)
def test_recorded_rows_of_a_real_run_pass(path: Path) -> None:
    check_contract(json.loads(path.read_text()))


def _fixture_row(export: dict[str, Any] | None) -> dict[str, Any]:
    identity = {**IDENTITY, "tp": 2, "dcp_size": 2, "dp_attention": True}
    return ixr.build_row(identity=identity, raw_records=aiperf.read_records(SERVER_FIX), summary=None,
                         server_log=(SERVER_FIX / "server.log").read_text(), counters=None, power=None,
                         server_metrics_export=export)


def test_server_metrics_equal_inferencex_aggregator_output_from_aiperf_export() -> None:
    export = aiperf.read_server_metrics(SERVER_FIX)
    assert export is not None and export["aiperf_version"] == "0.13.0"
    expected = json.loads((SERVER_FIX / "agg_inferencex.json").read_text())
    row = _fixture_row(export)
    check_contract(row)
    assert row["server_metrics"] == expected["server_metrics"]
    assert row["server_metrics"]["adapter"] == "sglang" and row["server_metrics"]["present"] is True
    assert row["kv_cache_pool_tokens"] == expected["kv_cache_pool_tokens"] == 8984375
    assert "warnings" not in row and "warnings" not in expected


def test_without_the_export_the_block_is_inferencex_fallback_with_its_warning() -> None:
    expected = json.loads((SERVER_FIX / "agg_inferencex_no_export.json").read_text())
    row = _fixture_row(None)
    check_contract(row)
    assert row["server_metrics"] == expected["server_metrics"]
    assert row["server_metrics"]["adapter"] == "none"
    assert row["warnings"] == expected["warnings"] == [ixs.MISSING_EXPORT]
    assert row["kv_cache_pool_tokens"] == expected["kv_cache_pool_tokens"]


def test_the_fallback_keeps_the_scraped_counters_and_says_so() -> None:
    row = ixr.build_row(identity=IDENTITY, raw_records=RECORDS, summary=None, server_log=None, power=None,
                        counters={"sglang:cache_hit_rate": 0.25, "sglang:token_usage": 0.5})
    check_contract(row)
    block = row["server_metrics"]
    assert (block["adapter"], block["cache"]["gpu_cache_hit_rate"], block["kv_cache"]["gpu_usage_pct"]) == (
        "none", 0.25, 0.5)
    assert row["warnings"][0] == ixs.MISSING_EXPORT and "scrape" in row["warnings"][1]


def test_kv_pool_follows_inferencex_rank_tags_and_dp_size() -> None:
    line = "max_total_num_tokens={}, chunked_prefill_size=8192, max_running_requests=32"
    assert ixs.kv_pool_tokens(f"[t DP0 TP0 EP0] {line.format(100)}\n[t DP1 TP1 EP1] {line.format(100)}") == 200
    assert ixs.kv_pool_tokens(f"server_args=ServerArgs(dp_size=4)\n[t DP0 TP0 EP0] {line.format(100)}") == 400
    assert ixs.kv_pool_tokens(f"[t TP0] {line.format(300)}") == 300
    assert ixs.kv_pool_tokens("no pool line") is None and ixs.kv_pool_tokens(None) is None


def test_round_floats_is_inferencex_rounding() -> None:
    assert ixs.round_floats({"a": [1.0, 0.5, 2.123456789, 0.0]}) == {"a": [1, 0.5, 2.12346, 0.0]}
