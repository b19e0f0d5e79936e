"""The published row against InferenceX's AgentX contract, field by field.

`AgentXSingleNodeRowTypes` restates, as strict types, InferenceX's `AgentXSingleNodeRow`
(`inferencex-e2e/infx/results/schema/models.py` at SemiAnalysisAI/InferenceX fc92584b): every field, its
type and bounds, extras forbidden except the power-metric keys. The real contract code was also run on a
row of this harness; that run is recorded in `tests/fixtures/inferencex-contract/README.md`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from harness.point import inferencex_row as ixr

FIX = Path(__file__).parent.parent / "fixtures" / "results"
CONTRACT_FIX = Path(__file__).parent.parent / "fixtures" / "inferencex-contract"

NonEmpty = Annotated[str, Field(min_length=1)]
Positive = Annotated[int, Field(gt=0)]
NonNegative = Annotated[int, Field(ge=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class OffloadBackend(_Strict):
    name: NonEmpty
    version: NonEmpty | None = None


class RequestAccounting(_Strict):
    records_total: NonNegative
    records_profiled: NonNegative
    records_dropped_total: NonNegative
    records_warmup_dropped: NonNegative
    records_error_dropped: NonNegative
    error_categories: dict[str, NonNegative]


class AgentXSingleNodeRowTypes(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", allow_inf_nan=False)

    result_schema_version: Annotated[int, Field(ge=1, le=1)]
    hw: NonEmpty
    conc: Positive
    image: NonEmpty
    recipe_fingerprint: Annotated[str, Field(pattern=r"^(?:[0-9a-f]{64})?$")]
    model: NonEmpty
    infmax_model_prefix: NonEmpty
    framework: NonEmpty
    precision: NonEmpty
    spec_decoding: NonEmpty
    disagg: bool
    scenario_type: Literal["agentic-coding"]
    num_gpus: Positive
    tp: Positive
    ep: Positive
    dp_attention: Literal["true", "false"]
    kv_offloading: NonEmpty
    kv_offload_backend: OffloadBackend | None
    allocated_cpu_dram_gb: NonNegative
    num_requests_total: NonNegative
    num_requests_successful: NonNegative
    request_accounting: RequestAccounting
    dataset: dict[str, JsonValue] | None = None
    request_metrics: dict[str, JsonValue]
    server_metrics: dict[str, JsonValue]
    kv_cache_pool_tokens: NonNegative | None
    warnings: list[str] | None = None
    power_metric_schema_version: Annotated[int, Field(ge=2, le=2)] | None = None
    power_valid: Annotated[int, Field(ge=0, le=1)] | None = None
    is_multinode: Literal[False]
    pp: Positive
    dcp_size: Positive
    pcp_size: Positive


_POWER = re.compile("^(?:" + "|".join(map(re.escape, ixr.POWER_METRIC_KEYS)) + ")$")


def check_contract(row: dict[str, Any]) -> None:
    model = AgentXSingleNodeRowTypes.model_validate(row)
    for key, value in (model.model_extra or {}).items():
        assert _POWER.match(key), f"extra key {key!r} is not an InferenceX power metric"
        assert isinstance(value, float | int) and not isinstance(value, bool), key


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


def test_the_types_reject_what_the_contract_rejects() -> None:
    row = ixr.build_row(identity=IDENTITY, raw_records=RECORDS, summary=None, server_log=None, counters=None,
                        power=None)
    for change in ({"validity": {}}, {"dp_attention": True}, {"power_valid": True}, {"is_multinode": None},
                   {"recipe_fingerprint": "ABC"}, {"p99_e2el": 1.0}):
        with pytest.raises((ValidationError, AssertionError)):
            check_contract({**row, **change})


def test_spec_decoding_labels() -> None:
    assert ixr.spec_decoding({}) == "none"
    assert ixr.spec_decoding({"speculative-algorithm": "NEXTN"}) == "mtp"
    assert ixr.spec_decoding({"speculative-algorithm": "EAGLE"}) == "mtp"
    assert ixr.spec_decoding({"speculative-algorithm": "DFLASH",
                              "speculative-draft-model-path": "z/dflash"}) == "draft_model"


@pytest.mark.parametrize("path", sorted(CONTRACT_FIX.glob("bmk_agentic_*.json")), ids=lambda p: p.name)
def test_recorded_rows_of_a_real_run_pass(path: Path) -> None:
    check_contract(json.loads(path.read_text()))
