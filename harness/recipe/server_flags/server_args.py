"""A point's server arguments from its recipe: the SGLang flags the structured blocks imply, the synthetic
acceptance environment, and the simulator's own flags. Shared by single-node plans and deployments."""

from __future__ import annotations

from typing import Any

from harness.errors import UserError
from harness.recipe import golden
from harness.recipe.fields import ArgValue
from harness.recipe.schema import KvOffload, Point, Recipe
from harness.recipe.server_flags import flags

SERVER_MODULE = {"sglang": "sglang.launch_server", "sim": "harness.sim"}
SIM_VERSION_ENV = "HARNESS_SIM_SGLANG_VERSION"  # which flag table the simulator parses argv with
CHECKPOINT_TEMPLATE = "checkpoint"  # model.chat_template value: the checkpoint's own Jinja template


def structured_args(recipe: Recipe, kv: KvOffload | None = None) -> dict[str, ArgValue]:
    """SGLang flags implied by the recipe's structured blocks (model, parallelism, speculative, KV offload)."""
    m, par = recipe.model, recipe.parallelism
    args: dict[str, ArgValue] = {"model-path": m.path}
    if m.revision:
        args["revision"] = m.revision
    args["served-model-name"] = m.served_name
    if m.chat_template and m.chat_template != CHECKPOINT_TEMPLATE:
        args["chat-template"] = m.chat_template
    args["tp-size"] = par.tp
    if par.ep > 1:
        args["ep-size"] = par.ep
    if par.pp > 1:
        args["pp-size"] = par.pp
    if par.dp_attention is not None:
        args.update(dp_attention_args(recipe.server.sglang_version, par.dp_attention))
    if par.dcp > 1:
        args["dcp-size"] = par.dcp
    if par.pcp > 1:
        args["pcp-size"] = par.pcp
    spec = recipe.speculative
    if spec is not None:
        args["speculative-algorithm"] = spec.algorithm
        if spec.draft_model:
            args["speculative-draft-model-path"] = spec.draft_model
        if spec.draft_revision:
            args["speculative-draft-model-revision"] = spec.draft_revision
        if spec.num_steps is not None:
            args["speculative-num-steps"] = spec.num_steps
        if spec.topk is not None:
            args["speculative-eagle-topk"] = spec.topk
        if spec.num_draft_tokens is not None:
            args["speculative-num-draft-tokens"] = spec.num_draft_tokens
    kv = recipe.kv_offload if kv is None else kv
    if kv.kind == "dram":
        args["enable-hierarchical-cache"] = True
        if kv.hicache_size_gb is not None:
            args["hicache-size"] = kv.hicache_size_gb
        if kv.write_policy is not None:
            args["hicache-write-policy"] = kv.write_policy
    return args


def dp_attention_args(sglang_version: str, size: int) -> dict[str, ArgValue]:
    """DP attention with `size` groups as the pinned SGLang spells it: `--attn-dp-size N` where the release has
    that flag (0.5.23 deprecates `--dp-size N --enable-dp-attention` for it and turns the old pair into it),
    else `--enable-dp-attention --dp-size N` (0.5.20)."""
    if flags.load_table(sglang_version).get("--attn-dp-size") is not None:
        return {"attn-dp-size": size}
    return {"enable-dp-attention": True, "dp-size": size}


def dp_attention_size(args: dict[str, Any]) -> int:
    """The attention data-parallel width a point's args (dashless names) configure; 1 without DP attention."""
    attn = int(args.get("attn-dp-size", 1) or 1)
    if attn > 1:
        return attn
    return int(args.get("dp-size", 1) or 1) if args.get("enable-dp-attention") else 1


def effective_args(recipe: Recipe, point: Point) -> dict[str, ArgValue]:
    """Flags from the structured blocks followed by the point's effective args (base args + point changes)."""
    return {**structured_args(recipe, point.kv_offload), **point.args}


def acceptance_env(recipe: Recipe, args: dict[str, Any], where: str) -> dict[str, str]:
    """The synthetic-acceptance environment for a point (empty without a golden curve or in eval mode)."""
    spec = recipe.speculative
    if spec is None or spec.golden is None or spec.mode == "eval":
        return {}

    if recipe.model.golden_key is None:
        raise UserError(f"{where}: model.golden_key: needed to look up speculative.golden.curve")
    try:
        return golden.acceptance_env(
            algorithm=spec.algorithm, server_args=dict(args), curve=spec.golden.curve,
            model_key=recipe.model.golden_key, thinking=spec.golden.thinking, mode=spec.mode,
            method=spec.golden.method, token_mode=spec.golden.token_mode)
    except UserError as exc:
        raise UserError(f"{where}: speculative.golden: {exc}") from None


def render_sim_flags(sim_args: dict[str, Any]) -> list[str]:
    """`{sim-x: v}` → `--sim-x v` (true: a bare switch; false: omitted)."""
    argv: list[str] = []
    for name, value in sim_args.items():
        if value is True:
            argv.append(f"--{name}")
        elif value is not False and value is not None:
            argv += [f"--{name}", str(value)]
    return argv
