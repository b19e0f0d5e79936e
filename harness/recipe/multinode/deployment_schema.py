"""The `deployment:` section of a recipe: several SGLang workers and a router instead of one server.

Absent, a point runs one server on one node. Present, it names the roles that run: `aggregated` (workers that
each serve whole requests behind a router), or `prefill` and `decode` (prefill/decode disaggregation: SGLang's
`--disaggregation-mode`, the router pairing a prefill and a decode worker per request). Per role: how many
workers, the nodes one worker spans, its parallelism (default: the recipe's `parallelism`), and role args and
env merged over the recipe's `server.args`/`env`. A point changes a role's args and env under
`points.cN.deployment.ROLE`, inherited through `extends:` like its other changes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from harness.recipe.fields import ArgValue, EnvName, KvOffload, OptEnvValue, Parallelism, Strict

Role = Literal["prefill", "decode", "aggregated"]
ROLES: tuple[Role, ...] = ("prefill", "decode", "aggregated")
RouterKind = Literal["sglang-router", "smg"]
RouterPolicy = Literal["random", "round_robin", "passthrough", "cache_aware", "power_of_two", "least_load", "manual",
                       "consistent_hashing", "prefix_hash"]
MAX_WORKERS = 1024

# SGLang flags the deployment renders per worker and node (dashless name -> what sets it).
DEPLOYMENT_FLAGS: dict[str, str] = {
    "disaggregation-mode": "the role (deployment.prefill / deployment.decode)",
    "disaggregation-bootstrap-port": "deployment.bootstrap_port (default: from deployment.ports)",
    "disaggregation-transfer-backend": "deployment.transfer_backend",
    "dist-init-addr": "the deployment (workers spanning nodes)", "nnodes": "deployment.ROLE.nodes_per_worker",
    "node-rank": "the deployment (one per node of a worker)", "nccl-port": "deployment.ports",
}


class RoleSpec(Strict):
    workers: int = Field(default=1, ge=1, le=MAX_WORKERS, description="workers of this role")
    nodes_per_worker: int = Field(default=1, ge=1, le=MAX_WORKERS, description=(
        "nodes one worker spans; above 1 its tp x pp x pcp GPUs fill every GPU of those nodes "
        "(`--dist-init-addr`, `--nnodes`, `--node-rank`)"))
    parallelism: Parallelism | None = Field(default=None, description=(
        "parallelism of one worker (default: the recipe's parallelism)"))
    kv_offload: KvOffload | None = Field(default=None, description=(
        "KV offload of this role's workers (default: the point's), e.g. HiCache on prefill only"))
    args: dict[str, ArgValue | None] = Field(default_factory=dict, description=(
        "SGLang flags of this role over server.args, dashless; null drops a base flag for this role"))
    env: dict[EnvName, OptEnvValue] = Field(default_factory=dict, description=(
        "environment of this role over server.env; null drops a base variable for this role"))


class RoleChange(Strict):
    """A point's change to one role; inherited through `extends:`."""

    args: dict[str, ArgValue | None] = Field(default_factory=dict, description=(
        "flag changes of this role; null removes an inherited flag"))
    env: dict[EnvName, OptEnvValue] = Field(default_factory=dict, description=(
        "env changes of this role; null removes an inherited variable"))


class PointDeployment(Strict):
    """A point's per-role changes."""

    prefill: RoleChange | None = Field(default=None, description="changes to the prefill role")
    decode: RoleChange | None = Field(default=None, description="changes to the decode role")
    aggregated: RoleChange | None = Field(default=None, description="changes to the aggregated role")


class Ports(Strict):
    base: int = Field(default=30000, ge=1024, le=65535, description=(
        "router port; worker w (prefill first, then decode) takes the block base + stride x (w + 1): HTTP "
        "port = block, bootstrap port = block + 1, rendezvous port = block + 2 (`--nccl-port`, or the port of "
        "`--dist-init-addr` for workers spanning nodes; SGLang derives its internal ports from it)"))
    stride: int = Field(default=100, ge=16, le=10000, description="ports between two workers' blocks")


class RouterSpec(Strict):
    kind: RouterKind = Field(default="sglang-router", description=(
        "`sglang-router` (PyPI sglang-router 0.3.2, `python -m sglang_router.launch_router`) or `smg` "
        "(Shepherd Model Gateway 1.13, `python -m smg.launch_router`)"))
    policy: RouterPolicy | None = Field(default=None, description=(
        "`--policy` (default: the router's own, cache_aware); consistent_hashing, prefix_hash exist in smg only"))
    args: dict[str, ArgValue] = Field(default_factory=dict, description=(
        "more router flags, dashless (`request-id-headers: x-correlation-id`); true renders a bare switch"))


class Deployment(Strict):
    prefill: RoleSpec | None = Field(default=None, description="prefill workers (`--disaggregation-mode prefill`)")
    decode: RoleSpec | None = Field(default=None, description="decode workers (`--disaggregation-mode decode`)")
    aggregated: RoleSpec | None = Field(default=None, description="aggregated workers behind the router")
    transfer_backend: str | None = Field(default=None, description=(
        "KV transfer backend of prefill/decode (`--disaggregation-transfer-backend`: a choice of the pinned "
        "SGLang; default: SGLang's own)"))
    bootstrap_port: int | None = Field(default=None, ge=1024, le=65535, description=(
        "one `--disaggregation-bootstrap-port` for every prefill worker (default: each worker's own, from ports)"))
    ports: Ports = Field(default_factory=Ports, description="deterministic ports of the router and workers")
    router: RouterSpec = Field(default_factory=RouterSpec, description="the router in front of the workers")

    def roles(self) -> list[tuple[Role, RoleSpec]]:
        """The roles present, in node order: prefill, decode, aggregated."""
        out: list[tuple[Role, RoleSpec]] = []
        for name in ROLES:
            spec = getattr(self, name)
            if spec is not None:
                out.append((name, spec))
        return out

    @property
    def layout(self) -> Literal["aggregated", "disagg"]:
        return "aggregated" if self.aggregated is not None else "disagg"
