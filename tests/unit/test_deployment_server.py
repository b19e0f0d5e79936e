"""A deployment's members, nodes and router readiness, as pure functions over a plan."""

from __future__ import annotations

from pathlib import Path

from harness.point.servers.deployment_nodes import Node, fill, local_nodes, node_address, symbol_index
from harness.point.servers.deployment_server import expected_workers, members, router_workers_problem
from harness.recipe.points import load_plans

FIXTURES = Path(__file__).parents[1] / "fixtures" / "recipes"


def _plan(name: str):  # type: ignore[no-untyped-def]
    _, plans = load_plans(FIXTURES / name)
    assert plans[0].deployment is not None
    return plans[0].deployment


def test_every_worker_node_then_the_router_with_the_nodes_addresses_filled_in() -> None:
    dep = _plan("disagg-sim-4node.yaml")   # one prefill worker over two nodes, two one-node decode workers
    nodes = [Node(i, f"n{i + 1}", f"127.0.1.{i + 1}") for i in range(4)]
    out = members(dep, nodes, "harness-launch-x")
    assert [(m.label, m.node.name, m.url) for m in out] == [
        ("prefill_w0", "n1", "http://127.0.1.1:31100"), ("prefill_w0_n1", "n2", None),
        ("decode_w0", "n3", "http://127.0.1.3:31200"), ("decode_w1", "n4", "http://127.0.1.4:31300"),
        ("router", "n1", "http://127.0.1.1:31000")]
    follower = out[1].argv
    assert follower[follower.index("--dist-init-addr") + 1] == "127.0.1.1:31102"
    assert follower[follower.index("--node-rank") + 1] == "1" and follower[-2:] == ["--weight-version",
                                                                                     "harness-launch-x"]
    assert "{node" not in " ".join(a for m in out for a in m.argv)
    assert out[-1].argv[out[-1].argv.index("--prefill") + 1] == "http://127.0.1.1:31100"


def test_the_router_is_ready_when_it_lists_every_expected_worker_healthy() -> None:
    dep = _plan("disagg-sim-4node.yaml")
    want = expected_workers(dep, dp_aware=False)
    assert want == {"prefill_count": 1, "decode_count": 2}
    stats = {"prefill_count": 1, "decode_count": 2, "regular_count": 0}
    assert router_workers_problem({"workers": [], "stats": stats}, want) is None
    assert router_workers_problem({"workers": [], "stats": {**stats, "decode_count": 1}}, want) == \
        "/workers counts {'prefill_count': 1, 'decode_count': 1, 'regular_count': 0}, expected " \
        "{'prefill_count': 1, 'decode_count': 2, 'regular_count': 0}"
    sick = {"workers": [{"url": "http://a", "is_healthy": False}], "stats": stats}
    assert router_workers_problem(sick, want) == "unhealthy workers: http://a"
    assert router_workers_problem({"error": "x"}, want) == '/workers gave no stats: {"error": "x"}'


def test_a_dp_aware_router_lists_each_dp_rank_as_a_worker() -> None:
    _, plans = load_plans(Path(__file__).parents[2] / "recipes" / "examples" / "dpa-smg-affinity-sim.yaml")
    dep = plans[0].deployment
    assert dep is not None
    assert expected_workers(dep, dp_aware=True) == {"regular_count": 4}
    assert expected_workers(dep, dp_aware=False) == {"regular_count": 1}


def test_node_symbols_and_addresses() -> None:
    assert symbol_index("{node12}") == 12
    assert fill("http://{node1}:80", local_nodes(2)) == "http://127.0.0.1:80"
    line = "NodeName=n2 Arch=x86_64 CoresPerSocket=1 NodeAddr=127.0.1.2 NodeHostName=n2"
    assert node_address(line, "n2") == "127.0.1.2"
    assert node_address("NodeName=gpu7 NodeAddr=(null)", "gpu7") == "gpu7"


def test_set_changes_a_deployment_like_any_recipe_key() -> None:
    _, plans = load_plans(Path(__file__).parents[2] / "recipes" / "examples" / "disagg-gb300-1p1d-tp4-tp4-sim.yaml",
                          ["c4"], ["deployment.ports.base=34000", "deployment.decode.workers=2"])
    dep = plans[0].deployment
    assert dep is not None and dep.router.port == 34000 and dep.nodes == 3
    assert [w.url for w in dep.roles[1].worker_plans] == ["http://{node1}:34200", "http://{node2}:34300"]
