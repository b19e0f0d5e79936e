"""Recipes: one YAML file describes one benchmark curve.

A recipe holds a base configuration (image, model, parallelism, server args and env, speculative decoding,
KV offload, client settings) and points keyed by concurrency (`c28:` or `28:`). A point may start from
another point's settings (`extends: c24`, chains allowed) and then change some of them; `zip:` lines up a
list of concurrencies with per-point value lists. `expand_points` turns a recipe into concrete `Point`s:
the effective server args, env and KV offload of every point, with inheritance resolved.

Server args use SGLang's flag names without the leading dashes (`max-running-requests: 3`); `true` renders
as a bare switch and `null` in a point removes an inherited arg. Every name is checked against the pinned
SGLang version's flag table when the recipe is parsed and stored in its full canonical spelling. Flags
that a structured block renders (model, parallelism, speculative decoding, KV offload) can only be set
through that block, so each fact has one place in the file.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from harness.errors import UserError
from harness.recipe.fields import ENV_NAME as ENV_NAME
from harness.recipe.fields import ArgValue as ArgValue
from harness.recipe.fields import EnvName as EnvName
from harness.recipe.fields import EnvValue as EnvValue
from harness.recipe.fields import KvOffload as KvOffload
from harness.recipe.fields import OptEnvValue as OptEnvValue
from harness.recipe.fields import Parallelism as Parallelism
from harness.recipe.fields import PathText as PathText
from harness.recipe.fields import SecretName as SecretName
from harness.recipe.fields import Strict as Strict
from harness.recipe.fields import Text as Text
from harness.recipe.fields import check_env_name as check_env_name
from harness.recipe.fields import check_env_value as check_env_value
from harness.recipe.multinode.deployment_schema import Deployment, PointDeployment
from harness.recipe.pricing import Price
from harness.recipe.request_slo import parse_request_slo
from harness.recipe.thresholds import Thresholds

WEEK_S = 7 * 86400.0  # longest time setting
MAX_CONC = 100_000  # concurrent sessions of one point; beyond this is a typo, not a benchmark
POINT_NAME = re.compile(r"^c([1-9]\d{0,5})$")
ACC_ENV_PREFIX = "SGLANG_SIMULATE_ACC_"

# Flags rendered from the recipe's structured blocks (dashless canonical name -> the recipe key to use).
OWNED_FLAGS: dict[str, str] = {
    "model-path": "model.path", "revision": "model.revision", "served-model-name": "model.served_name",
    "chat-template": "model.chat_template", "tp-size": "parallelism.tp", "ep-size": "parallelism.ep",
    "pp-size": "parallelism.pp", "enable-dp-attention": "parallelism.dp_attention",
    "dp-size": "parallelism.dp_attention", "attn-dp-size": "parallelism.dp_attention", "dcp-size": "parallelism.dcp",
    "pcp-size": "parallelism.pcp", "speculative-algorithm": "speculative.algorithm",
    "speculative-draft-model-path": "speculative.draft_model",
    "speculative-draft-model-revision": "speculative.draft_revision",
    "speculative-num-steps": "speculative.num_steps", "speculative-num-draft-tokens": "speculative.num_draft_tokens",
    "speculative-dflash-block-size": "speculative.num_draft_tokens", "speculative-eagle-topk": "speculative.topk",
    "enable-hierarchical-cache": "kv_offload.kind", "hicache-size": "kv_offload.hicache_size_gb",
    "hicache-write-policy": "kv_offload.write_policy", "host": "(set by the harness per launch)",
    "port": "(set by the harness per launch)",
    "weight-version": "(set by the harness per launch)",
}


class ModelSpec(Strict):
    path: Text = Field(description="HF id or local path of the checkpoint (`--model-path`); clusters may map it to a staged copy")
    revision: PathText | None = Field(default=None, description="checkpoint revision (`--revision`)")
    served_name: Text = Field(description="name clients use in requests (`--served-model-name`)")
    chat_template: PathText | None = Field(default=
        None, description="`checkpoint` = the checkpoint's own Jinja template (no flag); else a path or builtin "
                          "name rendered as `--chat-template`")
    golden_key: str | None = Field(default=None, description="model key in the golden acceptance curves")
    precision: str = Field(default="bf16", pattern=r"^[a-z0-9_]+$",
                           description="checkpoint precision label for results (fp4, fp8, bf16)")


class Hardware(Strict):
    gpu: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", description="GPU type label: gb300, h200, sim")
    gpus_per_node: int = Field(ge=1, description="GPUs of one node")


class GoldenRef(Strict):
    curve: str = Field(description="golden curve name (a file stem of golden_al_distribution/)")
    thinking: Literal["thinking_on", "thinking_off"] = Field(description="thinking mode of the golden values")
    method: Literal["match-expected", "multinomial"] = Field(default="match-expected", description="SGLANG_SIMULATE_ACC_METHOD")
    token_mode: Literal["fixed", "real-draft-token"] = Field(default=
        "real-draft-token", description="SGLANG_SIMULATE_ACC_TOKEN_MODE (`fixed` breaks streaming)")


class Speculative(Strict):
    algorithm: Literal["EAGLE", "EAGLE3", "NEXTN", "DFLASH", "DSPARK"] = Field(description=(
        "`--speculative-algorithm`; DSPARK takes its block size from `server.args.speculative-dspark-block-size`"))
    draft_model: PathText | None = Field(default=None, description="`--speculative-draft-model-path`")
    draft_revision: PathText | None = Field(default=None, description="`--speculative-draft-model-revision` (pins the shipped draft)")
    num_steps: int | None = Field(default=None, ge=1, description="`--speculative-num-steps` (draft length of the EAGLE family)")
    num_draft_tokens: int | None = Field(default=None, ge=1, description="`--speculative-num-draft-tokens` (DFLASH block size)")
    topk: int | None = Field(default=None, ge=1, description="`--speculative-eagle-topk`")
    golden: GoldenRef | None = Field(default=None, description="golden curve giving the synthetic acceptance length")
    mode: Literal["perf", "eval"] = Field(default=
        "perf", description="perf injects synthetic acceptance from the golden curve; eval (accuracy) injects none")


class KvOffloadChange(Strict):
    """A point's change to the inherited KV offload; unset fields keep the inherited value."""

    kind: Literal["none", "dram"] | None = Field(default=None, description="`none` also drops the inherited size and policy")
    hicache_size_gb: int | None = Field(default=None, ge=1, description="`--hicache-size` for this point")
    write_policy: Literal["write_through", "write_back", "write_through_selective"] | None = Field(default=
        None, description="`--hicache-write-policy` for this point")


