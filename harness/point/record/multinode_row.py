"""The multi-node fields of an InferenceX AgentX row, from a deployment plan.

InferenceX's multi-node rows (`AgentXMultinodeRow`) describe the layout per role: `prefill_*` and `decode_*`
worker counts, tp, pp, ep, dcp, pcp, DP attention and GPUs, with `num_gpus` summed over the roles
(workers x tp x pp x pcp), `tp` the sum of the roles' tp, `ep` the larger one, `dp_attention` true if either
role has it. An aggregated layout fills the prefill side and reports `decode_num_workers: 0` with decode tp, ep and
GPUs 0 and decode pp, dcp and pcp 1, as InferenceX's aggregator writes it (its contract wants pp, dcp and pcp above
0). A multi-node row has no top-level `pp`, `dcp_size` or `pcp_size` (InferenceX's contract refuses them there).
A prefill/decode row names the engine moving the KV cache between the roles, `kv_p2p_transfer` (InferenceX's
configs must declare it for every `disagg: true` configuration): the recipe's `transfer_backend`, else SGLang's
default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.recipe.multinode.deployment import DeploymentPlan, RolePlan
from harness.recipe.server_flags.flags import DEFAULT_VERSION, load_table

ROLE_FIELDS = ("num_workers", "tp", "pp", "dcp_size", "pcp_size", "ep", "dp_attention")


def _flag(value: bool) -> str:
    """A workflow flag as InferenceX's row contract has it: the string "true" or "false", not a JSON boolean."""
    return "true" if value else "false"


def _role_fields(prefix: str, role: RolePlan | None) -> dict[str, Any]:
    if role is None:   # InferenceX: no decode GPUs -> decode tp and ep 0, pp, dcp and pcp 1
        return {f"{prefix}_num_workers": 0, f"{prefix}_tp": 0, f"{prefix}_pp": 1, f"{prefix}_dcp_size": 1,
                f"{prefix}_pcp_size": 1, f"{prefix}_ep": 0, f"{prefix}_dp_attention": "false",
                f"num_{prefix}_gpu": 0}
    par = role.parallelism
    return {f"{prefix}_num_workers": role.workers, f"{prefix}_tp": par.tp, f"{prefix}_pp": par.pp,
            f"{prefix}_dcp_size": par.dcp, f"{prefix}_pcp_size": par.pcp, f"{prefix}_ep": par.ep,
            f"{prefix}_dp_attention": _flag(par.dp_attention is not None), f"num_{prefix}_gpu": role.num_gpus}


SINGLE_NODE_ONLY = ("pp", "dcp_size", "pcp_size")   # top-level fields a multi-node row has per role only


def multinode_row(row: dict[str, Any], plan: DeploymentPlan, sglang_version: str | None = None,
                  router: dict[str, str] | None = None) -> dict[str, Any]:
    """A single-node AgentX row made multi-node: the per-role fields, the router (`router`: InferenceX's
    component metadata, name and version as measured; none when unmeasured) and, prefill/decode, the KV transfer
    engine in, the single-node-only fields out. `sglang_version`: whose default transfer backend applies when
    the recipe names none."""
    out = {k: v for k, v in row.items() if k not in SINGLE_NODE_ONLY}
    out.update(multinode_fields(plan))
    if router is not None:
        out["router"] = router
    backend = kv_p2p_transfer(plan, sglang_version)
    if backend is not None:
        out["kv_p2p_transfer"] = backend
    return out


def kv_p2p_transfer(plan: DeploymentPlan, sglang_version: str | None = None) -> str | None:
    """The engine moving KV between prefill and decode workers (`--disaggregation-transfer-backend`, SGLang's
    default when not set); None for aggregated workers, which move none."""
    prefill = plan.role("prefill")
    if plan.layout != "disagg" or prefill is None:
        return None
    chosen = prefill.args.get("disaggregation-transfer-backend")
    if chosen:
        return str(chosen)

    flag = load_table(sglang_version or DEFAULT_VERSION).get("--disaggregation-transfer-backend")
    return str(flag.default) if flag is not None and flag.default else None


def is_multinode(plan: DeploymentPlan) -> bool:
    """A deployment is published as a multi-node row when it spans nodes (every worker owns its nodes, so a
    one-node deployment is one worker behind the router: a single-node row)."""
    return plan.nodes > 1


def multinode_fields(plan: DeploymentPlan) -> dict[str, Any]:
    """`is_multinode`, `disagg`, the per-role fields and the summed ones, as an InferenceX multi-node row has them."""
    first = plan.role("prefill") or plan.role("aggregated")
    second = plan.role("decode")
    fields: dict[str, Any] = {"is_multinode": True, "disagg": plan.layout == "disagg",
                              **_role_fields("prefill", first), **_role_fields("decode", second)}
    roles = [r for r in (first, second) if r is not None]
    fields.update(num_gpus=sum(r.num_gpus for r in roles), tp=sum(r.parallelism.tp for r in roles),
                  ep=max(r.parallelism.ep for r in roles),
                  dp_attention=_flag(any(r.parallelism.dp_attention is not None for r in roles)))
    return fields


def _role_tag(fields: Mapping[str, Any], prefix: str) -> str:
    """InferenceX's name of a role's parallelism: `dep8` (DP attention + EP), `tp4ep4`, `tp4`."""
    tp, ep = fields.get(f"{prefix}_tp", "?"), fields.get(f"{prefix}_ep", 1)
    if str(fields.get(f"{prefix}_dp_attention")).lower() == "true":
        return f"dep{tp}"
    return f"tp{tp}ep{ep}" if str(ep) not in ("0", "1", "None") else f"tp{tp}"


def deployment_shape(fields: Mapping[str, Any]) -> str:
    """A deployment's shape as InferenceX names its configurations: `1p1d tp4/tp4`, `12p4d dep8/dep16`; an
    aggregated multi-worker layout `2x tp4`."""
    prefill = fields.get("prefill_num_workers", "?")
    if not fields.get("decode_num_workers"):
        return f"{prefill}x {_role_tag(fields, 'prefill')}"
    return f"{prefill}p{fields['decode_num_workers']}d {_role_tag(fields, 'prefill')}/{_role_tag(fields, 'decode')}"
