"""Deployments: the recipe's `deployment:` section, its rules, and the exact per-node commands of its plans."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli import main as cli
from harness.errors import UserError
from harness.point.record.multinode_row import multinode_fields
from harness.recipe.load import parse_recipe_text
from harness.recipe.plan import PointPlan, canonical_json
from harness.recipe.points import load_plans

ROOT = Path(__file__).resolve().parents[2]
ONE_P_ONE_D = ROOT / "recipes" / "examples" / "disagg-gb300-1p1d-tp4-tp4-sim.yaml"
TWELVE_P_FOUR_D = ROOT / "tests" / "fixtures" / "recipes" / "disagg-gb300-12p4d.yaml"
SHIPPED = ROOT / "tests" / "fixtures" / "recipes" / "shipped-plans.json"


def by_name(path: Path) -> dict[str, PointPlan]:
    return {p.name: p for p in load_plans(path)[1]}


def test_shipped_recipes_plan_exactly_as_pinned() -> None:
    """Recipes without a deployment section keep their fingerprints and their plans, byte for byte."""
    pinned = json.loads(SHIPPED.read_text())["recipes"]
    for rel, points in pinned.items():
        for plan in load_plans(ROOT / rel)[1]:
            public = plan.public()
            public["client"] = {k: v for k, v in public["client"].items() if k not in ("traces", "tokenizer")}
            assert "deployment" not in public
            assert plan.deployment is None
            assert points[plan.name] == {"fingerprint": plan.fingerprint,
                                         "plan_sha256": hashlib.sha256(canonical_json(public).encode()).hexdigest()}
        assert {p.name for p in load_plans(ROOT / rel)[1]} == set(points)


def test_one_prefill_one_decode_on_gb300() -> None:
    plan = by_name(ONE_P_ONE_D)["c16"]
    dep = plan.deployment
    assert dep is not None and dep.layout == "disagg" and dep.nodes == 2 and dep.num_gpus == 8
    assert (plan.resources.nodes, plan.resources.num_gpus, plan.resources.gpus_per_node) == (2, 8, 4)
    prefill, decode = dep.roles
    [p_node] = prefill.worker_plans[0].nodes
    assert p_node.node == "{node0}" and p_node.argv == [
        "python3", "-m", "harness.sim", "--model-path", "demo/agentic-coder-8b", "--served-model-name",
        "agentic-coder", "--tp-size", "4", "--mem-fraction-static", "0.85", "--stream-interval", "1",
        "--enable-metrics", "--chunked-prefill-size", "16384", "--disaggregation-mode", "prefill",
        "--disaggregation-transfer-backend", "nixl", "--disaggregation-bootstrap-port", "30101", "--nccl-port",
        "30102", "--host", "{node0}", "--port", "30100", "--sim-profile", "demo", "--log-level", "debug"]
    [d_node] = decode.worker_plans[0].nodes
    assert d_node.node == "{node1}" and d_node.argv == [
        "python3", "-m", "harness.sim", "--model-path", "demo/agentic-coder-8b", "--served-model-name",
        "agentic-coder", "--tp-size", "4", "--mem-fraction-static", "0.85", "--stream-interval", "1",
        "--enable-metrics", "--max-running-requests", "128", "--disaggregation-mode", "decode",
        "--disaggregation-transfer-backend", "nixl", "--nccl-port", "30202", "--host", "{node1}", "--port", "30200",
        "--sim-profile", "demo", "--log-level", "debug"]   # routed lines, for stickiness (SIM_ROUTING_LOG)
    assert decode.env == prefill.env == {"HARNESS_SIM_SGLANG_VERSION": "0.5.23"}
    assert dep.router.argv == plan.server.argv == [
        "python3", "-m", "sglang_router.launch_router", "--pd-disaggregation", "--prefill", "http://{node0}:30100",
        "30101", "--decode", "http://{node1}:30200", "--policy", "round_robin", "--host", "{node0}", "--port", "30000",
        "--prometheus-host", "{node0}", "--prometheus-port", "30001"]
    c4 = by_name(ONE_P_ONE_D)["c4"]
    assert c4.deployment is not None and "--max-running-requests" in c4.deployment.roles[1].worker_plans[0].nodes[0].argv
    assert c4.fingerprint != plan.fingerprint


def test_twelve_prefill_four_decode_nodes_with_workers_spanning_nodes() -> None:
    plans = by_name(TWELVE_P_FOUR_D)
    dep = plans["c512"].deployment
    assert dep is not None and dep.nodes == 16 and dep.num_gpus == 64
    prefill, decode = dep.roles
    assert (prefill.workers, prefill.nodes_per_worker, prefill.gpus_per_worker) == (6, 2, 8)
    assert (decode.workers, decode.nodes_per_worker, decode.gpus_per_worker) == (1, 4, 16)
    w5 = prefill.worker_plans[5]
    assert [n.node for n in w5.nodes] == ["{node10}", "{node11}"]
    assert (w5.url, w5.bootstrap_port, w5.rendezvous_port) == ("http://{node10}:8600", 30001, 8602)
    for rank, node in enumerate(w5.nodes):
        argv = node.argv
        assert argv[argv.index("--dist-init-addr"):argv.index("--dist-init-addr") + 6] == [
            "--dist-init-addr", "{node10}:8602", "--nnodes", "2", "--node-rank", str(rank)]
        assert argv[argv.index("--host") + 1] == "{node10}" and argv[argv.index("--port") + 1] == "8600"
        assert "--enable-hierarchical-cache" in argv and argv[argv.index("--hicache-size") + 1] == "64"
        assert argv[argv.index("--max-running-requests") + 1] == "64"      # c512's change to prefill
        assert argv[argv.index("--disaggregation-bootstrap-port") + 1] == "30001"
        assert "--nccl-port" not in argv
    nodes = decode.worker_plans[0].nodes
    assert [(n.node, n.node_rank) for n in nodes] == [("{node12}", 0), ("{node13}", 1), ("{node14}", 2),
                                                      ("{node15}", 3)]
    argv = nodes[3].argv
    assert argv[argv.index("--tp-size"):argv.index("--tp-size") + 6] == [
        "--tp-size", "16", "--ep-size", "16", "--attn-dp-size", "16"]
    assert "--enable-hierarchical-cache" not in argv and "--disable-radix-cache" in argv
    assert "--disaggregation-bootstrap-port" not in argv and "--max-running-requests" not in argv
    assert decode.env == {"SGLANG_TIMEOUT_KEEP_ALIVE": "900", "SGLANG_DECODE_ONLY": "1"}
    router = dep.router.argv
    assert router[:5] == ["python3", "-m", "smg.launch_router", "--pd-disaggregation", "--prefill"]
    assert router.count("--prefill") == 6 and router.count("--decode") == 1
    assert router[-12:] == ["--policy", "consistent_hashing", "--host", "{node0}", "--port", "8000",
                            "--prometheus-host", "{node0}", "--prometheus-port", "8001",
                            "--request-id-headers", "x-correlation-id"]
    assert "--max-running-requests" not in plans["c256"].deployment.roles[0].worker_plans[0].nodes[0].argv  # type: ignore[union-attr]


def test_multinode_row_fields() -> None:
    dep = by_name(TWELVE_P_FOUR_D)["c256"].deployment
    assert dep is not None
    assert multinode_fields(dep) == {
        "is_multinode": True, "disagg": True,
        "prefill_num_workers": 6, "prefill_tp": 8, "prefill_pp": 1, "prefill_dcp_size": 1, "prefill_pcp_size": 1,
        "prefill_ep": 8, "prefill_dp_attention": "false", "num_prefill_gpu": 48,
        "decode_num_workers": 1, "decode_tp": 16, "decode_pp": 1, "decode_dcp_size": 1, "decode_pcp_size": 1,
        "decode_ep": 16, "decode_dp_attention": "true", "num_decode_gpu": 16,
        "num_gpus": 64, "tp": 24, "ep": 16, "dp_attention": "true"}


def _raw() -> dict[str, Any]:
    raw = yaml.safe_load(TWELVE_P_FOUR_D.read_text())
    assert isinstance(raw, dict)
    return raw


def _error(raw: dict[str, Any]) -> str:
    with pytest.raises(UserError) as exc:
        recipe = parse_recipe_text(yaml.safe_dump(raw, sort_keys=False), "d.yaml")
        from harness.recipe.load import expand_points
        from harness.recipe.plan import build_plan

        for point in expand_points(recipe):
            build_plan(recipe, point, "d.yaml")
    return str(exc.value)


def test_aggregated_workers_behind_the_router() -> None:
    raw = _raw()
    dep = raw["deployment"]
    for key in ("prefill", "decode", "transfer_backend", "bootstrap_port"):
        dep.pop(key)
    dep["aggregated"] = {"workers": 2, "parallelism": {"tp": 4}}
    dep["router"] = {"kind": "sglang-router", "policy": "cache_aware"}
    raw["points"] = {"c8": {"deployment": {"aggregated": {"args": {"max-running-requests": 8}}}}}
    recipe = parse_recipe_text(yaml.safe_dump(raw, sort_keys=False), "d.yaml")
    from harness.recipe.load import expand_points
    from harness.recipe.plan import build_plan

    plan = build_plan(recipe, expand_points(recipe)[0], "d.yaml")
    assert plan.deployment is not None and plan.deployment.layout == "aggregated"
    argv = plan.deployment.roles[0].worker_plans[1].nodes[0].argv
    assert "--disaggregation-mode" not in argv and argv[argv.index("--nccl-port") + 1] == "8202"
    assert plan.server.argv == ["python3", "-m", "sglang_router.launch_router", "--worker-urls",
                                "http://{node0}:8100", "http://{node1}:8200", "--policy", "cache_aware",
                                "--host", "{node0}", "--port", "8000", "--prometheus-host", "{node0}",
                                "--prometheus-port", "8001"]
    assert multinode_fields(plan.deployment)["decode_num_workers"] == 0
    assert multinode_fields(plan.deployment)["disagg"] is False


def test_the_router_sends_the_workers_api_key() -> None:
    """A `--dp-aware` router reads every worker's /server_info, which SGLang guards with the workers' key."""
    raw = _raw()
    raw["server"]["args"]["api-key"] = "sk-both-roles"
    recipe = parse_recipe_text(yaml.safe_dump(raw, sort_keys=False), "d.yaml")
    from harness.recipe.load import expand_points
    from harness.recipe.plan import build_plan

    plan = build_plan(recipe, expand_points(recipe)[0], "d.yaml")
    assert plan.deployment is not None
    router, worker = plan.deployment.router, plan.deployment.roles[0].worker_plans[0].nodes[0]
    # held apart from every command (nothing parses it back out), joined only where each process starts
    assert "--api-key" not in router.argv and "sk-both-roles" not in json.dumps([router.argv, worker.argv])
    assert router.secret_args == worker.secret_args == {"--api-key": "sk-both-roles"}
    assert router.launch_argv()[-2:] == worker.launch_argv()[-2:] == ["--api-key", "sk-both-roles"]
    assert plan.deployment.api_key == plan.server.api_key == "sk-both-roles"
    raw["server"]["args"].pop("api-key")
    recipe = parse_recipe_text(yaml.safe_dump(raw, sort_keys=False), "d.yaml")
    plan = build_plan(recipe, expand_points(recipe)[0], "d.yaml")
    assert plan.deployment is not None and "--api-key" not in plan.deployment.router.launch_argv()
    assert plan.deployment.api_key is None


@pytest.mark.parametrize(("change", "expected"), [
    (lambda r: r["deployment"]["prefill"]["parallelism"].update(tp=6, ep=1),
     "d.yaml:30: deployment.prefill.parallelism.tp: tp 6 is not a multiple of hardware.gpus_per_node 4"),
    (lambda r: r["deployment"]["prefill"].update(nodes_per_worker=1),
     "deployment.prefill.parallelism.tp: tp 8 x pp 1 = 8 GPUs, more than hardware.gpus_per_node 4"),
    (lambda r: r["deployment"].pop("decode"),
     "deployment.prefill: a prefill/decode layout needs both roles: prefill is given, decode is missing"),
    (lambda r: r["deployment"]["router"].update(kind="sglang-router"),
     "deployment.router.policy: 'consistent_hashing' is not a policy of sglang-router 0.3.2 (its policies: "
     "random, round_robin, cache_aware, power_of_two, manual); it is a policy of smg"),
    (lambda r: r["deployment"]["router"].update(policy="sticky"), "deployment.router.policy: Input should be"),
    (lambda r: r["deployment"].update(bootstrap_port=8000),
     "deployment.bootstrap_port: the bootstrap port of prefill worker 0 and the router would both use port 8000 "
     "on {node0}"),
    (lambda r: r["deployment"].update(bootstrap_port=8102),
     "the rendezvous port of prefill worker 0 and the bootstrap port"),
    (lambda r: r["deployment"]["prefill"].update(args={"disaggregation-bootstrap-port": 9000}),
     "deployment.prefill.args.disaggregation-bootstrap-port: --disaggregation-bootstrap-port comes from "
     "deployment.bootstrap_port"),
    (lambda r: r["deployment"].update(transfer_backend="carrier-pigeon"),
     "deployment.transfer_backend: 'carrier-pigeon' is not a transfer backend of SGLang 0.5.23"),
    (lambda r: r["deployment"]["decode"].pop("kv_offload"),
     "points.c256.deployment.decode.args: SGLang 0.5.23 rejects this at startup (arg_groups/kv_cache_hook.py)"),
    (lambda r: r["points"]["c256"].update(deployment={"aggregated": {"args": {"max-running-requests": 1}}}),
     "points.c256.deployment.aggregated: the deployment has no aggregated role"),
    (lambda r: r["deployment"]["decode"].update(args={"tp-size": 8}),
     "deployment.decode.args.tp-size: --tp-size comes from parallelism.tp"),
    (lambda r: r["deployment"]["decode"].update(args={"api-key": "sk-decode-only"}),
     "deployment: the roles' api-key differ (or one role has none); the router sends one key to every worker"),
])
def test_deployment_mistakes_are_one_line(change: Any, expected: str) -> None:
    raw = copy.deepcopy(_raw())
    change(raw)
    message = _error(raw)
    assert expected in message and "\n" not in message


def test_point_role_changes_follow_extends_and_null_removes() -> None:
    raw = _raw()
    raw["deployment"]["prefill"]["args"] = {"max-running-requests": 32}
    raw["points"]["c1024"] = {"extends": "c512", "deployment": {"prefill": {"args": {"max-running-requests": None}}}}
    recipe = parse_recipe_text(yaml.safe_dump(raw, sort_keys=False), "d.yaml")
    from harness.recipe.load import expand_points
    from harness.recipe.plan import build_plan

    got = {}
    for point in expand_points(recipe):
        dep = build_plan(recipe, point, "d.yaml").deployment
        assert dep is not None
        argv = dep.roles[0].worker_plans[0].nodes[0].argv
        got[point.name] = argv[argv.index("--max-running-requests") + 1] if "--max-running-requests" in argv else None
    assert got == {"c256": "32", "c512": "64", "c1024": None}


def test_plan_prints_and_json_includes_the_deployment(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["plan", str(ONE_P_ONE_D), "--point", "4"]) == 0
    out = capsys.readouterr().out
    assert "prefill worker 0: http://{node0}:30100, bootstrap port 30101" in out
    assert "node {node1} (rank 0):" in out and "router (sglang-router) on {node0}" in out
    assert cli(["plan", str(ONE_P_ONE_D), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    dep = doc["points"][0]["deployment"]
    assert dep["nodes"] == 2 and [r["role"] for r in dep["roles"]] == ["prefill", "decode"]
    assert dep["roles"][0]["worker_plans"][0]["nodes"][0]["argv"][:3] == ["python3", "-m", "harness.sim"]


def test_a_deployment_runs_only_with_a_launcher_that_places_its_nodes(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["run", str(ONE_P_ONE_D), "--point", "4"], ["sweep", str(ONE_P_ONE_D)]):
        assert cli([*command, "--out", str(tmp_path), "--launcher", "docker", "--set", "engine=sglang"]) == 2
        assert "--launcher docker cannot place a deployment's processes" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())   # refused before anything was written


def test_the_multinode_fields_have_the_types_of_inferencex_s_row_contract() -> None:
    """Checked against the JSON Schema InferenceX's own exporter wrote (tests/fixtures/inferencex-contract)."""
    import json

    schema = json.loads((ROOT / "tests" / "fixtures" / "inferencex-contract" / "upstream" /
                         "agentx_row.schema.json").read_text())["$defs"]["AgentXMultinodeRow"]["properties"]
    kinds = {"boolean": bool, "integer": int, "string": str}
    for path in (ROOT / "recipes" / "examples" / "disagg-gb300-1p1d-tp4-tp4-sim.yaml",
                 ROOT / "tests" / "fixtures" / "recipes" / "disagg-gb300-12p4d.yaml"):
        _, plans = load_plans(path)
        for name, value in multinode_fields(plans[0].deployment).items():
            spec = schema[name]
            assert isinstance(value, kinds[spec["type"]]) and value in spec.get("enum", [value]), (path.name, name)
