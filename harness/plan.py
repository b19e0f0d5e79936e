"""Plans: the exact server command, environment, client settings and resources of every point.

`build_plan(recipe, point)` is pure. It renders the structured recipe blocks (model, parallelism,
speculative decoding, KV offload) and the point's effective args into SGLang flags, validates them against
the pinned flag table, and injects the synthetic-acceptance environment from the golden curve (the only
place `SGLANG_SIMULATE_ACC_*` is ever set).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness import flags
from harness.errors import UserError
from harness.recipe import ArgValue, Point, Recipe

SERVER_MODULE = {"sglang": "sglang.launch_server", "sim": "harness.sim"}
DEFAULT_PORT = 30000


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerPlan(Frozen):
    argv: list[str]
    env: dict[str, str]
    host: str
    port: int
    engine: str


class ClientPlan(Frozen):
    """What the AIPerf client replays and for how long (argv is rendered at run time: it needs the URL)."""

    served_model_name: str
    traces: str
    concurrency: int
    duration_s: float
    grace_s: float
    warmup_s: float
    seed: int
    tokenizer: str | None
    max_sessions: int | None


class Resources(Frozen):
    gpu: str
    gpus_per_node: int
    num_gpus: int
    nodes: int = 1


class PointPlan(Frozen):
    config_key: str
    image: str
    conc: int
    name: str
    fingerprint: str
    settings: dict[str, Any] = Field(description="the effective settings the fingerprint covers")
    server: ServerPlan
    client: ClientPlan
    resources: Resources
    extends_chain: list[str] = Field(default_factory=list)


def structured_args(recipe: Recipe) -> dict[str, ArgValue]:
    """SGLang flags implied by the recipe's structured blocks (model, parallelism, speculative, offload)."""
    m, par = recipe.model, recipe.parallelism
    args: dict[str, ArgValue] = {"model-path": m.path, "served-model-name": m.served_name, "tp-size": par.tp}
    if m.revision:
        args["revision"] = m.revision
    if m.chat_template:
        args["chat-template"] = m.chat_template
    if par.ep > 1:
        args["ep-size"] = par.ep
    if par.pp > 1:
        args["pp-size"] = par.pp
    spec = recipe.speculative
    if spec is not None:
        args["speculative-algorithm"] = spec.algorithm
        if spec.draft_model:
            args["speculative-draft-model-path"] = spec.draft_model
        if spec.draft_revision:
            args["speculative-draft-model-revision"] = spec.draft_revision
        if spec.num_steps is not None:
            args["speculative-num-steps"] = spec.num_steps
        if spec.num_draft_tokens is not None:
            args["speculative-num-draft-tokens"] = spec.num_draft_tokens
        if spec.topk is not None:
            args["speculative-eagle-topk"] = spec.topk
    kv = recipe.kv_offload
    if kv.kind == "dram":
        args["enable-hierarchical-cache"] = True
        if kv.hicache_size_gb is not None:
            args["hicache-size"] = kv.hicache_size_gb
        if kv.write_policy is not None:
            args["hicache-write-policy"] = kv.write_policy
    return args


def effective_args(recipe: Recipe, point: Point) -> dict[str, ArgValue]:
    """Flags from the structured blocks, overridden by the point's effective args (base args + point changes)."""
    return {**structured_args(recipe), **point.args}


def acceptance_env(recipe: Recipe, args: dict[str, ArgValue], source: str) -> dict[str, str]:
    """The synthetic-acceptance environment for a point (empty without a golden curve or in eval mode)."""
    spec = recipe.speculative
    if spec is None or spec.golden is None or spec.mode == "eval":
        return {}
    from harness import golden

    if recipe.model.golden_key is None:
        raise UserError(f"{source}: model.golden_key: needed to look up speculative.golden.curve")
    return golden.acceptance_env(
        algorithm=spec.algorithm, server_args=dict(args), curve=spec.golden.curve,
        model_key=recipe.model.golden_key, thinking=spec.golden.thinking, mode=spec.mode,
        method=spec.golden.method, token_mode=spec.golden.token_mode)


def fingerprint(settings: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a point's effective settings (concurrency excluded)."""
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def build_plan(recipe: Recipe, point: Point, source: str = "<recipe>", recipe_dir: Path | None = None,
               host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> PointPlan:
    """The complete, validated plan of one point."""
    for key in point.env:
        if key.startswith("SGLANG_SIMULATE_ACC_"):
            raise UserError(f"{source}: points.{point.name}.env.{key}: synthetic acceptance comes only from "
                            "the golden curve (speculative.golden); remove it from the recipe")
    args = effective_args(recipe, point)
    table = _flag_table(recipe, f"{source}: server.sglang_version")
    args = {name[2:]: value for name, value in
            flags.validate_args(table, args, f"{source}: points.{point.name}.args").items()}
    acc_env = acceptance_env(recipe, args, f"{source}: points.{point.name}")
    env = {**point.env, **acc_env}
    settings = {"image": recipe.image, "engine": recipe.engine, "args": args, "env": point.env,
                "acceptance_env": acc_env, "hardware": recipe.hardware.model_dump(),
                "client": recipe.client.model_dump(exclude={"seed"})}
    module = SERVER_MODULE[recipe.engine]
    argv = ["python3", "-m", module, *flags.render_argv(table, args), "--host", host, "--port", str(port)]
    if recipe.engine == "sim":
        argv += ["--sim-profile", recipe.sim_profile]
    traces = Path(recipe.client.traces)
    if recipe_dir is not None and not traces.is_absolute():
        traces = (recipe_dir / traces).resolve()
    par = recipe.parallelism
    return PointPlan(
        config_key=recipe.config_key, image=recipe.image, conc=point.conc, name=point.name,
        fingerprint=fingerprint(settings), settings=settings,
        server=ServerPlan(argv=argv, env=env, host=host, port=port, engine=recipe.engine),
        client=ClientPlan(served_model_name=recipe.model.served_name, traces=str(traces),
                          concurrency=point.conc, duration_s=recipe.client.duration_s,
                          grace_s=recipe.client.grace_s, warmup_s=recipe.client.warmup_s,
                          seed=recipe.client.seed, tokenizer=recipe.client.tokenizer,
                          max_sessions=recipe.client.max_sessions),
        resources=Resources(gpu=recipe.hardware.gpu, gpus_per_node=recipe.hardware.gpus_per_node,
                            num_gpus=par.tp * par.pp),
        extends_chain=point.extends_chain,
    )


def _flag_table(recipe: Recipe, where: str) -> flags.FlagTable:
    try:
        return flags.load_table(recipe.server.sglang_version)
    except (FileNotFoundError, UserError):
        known = ", ".join(flags.available_versions())
        raise UserError(f"{where}: no flag table for SGLang {recipe.server.sglang_version} (have {known})") from None


def build_plans(recipe: Recipe, points: list[Point], source: str = "<recipe>",
                recipe_dir: Path | None = None) -> list[PointPlan]:
    return [build_plan(recipe, p, source, recipe_dir) for p in points]