class Client(Strict):
    scenario: Literal["agentx", "inferencex-agentx-mvp"] = Field(default="agentx", description=(
        "the AIPerf scenario the client replays under: `agentx` (InferenceX's AgentX preset, as InferenceX runs it "
        "now) or `inferencex-agentx-mvp` (the earlier scenario, for comparing with rows measured under it)"))
    traces: PathText = Field(description="trace corpus: the pinned AgentX corpus as AIPerf names it "
                                    "(public-dataset:ALIAS@COMMIT or hf-weka-dataset:OWNER/NAME@COMMIT), or a local "
                                    "corpus for smoke runs: a directory of Weka v1 JSON files or a .jsonl file "
                                    "(relative to the recipe), or hf:OWNER/NAME@REVISION")
    duration_s: float = Field(default=60.0, gt=0, le=WEEK_S, description="profiling window length")
    grace_s: float = Field(default=30.0, ge=0, le=WEEK_S, description="wait for in-flight requests after the window")
    warmup_s: float = Field(default=0.0, ge=0, le=WEEK_S, description="agentic cache warmup before profiling")
    warmup_requests_per_lane: int | None = Field(default=None, ge=1, le=10**6, description=(
        "cache-pressure warmup calls per lane before the window (AIPerf `--warmup-requests-per-lane`, one-token "
        "outputs); default: the scenario's own (10 under `agentx`). Exclusive with warmup_s"))
    burst_phase_starts: bool = Field(default=False, description=(
        "every lane sends its first call of the window at once (AIPerf `--burst-phase-starts`) instead of at its "
        "recorded spacing, which spreads the lanes' first calls over tens of seconds: for short windows; "
        "InferenceX keeps the spacing"))
    workers: int | None = Field(default=None, ge=1, le=1024, description=(
        "AIPerf worker processes (`--workers-max`); default: AIPerf's own, min(concurrency, 0.75 x CPUs - 1). "
        "The client's own cost, not the server's: see docs/running.md"))
    record_processors: int | None = Field(default=None, ge=1, le=256, description=(
        "AIPerf record processor services (`--record-processors`); default: AIPerf's own, from the worker count"))
    tokenizer: PathText | None = Field(default=None, description="tokenizer directory; default: the demo one")
    seed: int = Field(default=42, ge=0, lt=2**63, description="seed of trajectory starts and sampling")
    max_sessions: int | None = Field(default=None, ge=1, le=10**9, description="stop after this many sessions (default: time-boxed)")
    unofficial: bool = Field(default=False, description="a smoke run: AIPerf runs with --unsafe-override and marks "
                                                        "every point submission_valid: false (never publishable)")

    @model_validator(mode="after")
    def _one_warmup(self) -> Client:
        if self.warmup_s > 0 and self.warmup_requests_per_lane is not None:
            raise ValueError("warmup_s and warmup_requests_per_lane are exclusive (AIPerf takes one warmup budget)")
        return self


class Server(Strict):
    args: dict[str, ArgValue] = Field(default_factory=dict, description="base SGLang flags, dashless names")
    env: dict[EnvName, EnvValue] = Field(default_factory=dict, description="base server environment")
    sglang_version: str = Field(default="0.5.23", description="pinned SGLang version whose flag table validates args")
    ready_timeout_s: float = Field(default=1800.0, gt=0, le=WEEK_S, description="seconds to wait for the server to become ready")


