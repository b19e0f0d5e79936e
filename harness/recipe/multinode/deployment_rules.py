"""The rules a recipe's `deployment:` section must follow, checked when the recipe is loaded.

`deployment_problems(recipe, table)` is pure: each problem is (key path, what was expected), the loader turns
the first into a `file:line: key: message` error. Checked: the roles form a layout (aggregated alone, or both
prefill and decode); each worker fits its nodes (one node: tp x pp x pcp within the node's GPUs; spanning nodes:
tp a multiple of the GPUs per node and the worker filling its nodes); the router's policy exists in that router;
the transfer backend is one the pinned SGLang offers; no two ports clash on a node and all are valid ports;
points change only roles that exist.
"""

from __future__ import annotations

from collections.abc import Iterator

from harness.recipe.multinode import router
from harness.recipe.multinode.deployment import gpus_per_worker, role_parallelism, slots
from harness.recipe.multinode.deployment_schema import Deployment
from harness.recipe.schema import Recipe
from harness.recipe.server_flags import flags
from harness.recipe.server_flags.flag import Flag

Problem = tuple[tuple[str, ...], str]


def deployment_problems(recipe: Recipe, table: flags.FlagTable) -> list[Problem]:
    """Every problem of the recipe's deployment section, in the order of the file (empty without one)."""
    dep = recipe.deployment
    if dep is None:
        return [(("points", name, "deployment"), "this recipe has no deployment section; add one or remove this")
                for name, spec in recipe.points.items() if spec.deployment is not None]
    return [*_layout(dep), *_workers(recipe, dep, table), *_router(dep), *_ports(dep), *_point_roles(recipe, dep)]


def _layout(dep: Deployment) -> Iterator[Problem]:
    if dep.aggregated is not None and (dep.prefill is not None or dep.decode is not None):
        yield ("deployment", "aggregated"), "aggregated workers do not mix with prefill/decode roles: give one layout"
    elif dep.aggregated is None and (dep.prefill is None) != (dep.decode is None):
        have, missing = ("prefill", "decode") if dep.decode is None else ("decode", "prefill")
        yield ("deployment", have), (f"a prefill/decode layout needs both roles: {have} is given, {missing} is "
                                     "missing (or use aggregated)")
    elif not dep.roles():
        yield ("deployment",), "name the workers: aggregated, or prefill and decode"
    if dep.aggregated is not None:
        for key in ("transfer_backend", "bootstrap_port"):
            if getattr(dep, key) is not None:
                yield ("deployment", key), "only for prefill/decode layouts"


def _workers(recipe: Recipe, dep: Deployment, table: flags.FlagTable) -> Iterator[Problem]:
    gpn = recipe.hardware.gpus_per_node
    for role, spec in dep.roles():
        par = role_parallelism(recipe, spec)
        gpus, nodes = gpus_per_worker(par), spec.nodes_per_worker
        at = ("deployment", role, "parallelism", "tp") if spec.parallelism is not None else ("parallelism", "tp")
        shape = f"tp {par.tp} x pp {par.pp}" + (f" x pcp {par.pcp}" if par.pcp > 1 else "")
        if nodes == 1 and gpus > gpn:
            yield at, (f"{shape} = {gpus} GPUs, more than hardware.gpus_per_node {gpn} (set "
                       f"deployment.{role}.nodes_per_worker to span nodes)")
        elif nodes > 1 and par.tp % gpn:
            yield at, (f"tp {par.tp} is not a multiple of hardware.gpus_per_node {gpn}: a {role} worker spans "
                       f"{nodes} nodes and splits tp across them")
        elif nodes > 1 and gpus != nodes * gpn:
            yield at, (f"{shape} = {gpus} GPUs, but a {role} worker spanning {nodes} nodes of {gpn} GPUs fills "
                       f"{nodes * gpn}")
        for key, size, flag in (("dcp", par.dcp, "--dcp-size"), ("pcp", par.pcp, "--pcp-size")):
            if size > 1 and table.get(flag) is None:
                yield ("deployment", role, "parallelism", key), f"SGLang {table.version} has no {flag} flag"
    if dep.transfer_backend is not None:
        choices = (table.get("--disaggregation-transfer-backend") or _no_flag()).choices or ()
        if dep.transfer_backend not in choices:
            yield ("deployment", "transfer_backend"), (f"{dep.transfer_backend!r} is not a transfer backend of "
                                                       f"SGLang {table.version} ({', '.join(map(str, choices))})")


def _no_flag() -> Flag:
    return Flag(dest="", name="", kind="value", action="")


def _router(dep: Deployment) -> Iterator[Problem]:
    problem = router.policy_problem(dep.router.kind, dep.router.policy)
    if problem is not None:
        yield ("deployment", "router", "policy"), problem
    for key in dep.router.args:
        if key.startswith("-"):
            yield ("deployment", "router", "args", key), f"write flag names without dashes: {key.lstrip('-')}"
        elif key in router.OWNED_ROUTER_FLAGS:
            yield ("deployment", "router", "args", key), (f"--{key} is rendered from the deployment "
                                                          "(router.policy, ports, the workers)")


def _ports(dep: Deployment) -> Iterator[Problem]:
    """No two listeners on one node share a port; every port is below 65536."""
    used: dict[str, dict[int, str]] = {}

    def take(node: str, port: int, what: str) -> Iterator[Problem]:
        at = ("deployment", "bootstrap_port") if "bootstrap" in what and dep.bootstrap_port else ("deployment", "ports")
        if port > 65535:
            yield at, f"{what} on {node} would be port {port}, beyond 65535 (lower ports.base or ports.stride)"
            return
        other = used.setdefault(node, {}).get(port)
        if other is not None:
            yield at, f"{what} and {other} would both use port {port} on {node}"
        used[node][port] = what

    yield from take("{node0}", dep.ports.base, "the router")
    for s in slots(dep):
        name = f"{s.role} worker {s.index}"
        yield from take(s.nodes[0], s.http_port, f"the HTTP port of {name}")
        if s.bootstrap_port is not None:
            yield from take(s.nodes[0], s.bootstrap_port, f"the bootstrap port of {name}")
        yield from take(s.nodes[0], s.rendezvous_port, f"the rendezvous port of {name}")


def _point_roles(recipe: Recipe, dep: Deployment) -> Iterator[Problem]:
    present = {role for role, _ in dep.roles()}
    for name, spec in recipe.points.items():
        if spec.deployment is None:
            continue
        for role in ("prefill", "decode", "aggregated"):
            if getattr(spec.deployment, role) is not None and role not in present:
                yield ("points", name, "deployment", role), (f"the deployment has no {role} role (roles: "
                                                             f"{', '.join(sorted(present))})")
