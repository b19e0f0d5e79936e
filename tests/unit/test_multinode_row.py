"""A deployment's published row as InferenceX's multi-node aggregator writes it: the KV pool summed over every
worker's log (prefill and decode alike, also when the sweep reused the deployment), the KV transfer engine of a
prefill/decode layout, and an aggregated layout's decode fields."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from harness.point.record import inferencex_row as ixr
from harness.point.record.multinode_row import kv_p2p_transfer, multinode_row
from harness.point.record.result import build_point_result
from harness.point.servers.server_logs import worker_logs
from harness.recipe.load import expand_points, parse_recipe_text
from harness.recipe.plan import PointPlan, build_plan
from harness.recipe.points import load_plans
from harness.recipe.thresholds import Thresholds
from tests.inferencex_contract import check_contract

ROOT = Path(__file__).resolve().parents[2]
ONE_P_ONE_D = ROOT / "recipes" / "examples" / "disagg-gb300-1p1d-tp4-tp4-sim.yaml"
TWELVE_P_FOUR_D = ROOT / "tests" / "fixtures" / "recipes" / "disagg-gb300-12p4d.yaml"
RECORDS = ROOT / "tests" / "fixtures" / "results" / "sim-run" / "quickstart-sim" / "conc4" / "aiperf"
POOL = "[2026-01-01 00:00:00 TP0] max_total_num_tokens={}, chunked_prefill_size=8192, max_running_requests=64\n"


def _plan(path: Path, change: Any = None) -> PointPlan:
    raw = yaml.safe_load(path.read_text())
    if change is not None:
        change(raw)
    recipe = parse_recipe_text(yaml.safe_dump(raw, sort_keys=False), path.name)
    return build_plan(recipe, expand_points(recipe)[0], str(path))


def _row(pdir: Path, deployment_run: dict[str, Any] | None = None) -> dict[str, Any]:
    plan = load_plans(ONE_P_ONE_D, ["c4"])[1][0]
    shutil.copytree(RECORDS, pdir / "aiperf")   # a simulator run's real AIPerf records
    result, _ = build_point_result(
        plan, overrides=(), labels={}, thresholds=Thresholds(), pdir=pdir, artifact_dir=pdir / "aiperf",
        client_run=None, metrics_before=None, metrics_after=None, state="completed", reason=None, corpus={},
        deployment_run=deployment_run)
    assert result is not None
    row: dict[str, Any] = json.loads((pdir / result["row"]).read_text())
    return row


def test_the_kv_pool_sums_every_workers_log_as_inferencex_sums_its_workers_logs(tmp_path: Path) -> None:
    """InferenceX's multi-node aggregator sums the pools of every worker log it finds (its own test:
    `test_processor_reads_multinode_gpu_kv_cache_capacity_from_worker_logs`, prefill 11.5M + decode 7M)."""
    pdir = tmp_path / "c4"
    pdir.mkdir()
    (pdir / "server_prefill_w0.log").write_text(POOL.format(100))
    (pdir / "server_decode_w0.log").write_text(POOL.format(300))
    (pdir / "router.log").write_text(POOL.format(5000))   # not a worker: never read
    row = _row(pdir)
    assert row["kv_cache_pool_tokens"] == 400 == row["server_metrics"]["kv_cache"]["gpu_total_tokens"]
    check_contract(row)


def test_a_reused_deployments_pool_comes_from_where_it_was_started(tmp_path: Path) -> None:
    first = tmp_path / "c2"
    first.mkdir()
    (first / "server_prefill_w0.log").write_text(POOL.format(100))
    (first / "server_decode_w0.log").write_text(POOL.format(300))
    row = _row(tmp_path / "c4", {"reused": True, "started_in": str(first)})
    assert row["kv_cache_pool_tokens"] == 400


def test_worker_logs_are_every_worker_node_in_node_order() -> None:
    dep = _plan(TWELVE_P_FOUR_D).deployment
    assert dep is not None
    names = [p.name for p in worker_logs(dep, Path("d"))]
    assert names[:3] == ["server_prefill_w0.log", "server_prefill_w0_n1.log", "server_prefill_w1.log"]
    assert names[-4:] == ["server_decode_w0.log", "server_decode_w0_n1.log", "server_decode_w0_n2.log",
                          "server_decode_w0_n3.log"]
    assert len(names) == 6 * 2 + 4


def test_a_prefill_decode_row_names_its_kv_transfer_engine() -> None:
    """InferenceX's configs declare `kv-p2p-transfer` for every `disagg: true` configuration (configs/CONFIGS.md
    at 843c6254); its aggregator writes it as `kv_p2p_transfer`."""
    dep = _plan(ONE_P_ONE_D).deployment
    assert dep is not None and kv_p2p_transfer(dep) == "nixl"
    unnamed = _plan(ONE_P_ONE_D, lambda r: r["deployment"].pop("transfer_backend")).deployment
    assert unnamed is not None and kv_p2p_transfer(unnamed, "0.5.23") == "mooncake"   # SGLang's default


def _aggregated(raw: dict[str, Any]) -> None:
    dep = raw["deployment"]
    for key in ("prefill", "decode", "transfer_backend", "bootstrap_port"):
        dep.pop(key)
    dep["aggregated"] = {"workers": 2, "nodes_per_worker": 2, "parallelism": {"tp": 8}}
    dep["router"] = {"kind": "sglang-router", "policy": "cache_aware"}
    raw["points"] = {"c8": {}}


def test_an_aggregated_multinode_row_has_inferencex_decode_fields_and_passes_its_contract() -> None:
    """InferenceX's aggregator, with no decode GPUs: decode tp and ep 0, decode pp, dcp and pcp 1 (its contract
    wants them above 0); no KV moves between workers, so no `kv_p2p_transfer`."""
    dep = _plan(TWELVE_P_FOUR_D, _aggregated).deployment
    assert dep is not None and dep.layout == "aggregated" and dep.nodes == 4
    identity = {"hw": "gb300", "conc": 8, "image": "lmsysorg/sglang:v0.5.23-cu130", "recipe_fingerprint": "a" * 64,
                "model": "m", "infmax_model_prefix": "m", "framework": "sglang", "precision": "fp4",
                "spec_decoding": "none", "tp": 8, "ep": 1, "pp": 1, "dcp_size": 1, "pcp_size": 1,
                "dp_attention": False, "kv_offloading": "none", "kv_offload_backend": None,
                "allocated_cpu_dram_gb": 0, "num_gpus": 16}
    records = json.loads("[" + ",".join((RECORDS / "profile_export.jsonl").read_text().split("\n")[:-1]) + "]")
    row = multinode_row(ixr.build_row(identity=identity, raw_records=records, summary=None,
                                      server_log=[POOL.format(100), POOL.format(100)], counters=None, power=None),
                        dep)
    check_contract(row)
    assert {k: row[k] for k in row if k.startswith("decode_") or k == "num_decode_gpu"} == {
        "decode_num_workers": 0, "decode_tp": 0, "decode_pp": 1, "decode_dcp_size": 1, "decode_pcp_size": 1,
        "decode_ep": 0, "decode_dp_attention": "false", "num_decode_gpu": 0}
    assert (row["disagg"], row["num_prefill_gpu"], row["tp"], row["kv_cache_pool_tokens"]) == (False, 16, 8, 200)
    assert "kv_p2p_transfer" not in row
