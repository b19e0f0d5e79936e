"""Plans: the exact server command, environment, client settings and resources of every point.

`build_plan(recipe, point)` is pure. It renders the structured recipe blocks (model, parallelism,
speculative decoding, the point's KV offload) and the point's effective args into SGLang flags in their
full spelling, validates them against the pinned flag table, and injects the synthetic-acceptance
environment from the golden curve (the only place `SGLANG_SIMULATE_ACC_*` is ever set).

The fingerprint of a point is the sha256 of the canonical JSON of its effective settings, concurrency
excluded; a point's identity is (fingerprint, concurrency, image).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from pydantic import Field

from harness.artifacts import data_view
from harness.errors import UserError
from harness.inputs.yaml_input import short
from harness.recipe import postinit, scenario
from harness.recipe.client_plan import ClientPlan, Frozen, drop_unset_additions
from harness.recipe.multinode.deployment import DeploymentPlan, deployment_settings, plan_deployment
from harness.recipe.schema import (
    ACC_ENV_PREFIX,
    Point,
    Recipe,
    check_env_name,
    check_env_value,
)
from harness.recipe.server_flags import flags
from harness.recipe.server_flags.secret_args import API_KEY_FLAG, joined, split_secret_args
from harness.recipe.server_flags.server_args import (
    SERVER_MODULE,
    SIM_VERSION_ENV,
    acceptance_env,
    effective_args,
    render_sim_flags,
)
from harness.traces.pinned import is_pinned_spec, parse_spec

DEFAULT_PORT = 30000


class ServerPlan(Frozen):
    argv: list[str]                # the command without its secret flags
    env: dict[str, str]
    host: str
    port: int
    engine: str
    secret_args: dict[str, str] = Field(default_factory=dict, description=(
        "`--api-key` and the like, held apart from argv and joined only where the server starts"))

    @property
    def api_key(self) -> str | None:
        """The key the server checks (`--api-key`); None without one."""
        return self.secret_args.get(API_KEY_FLAG)

    def launch_argv(self) -> list[str]:
        """The command the server is started with: argv and its secret flags (`harness.recipe.server_flags.secret_args`)."""
        return joined(self.argv, self.secret_args)


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
    secret_names: list[str] = Field(default_factory=list, description="the recipe's own secret names (redacted)")
    deployment: DeploymentPlan | None = Field(default=None, description=(
        "the workers and router of a recipe with a deployment section; `server` is then its router"))

    def public(self) -> dict[str, Any]:
        """The point as `harness plan --json` shows it."""
        doc = {"conc": self.conc, "name": self.name, "fingerprint": self.fingerprint,
               "server": {"argv": self.server.launch_argv(), "env": dict(self.server.env)},
               "client": drop_unset_additions(self.client.model_dump()), "resources": self.resources.model_dump()}
        if self.deployment is not None:
            doc["deployment"] = self.deployment.public()
        return doc

    @property
    def model_prefix(self) -> str:
        """InferenceX's model prefix: the recipe's `infmax_model_prefix`, else config_key up to its first dash."""
        return str(self.settings.get("infmax_model_prefix") or self.config_key.split("-", 1)[0])


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 as is; non-finite numbers are refused (they have no JSON spelling)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def fingerprint(settings: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a point's effective settings (concurrency excluded; `build_plan` passes
    them with secret values redacted, so a changed secret leaves the fingerprint as it was)."""
    return hashlib.sha256(canonical_json(settings).encode()).hexdigest()


def point_settings(recipe: Recipe, point: Point, args: dict[str, Any], acc_env: dict[str, str]) -> dict[str, Any]:
    """Everything that decides what a point measures, except its concurrency."""
    # `unofficial` is a label, not a setting: the point measures the same
    client = drop_unset_additions(recipe.client.model_dump(exclude={"unofficial"}))
    client["traces"] = client_traces(recipe)
    settings: dict[str, Any] = {
        "image": recipe.image, "engine": recipe.engine, "sglang_version": recipe.server.sglang_version,
        "precision": recipe.model.precision, "golden_key": recipe.model.golden_key,
        "chat_template": recipe.model.chat_template, "args": args, "env": dict(point.env),
        "acceptance_env": acc_env, "hardware": recipe.hardware.model_dump(), "client": client,
    }
    if recipe.infmax_model_prefix is not None:
        settings["infmax_model_prefix"] = recipe.infmax_model_prefix
    if recipe.engine == "sim":
        settings["sim_profile"] = recipe.sim_profile
        settings["sim_args"] = dict(recipe.sim_args)
    return settings


def client_traces(recipe: Recipe) -> str:
    """The trace corpus this engine replays, as written in the recipe."""
    if recipe.engine == "sim" and recipe.sim_traces:
        return recipe.sim_traces
    return recipe.client.traces