class Zip(Strict):
    conc: list[Annotated[int, Field(ge=1, le=MAX_CONC)]] = Field(min_length=1, description="concurrencies, one point each")
    args: dict[str, list[ArgValue]] = Field(default_factory=dict, description="flag -> one value per concurrency")
    env: dict[EnvName, list[EnvValue]] = Field(default_factory=dict, description="variable -> one value per concurrency")

    @field_validator("conc")
    @classmethod
    def _once(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError("each concurrency once")
        return v


class PointSpec(Strict):
    extends: str | None = Field(default=None, description="start from another point's settings, e.g. c24")
    args: dict[str, ArgValue | None] = Field(default_factory=dict, description="flag changes; null removes an inherited flag")
    env: dict[EnvName, OptEnvValue] = Field(default_factory=dict, description="env changes; null removes an inherited variable")
    kv_offload: KvOffloadChange | None = Field(default=None, description="changes to the inherited KV offload")
    deployment: PointDeployment | None = Field(default=None, description=(
        "per-role changes (recipes with a deployment section)"))

    @field_validator("extends", mode="before")
    @classmethod
    def _point_ref(cls, v: Any) -> Any:
        return normalize_point_name(v) if isinstance(v, (int, str)) and not isinstance(v, bool) else v


class Pricing(Strict):
    """What the recipe's hardware costs (`harness.recipe.pricing`): the cost of every point run from it."""

    gpu_hour: float = Field(gt=0, allow_inf_nan=False, description="price per GPU-hour, e.g. 3.0")
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$", description="three-letter currency code")
    energy_kwh: float | None = Field(default=None, gt=0, allow_inf_nan=False, description=(
        "price per kWh of GPU energy, added where power is measured and valid"))

    def price(self) -> Price:
        return Price(self.gpu_hour, self.currency, self.energy_kwh)


class Recipe(Strict):
    @field_validator("slo")
    @classmethod
    def _request_slo(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                parse_request_slo(v, "slo")
            except UserError as exc:
                raise ValueError(str(exc)) from None
        return v

    @field_validator("sim_args")
    @classmethod
    def _sim_flags_only(cls, v: dict[str, ArgValue]) -> dict[str, ArgValue]:
        for key in v:
            if not key.startswith("sim-"):
                raise ValueError(f"{key!r}: only simulator flags (sim-*) go here; SGLang flags go in server.args")
        return v

    config_key: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="curve identity, e.g. the file stem")
    infmax_model_prefix: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$", description=(
        "InferenceX model prefix of the published rows and eval metadata, e.g. musespark "
        "(default: config_key up to its first dash)"))
    description: str = Field(default="", description="one line for humans")
    image: Text = Field(description="pinned engine image, e.g. lmsysorg/sglang:v0.5.23")
    engine: Literal["sglang", "sim"] = Field(default="sglang", description="`sim` runs the same argv on the simulator")
    sim_profile: str = Field(default="demo", description="simulator hardware profile when engine is sim")
    sim_traces: str | None = Field(default=None, description="trace corpus replayed when engine is sim (default: client.traces)")
    sim_args: dict[str, ArgValue] = Field(default_factory=dict, description=(
        "simulator-only flags (`sim-crash-after: 30`, `sim-error-rate: 0.2`, ...), rendered only when engine is sim"))
    validity: Thresholds = Field(default_factory=Thresholds, description="thresholds of the validity verdict")
    model: ModelSpec
    hardware: Hardware
    parallelism: Parallelism = Parallelism()
    server: Server = Server()
    speculative: Speculative | None = None
    kv_offload: KvOffload = Field(default=KvOffload(), description="KV offload of every point unless a point changes it")
    client: Client
    zip: Zip | None = Field(default=None, description="points from lined-up lists: conc, args and env value lists")
    points: dict[str, PointSpec] = Field(default_factory=dict, description="points keyed by concurrency (c28 or 28)")
    deployment: Deployment | None = Field(default=None, description=(
        "several workers and a router (aggregated or prefill/decode); absent: one server on one node"))
    secret_names: list[SecretName] = Field(default_factory=list, description=(
        "more environment variables or server arguments whose values are secrets, besides the built-in rule "
        "(redacted from every file and output)"))
    slo: str | None = Field(default=None, description=(
        "per-request SLO every point's record judges its requests by, e.g. 'ttft<=0.5,e2el<=10,intvty>=20' "
        "(`--slo` replaces it)"))
    pricing: Pricing | None = Field(default=None, description=(
        "price per GPU-hour (and per kWh) every point's cost is computed at (`--gpu-hour-price` replaces it)"))


class Point(Strict):
    """One concrete point: effective settings after inheritance (structured blocks not yet rendered)."""

    name: str
    conc: int
    args: dict[str, ArgValue]
    env: dict[str, str]
    kv_offload: KvOffload = KvOffload()
    extends_chain: list[str] = Field(default_factory=list)
    role_args: dict[str, dict[str, ArgValue | None]] = Field(default_factory=dict, description=(
        "per role: the point's arg changes along its extends chain (None removes)"))
    role_env: dict[str, dict[str, str | None]] = Field(default_factory=dict, description=(
        "per role: the point's env changes along its extends chain (None removes)"))


def normalize_point_name(name: Any) -> str:
    """`28`, `"28"` and `"c28"` all name point c28."""
    text = str(name).strip()
    return f"c{text}" if text.isdigit() else text
