"""Deployment plans: what every node of a multi-worker point runs, exactly.

`plan_deployment(recipe, point, table, where)` is pure. For each role of the recipe's `deployment:` section
(prefill, decode, or aggregated) it merges the role's args and env over the point's, renders the role's
parallelism, validates the result against the pinned flag table and SGLang's post-init rules, and lays the
workers out on nodes: worker w (prefill first, then decode) owns the next `nodes_per_worker` nodes and the port
block `ports.base + ports.stride x (w + 1)` (HTTP port, bootstrap port, rendezvous port). A worker spanning
nodes runs the same command on each of its nodes with `--dist-init-addr LEADER:PORT --nnodes N --node-rank i`;
a one-node worker gets `--nccl-port` instead, so no port is picked at random at startup. The router runs on the
first node, on `ports.base`. Hosts are symbols (`{node0}`, `{node1}`, ...) that the launcher fills in.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.errors import UserError
from harness.recipe import postinit
from harness.recipe.fields import ArgValue, Parallelism
from harness.recipe.multinode import router
from harness.recipe.multinode.deployment_schema import Deployment, Role, RoleSpec
from harness.recipe.schema import Point, Recipe
from harness.recipe.server_flags import flags
from harness.recipe.server_flags.secret_args import API_KEY_FLAG, joined, split_secret_args
from harness.recipe.server_flags.server_args import (
    SERVER_MODULE,
    SIM_VERSION_ENV,
    acceptance_env,
    render_sim_flags,
    structured_args,
)

# A simulated worker logs the DP rank that served each session's turn only at SGLang's `--log-level debug`
# (`harness.sim.batching.topology.dprank`); every deployment has a router, so its simulated workers start at that level unless
# the role sets `log-level` itself, and session stickiness is measured from their logs (`point.record.stickiness`).
SIM_ROUTING_LOG = ["--log-level", "debug"]


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Slot(Frozen):
    """Where one worker runs: its nodes (leader first) and its ports."""

    role: Role
    index: int              # within its role
    nodes: list[str]        # `{nodeK}` symbols
    http_port: int
    bootstrap_port: int | None   # prefill only
    rendezvous_port: int    # `--nccl-port`, or the port of `--dist-init-addr`

    @property
    def url(self) -> str:
        return f"http://{self.nodes[0]}:{self.http_port}"


class NodeCommand(Frozen):
    node: str
    node_rank: int
    argv: list[str]                                          # without its secret flags
    secret_args: dict[str, str] = Field(default_factory=dict)  # joined only where it starts (`launch_argv`)

    def launch_argv(self) -> list[str]:
        return joined(self.argv, self.secret_args)


class WorkerPlan(Frozen):
    role: Role
    index: int
    url: str
    http_port: int
    bootstrap_port: int | None
    rendezvous_port: int
    nodes: list[NodeCommand]


class RolePlan(Frozen):
    role: Role
    workers: int
    nodes_per_worker: int
    gpus_per_worker: int
    parallelism: Parallelism
    args: dict[str, Any]         # effective dashless SGLang args of every worker of the role (ports excluded)
    env: dict[str, str]          # one environment for every node of the role
    worker_plans: list[WorkerPlan]

    @property
    def num_gpus(self) -> int:
        return self.workers * self.gpus_per_worker


class RouterPlan(Frozen):
    kind: str
    policy: str | None
    node: str
    port: int
    argv: list[str]                                          # without its secret flags
    secret_args: dict[str, str] = Field(default_factory=dict)  # joined only where it starts (`launch_argv`)

    def launch_argv(self) -> list[str]:
        return joined(self.argv, self.secret_args)

    @property
    def url(self) -> str:
        return f"http://{self.node}:{self.port}"


class DeploymentPlan(Frozen):
    layout: Literal["aggregated", "disagg"]
    roles: list[RolePlan]
    router: RouterPlan
    nodes: int
    num_gpus: int
    gpus_per_node: int

    def role(self, name: str) -> RolePlan | None:
        return next((r for r in self.roles if r.role == name), None)

    @property
    def api_key(self) -> str | None:
        """The key every worker checks (one for all roles: `worker_api_key`); None without one."""
        return self.roles[0].worker_plans[0].nodes[0].secret_args.get(API_KEY_FLAG)

    def public(self) -> dict[str, Any]:
        """The deployment as `harness plan --json` shows it."""
        return self.model_dump(mode="json")


def node_symbol(index: int) -> str:
    return f"{{node{index}}}"


def role_parallelism(recipe: Recipe, spec: RoleSpec) -> Parallelism:
    return spec.parallelism or recipe.parallelism


def gpus_per_worker(par: Parallelism) -> int:
    """GPUs of one worker: tp x pp x pcp (DP attention and dcp run inside tp)."""
    return par.tp * par.pp * par.pcp


def slots(dep: Deployment) -> list[Slot]:
    """Every worker's nodes and ports, in node order (prefill, decode, aggregated)."""
    out: list[Slot] = []
    node = 0
    for role, spec in dep.roles():
        for i in range(spec.workers):
            block = dep.ports.base + dep.ports.stride * (len(out) + 1)
            boot = (dep.bootstrap_port or block + 1) if role == "prefill" else None
            out.append(Slot(role=role, index=i, nodes=[node_symbol(n) for n in range(node, node + spec.nodes_per_worker)],
                            http_port=block, bootstrap_port=boot, rendezvous_port=block + 2))
            node += spec.nodes_per_worker
    return out