def build_plan(recipe: Recipe, point: Point, source: str = "<recipe>", recipe_dir: Path | None = None,
               host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> PointPlan:
    """The complete, validated plan of one point."""
    where = f"{source}: points.{point.name}"
    for key, value in point.env.items():
        try:
            check_env_name(key)
            check_env_value(value)
        except ValueError as exc:
            raise UserError(f"{where}.env.{short(key)}: {exc}") from None
        if key.startswith(ACC_ENV_PREFIX):
            raise UserError(f"{where}.env.{key}: synthetic acceptance comes only from the golden curve "
                            "(speculative.golden); remove it")
    table = _flag_table(recipe, f"{source}: server.sglang_version")
    checked = flags.validate_args(table, effective_args(recipe, point), f"{where}.args")
    args = {name[2:]: value for name, value in checked.items()}
    rejected = postinit.post_init_rejections({table.resolve(name).dest: value for name, value in checked.items()},
                                             table.version)
    if recipe.deployment is not None:
        return _with_deployment(recipe, point, table, where, args, source, recipe_dir)
    if rejected:
        rule, message = rejected[0]
        raise UserError(f"{where}.args: SGLang {table.version} rejects this at startup ({rule}): {message}")
    acc_env = acceptance_env(recipe, args, where)
    # Not an output (its writers redact what they write): the settings are the point's identity, hashed into its
    # fingerprint, and a rotated secret must leave that identity (resume, comparison) unchanged.
    settings = data_view(point_settings(recipe, point, args, acc_env))
    fp = _fingerprint(settings, where)
    env = {**point.env, **acc_env}
    public_args, secret_args = split_secret_args(args)
    argv = ["python3", "-m", SERVER_MODULE[recipe.engine], *flags.render_argv(table, public_args),
            "--host", host, "--port", str(port)]
    if recipe.engine == "sim":
        argv += ["--sim-profile", recipe.sim_profile, *render_sim_flags(recipe.sim_args)]
        env[SIM_VERSION_ENV] = recipe.server.sglang_version
    client = client_plan(recipe, point, source, recipe_dir, where)
    par, hw = recipe.parallelism, recipe.hardware
    num_gpus = par.tp * par.pp * par.pcp  # dp attention and dcp run inside tp
    return PointPlan(
        config_key=recipe.config_key, image=recipe.image, conc=point.conc, name=point.name,
        fingerprint=fp, settings=settings,
        server=ServerPlan(argv=argv, env=env, host=host, port=port, engine=recipe.engine, secret_args=secret_args),
        client=client,
        resources=Resources(gpu=hw.gpu, gpus_per_node=hw.gpus_per_node, num_gpus=num_gpus,
                            nodes=math.ceil(num_gpus / hw.gpus_per_node)),
        extends_chain=point.extends_chain, secret_names=list(recipe.secret_names),
    )


def _with_deployment(recipe: Recipe, point: Point, table: flags.FlagTable, where: str, args: dict[str, Any],
                     source: str, recipe_dir: Path | None) -> PointPlan:
    """The plan of a point of a recipe with a deployment section: every worker's per-node commands, and the
    router as the server the client talks to. The base args were checked as flags; each role is checked whole."""
    dep = plan_deployment(recipe, point, table, where)
    settings = point_settings(recipe, point, args, {})
    settings["deployment"] = deployment_settings(dep, recipe)
    settings = data_view(settings)   # as above: the fingerprint's identity, not an output
    r = dep.router
    return PointPlan(
        config_key=recipe.config_key, image=recipe.image, conc=point.conc, name=point.name,
        fingerprint=_fingerprint(settings, where), settings=settings,
        server=ServerPlan(argv=r.argv, env={}, host=r.node, port=r.port, engine=recipe.engine,
                          secret_args=r.secret_args),
        client=client_plan(recipe, point, source, recipe_dir, where),
        resources=Resources(gpu=recipe.hardware.gpu, gpus_per_node=dep.gpus_per_node, num_gpus=dep.num_gpus,
                            nodes=dep.nodes),
        extends_chain=point.extends_chain, secret_names=list(recipe.secret_names), deployment=dep,
    )


def _fingerprint(settings: dict[str, Any], where: str) -> str:
    try:
        return fingerprint(settings)
    except ValueError:
        raise UserError(f"{where}.args: a value is not a finite number") from None


def client_plan(recipe: Recipe, point: Point, source: str, recipe_dir: Path | None, where: str) -> ClientPlan:
    """What the client replays for this point, checked against AIPerf's scenario rules."""
    traces_spec = client_traces(recipe)
    if is_pinned_spec(traces_spec):
        try:
            parse_spec(traces_spec)   # a known AIPerf alias (or repository) at a full commit hash
        except UserError as exc:
            raise UserError(f"{source}: client.traces: {exc}") from None
    traces: str | Path = traces_spec if traces_spec.startswith("hf:") or is_pinned_spec(traces_spec) \
        else Path(traces_spec)
    if recipe_dir is not None and isinstance(traces, Path) and not traces.is_absolute():
        traces = (recipe_dir / traces).resolve()
    tokenizer = recipe.client.tokenizer
    if tokenizer is not None and recipe_dir is not None and not Path(tokenizer).is_absolute():
        tokenizer = str((recipe_dir / tokenizer).resolve())
    client = ClientPlan(served_model_name=recipe.model.served_name, scenario=recipe.client.scenario,
                        traces=str(traces),
                        conc=point.conc, duration_s=recipe.client.duration_s,
                        grace_s=recipe.client.grace_s, warmup_s=recipe.client.warmup_s,
                        warmup_requests_per_lane=recipe.client.warmup_requests_per_lane,
                        burst_phase_starts=recipe.client.burst_phase_starts,
                        workers=recipe.client.workers, record_processors=recipe.client.record_processors,
                        seed=recipe.client.seed, tokenizer=tokenizer,
                        max_sessions=recipe.client.max_sessions, unofficial=recipe.client.unofficial)
    breaks = scenario.fast_violations(client)
    if breaks and not client.unofficial:
        raise UserError(scenario.refusal(where, client.scenario, breaks))
    return client


def _flag_table(recipe: Recipe, where: str) -> flags.FlagTable:
    try:
        return flags.load_table(recipe.server.sglang_version)
    except (FileNotFoundError, UserError):
        known = ", ".join(flags.available_versions())
        raise UserError(f"{where}: no flag table for SGLang {recipe.server.sglang_version} (have {known})") from None


def build_plans(recipe: Recipe, points: list[Point], source: str = "<recipe>",
                recipe_dir: Path | None = None) -> list[PointPlan]:
    return [build_plan(recipe, p, source, recipe_dir) for p in points]
