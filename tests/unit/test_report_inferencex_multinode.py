"""InferenceX's multi-node row and ours, of one prefill/decode point's AIPerf files and worker logs.

`tests/fixtures/results/inferencex/multinode/` (see the README beside it): a real 1P1D point (one prefill and one
decode worker of TP4 behind sglang-router, on the simulator), our published row unchanged (`ours/`), and the row
InferenceX's agentic aggregator wrote from the same AIPerf files and worker logs with the environment of its
multi-node AgentX flow (`artifacts/`, written by `make_fixtures.sh`, never edited).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.report.results.arms import Arm
from harness.report.results.points import load_results
from tests.inferencex_contract import check_contract

MN = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "inferencex" / "multinode"
OURS = MN / "ours" / "pd_1p1d_tp4_conc4"
FP = "d6c25bdec1a4f8acc10419d7ec63274b3449ce9604f1adac1555c6e5f3ea947f"

# Fields only our row writes: InferenceX's newer result contract (`AgentXMultinodeRow`, which our rows follow)
# requires both; its aggregator at 843c6254 predates that contract and writes neither. Our `num_gpus` is the
# GPUs its aggregator divides the throughput by (num_prefill_gpu + num_decode_gpu), checked below.
ONLY_OURS = {"result_schema_version", "num_gpus"}
# The fields that make the deployment's shape and identity: each must be present in both rows, and equal.
SHAPE = ("is_multinode", "disagg", "conc", "tp", "ep", "dp_attention",
         "prefill_num_workers", "prefill_tp", "prefill_pp", "prefill_dcp_size", "prefill_pcp_size", "prefill_ep",
         "prefill_dp_attention", "num_prefill_gpu",
         "decode_num_workers", "decode_tp", "decode_pp", "decode_dcp_size", "decode_pcp_size", "decode_ep",
         "decode_dp_attention", "num_decode_gpu",
         "router", "kv_p2p_transfer", "kv_offloading", "kv_offload_backend", "allocated_cpu_dram_gb",
         "kv_cache_pool_tokens", "recipe_fingerprint", "hw", "image", "model", "infmax_model_prefix", "framework",
         "precision", "spec_decoding", "scenario_type", "num_requests_total", "num_requests_successful")


def _ix_path() -> Path:
    (path,) = sorted((MN / "artifacts").rglob("*.json"))
    return path


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def test_the_artifact_is_laid_out_as_inferencex_uploads_a_multinode_agentic_result() -> None:
    """`benchmark-multinode-tmpl.yml` uploads `bmk_agentic_<RESULT_FILENAME>/<RESULT_FILENAME>_conc<N>.json`:
    `agentic_srt.sh` appends the concurrency to the workflow's RESULT_FILENAME."""
    path = _ix_path()
    base = path.parent.name.removeprefix("bmk_agentic_")
    assert path.name == f"{base}_conc4.json"
    assert base == ("disagg-gb300-1p1d-tp4-tp4-sim_bf16_sglang_prefill-tp4-pp1-dcp1-pcp1-ep1-dpfalse-nw1_"
                    "decode-tp4-pp1-dcp1-pcp1-ep1-dpfalse-nw1_disagg-true_spec-none_conc4_sim-local_recipe-"
                    + FP[:16])


def test_inferencex_and_our_multinode_rows_of_the_same_files_read_the_same() -> None:
    """Through the report's loading: one arm (the disaggregated shape and the recipe), the same numbers."""
    (ix,) = load_results([MN / "artifacts"])
    (ours,) = load_results([OURS])
    assert ix.arm == ours.arm == Arm("none", "none", "false", "disagg 1p1d tp4/tp4", FP)
    assert (ix.conc, ix.tp, ix.simulated) == (ours.conc, ours.tp, ours.simulated) == (4, 8, True)
    assert ours.num_gpus == 8 and ix.num_gpus is None   # InferenceX's row carries the roles' GPUs only
    assert (ix.num_requests_total, ix.num_requests_successful) == (ours.num_requests_total,
                                                                    ours.num_requests_successful) == (35, 30)
    for name in ("total_tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu"):
        assert getattr(ix, name) == pytest.approx(getattr(ours, name), rel=1e-6, abs=1e-5)
    compared = 0
    for metric in ("ttft", "e2el", "itl", "intvty", "e2e_norm_intvty"):
        for stat in ("mean", "p50", "p75", "p90", "p95", "std"):
            a, b = ix.stat(metric, stat), ours.stat(metric, stat)
            assert a is not None and b is not None, (metric, stat)
            assert a == pytest.approx(b, rel=1e-6, abs=1e-5), (metric, stat)   # InferenceX rounds to 5 decimals
            compared += 1
    assert compared == 30


def test_the_raw_rows_differ_only_in_the_fields_only_we_write() -> None:
    ix = json.loads(_ix_path().read_text())
    (ours_path,) = sorted(OURS.glob("bmk_agentic_*.json"))
    ours = json.loads(ours_path.read_text())
    for key in SHAPE:
        assert key in ix and key in ours, key
        assert ix[key] == ours[key], (key, ix[key], ours[key])
    assert (ours["is_multinode"], ours["disagg"], ours["kv_p2p_transfer"]) == (True, True, "nixl")
    assert ours["router"] == {"name": "sglang-router", "version": "0.3.2"}
    # the pool of both workers, prefill and decode, as InferenceX sums a multi-node run's worker logs
    assert ours["kv_cache_pool_tokens"] == 2 * 18945312 == ours["server_metrics"]["kv_cache"]["gpu_total_tokens"]
    assert ours["num_gpus"] == ix["num_prefill_gpu"] + ix["num_decode_gpu"] == 8
    assert ix["server_metrics"]["present"] is True   # AIPerf scraped both workers' /metrics
    a, b = _flat(ix), _flat(ours)
    differ = {k for k in a.keys() | b.keys() if a.get(k, "<absent>") != b.get(k, "<absent>")}
    assert differ == ONLY_OURS and not ONLY_OURS & a.keys()
    assert len(a) > 150   # every request and server metric compared, field by field
    check_contract(ours)   # InferenceX's AgentXMultinodeRow