def _merge(base: dict[str, Any], *changes: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for change in changes:
        for key, value in change.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
    return out


def role_args(recipe: Recipe, point: Point, role: Role, spec: RoleSpec) -> dict[str, ArgValue]:
    """A role's effective args (dashless): the structured blocks with the role's parallelism, the point's args,
    the role's args, the point's changes to the role; then the role's disaggregation mode."""
    structured = structured_args(recipe.model_copy(update={"parallelism": role_parallelism(recipe, spec)}),
                                 spec.kv_offload or point.kv_offload)
    args = _merge({**structured, **point.args}, spec.args, point.role_args.get(role, {}))
    dep = recipe.deployment
    if role != "aggregated" and dep is not None:
        args["disaggregation-mode"] = role
        if dep.transfer_backend is not None:
            args["disaggregation-transfer-backend"] = dep.transfer_backend
    return args


def role_env(point: Point, role: Role, spec: RoleSpec) -> dict[str, str]:
    return _merge(dict(point.env), spec.env, point.role_env.get(role, {}))


def _checked(table: flags.FlagTable, args: dict[str, Any], where: str) -> dict[str, Any]:
    """Args validated against the flag table and SGLang's post-init rules; dashless canonical names."""
    checked = flags.validate_args(table, args, where)
    rejected = postinit.post_init_rejections({table.resolve(n).dest: v for n, v in checked.items()}, table.version)
    if rejected:
        rule, message = rejected[0]
        raise UserError(f"{where}: SGLang {table.version} rejects this at startup ({rule}): {message}")
    return {name[2:]: value for name, value in checked.items()}


def worker_commands(head: list[str], tail: list[str], table: flags.FlagTable, args: dict[str, Any],
                    slot: Slot) -> list[NodeCommand]:
    """One command per node of a worker: the same argv but for the node rank."""
    if slot.bootstrap_port is not None:
        args = {**args, "disaggregation-bootstrap-port": slot.bootstrap_port}
    leader, count = slot.nodes[0], len(slot.nodes)
    out = []
    for rank, node in enumerate(slot.nodes):
        dist: dict[str, Any] = ({"dist-init-addr": f"{leader}:{slot.rendezvous_port}", "nnodes": count,
                                 "node-rank": rank} if count > 1 else {"nccl-port": slot.rendezvous_port})
        public, secret = split_secret_args({**args, **dist})
        argv = [*head, *flags.render_argv(table, public), "--host", leader, "--port", str(slot.http_port), *tail]
        out.append(NodeCommand(node=node, node_rank=rank, argv=argv, secret_args=secret))
    return out


def plan_deployment(recipe: Recipe, point: Point, table: flags.FlagTable, where: str) -> DeploymentPlan:
    """The validated per-node commands of one point of a recipe with a `deployment:` section."""
    dep = recipe.deployment
    if dep is None:
        raise ValueError("plan_deployment needs a recipe with a deployment section")
    head = ["python3", "-m", SERVER_MODULE[recipe.engine]]
    tail = ["--sim-profile", recipe.sim_profile, *render_sim_flags(recipe.sim_args)] if recipe.engine == "sim" else []
    by_role: dict[str, list[Slot]] = {}
    for slot in slots(dep):
        by_role.setdefault(slot.role, []).append(slot)
    roles: list[RolePlan] = []
    for role, spec in dep.roles():
        role_where = f"{where}.deployment.{role}"
        args = _checked(table, role_args(recipe, point, role, spec), f"{role_where}.args")
        env = {**role_env(point, role, spec), **acceptance_env(recipe, args, role_where)}
        if recipe.engine == "sim":
            env[SIM_VERSION_ENV] = recipe.server.sglang_version
        par = role_parallelism(recipe, spec)
        role_tail = [*tail, *SIM_ROUTING_LOG] if recipe.engine == "sim" and "log-level" not in args else tail
        workers = [WorkerPlan(role=role, index=s.index, url=s.url, http_port=s.http_port,
                              bootstrap_port=s.bootstrap_port, rendezvous_port=s.rendezvous_port,
                              nodes=worker_commands(head, role_tail, table, args, s)) for s in by_role[role]]
        roles.append(RolePlan(role=role, workers=spec.workers, nodes_per_worker=spec.nodes_per_worker,
                              gpus_per_worker=gpus_per_worker(par), parallelism=par, args=args, env=env,
                              worker_plans=workers))
    spec_r = dep.router
    every = [s for r in roles for s in r.worker_plans]
    router_args, router_secrets = split_secret_args({**worker_api_key(roles, f"{where}.deployment"), **spec_r.args})
    argv = router.router_argv(
        spec_r.kind, spec_r.policy, router_args, node_symbol(0), dep.ports.base,
        prefill=[(w.url, w.bootstrap_port or 0) for w in every if w.role == "prefill"],
        decode=[w.url for w in every if w.role == "decode"],
        aggregated=[w.url for w in every if w.role == "aggregated"])
    return DeploymentPlan(
        layout=dep.layout, roles=roles,
        router=RouterPlan(kind=spec_r.kind, policy=spec_r.policy, node=node_symbol(0), port=dep.ports.base, argv=argv,
                          secret_args=router_secrets),
        nodes=sum(r.workers * r.nodes_per_worker for r in roles), num_gpus=sum(r.num_gpus for r in roles),
        gpus_per_node=recipe.hardware.gpus_per_node)


def worker_api_key(roles: list[RolePlan], where: str) -> dict[str, Any]:
    """`{"api-key": KEY}` when the workers check an API key: the router then sends it to them (a `--dp-aware`
    router reads every worker's `/server_info`, which SGLang guards with the key). One key for every role."""
    keys = {str(r.args["api-key"]) if r.args.get("api-key") is not None else None for r in roles}
    if len(keys) > 1:
        raise UserError(f"{where}: the roles' api-key differ (or one role has none); the router sends one key to "
                        "every worker: set args.api-key once for all roles")
    key = keys.pop()
    return {} if key is None else {"api-key": key}


def deployment_settings(plan: DeploymentPlan, recipe: Recipe) -> dict[str, Any]:
    """What of a deployment decides what a point measures (ports and node symbols excluded)."""
    dep = recipe.deployment
    assert dep is not None
    return {"layout": plan.layout, "transfer_backend": dep.transfer_backend,
            "router": {"kind": dep.router.kind, "policy": dep.router.policy, "args": dict(dep.router.args)},
            "roles": {r.role: {"workers": r.workers, "nodes_per_worker": r.nodes_per_worker,
                               "parallelism": r.parallelism.model_dump(), "args": r.args, "env": r.env}
                      for r in plan.roles}}
