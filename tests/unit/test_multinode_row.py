"""A deployment's published row as InferenceX's multi-node aggregator writes it: the KV pool summed over every
worker's log (prefill and decode alike, also when the sweep reused the deployment)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from harness.point.result import build_point_result
from harness.point.server_logs import worker_logs
from harness.point.validity import Thresholds
from harness.recipe.load import expand_points, parse_recipe_text
from harness.recipe.plan import PointPlan, build_plan
from harness.recipe.points import load_plans
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
