"""Recipes: one YAML file describes one benchmark curve.

A recipe holds a base configuration (image, model, parallelism, server args and env, speculative decoding,
KV offload, client settings) and points keyed by concurrency. A point may start from another point's
settings (`extends: c24`) and then change some of them. `expand_points` turns a recipe into concrete
`Point`s: the effective server args and env of every point, with inheritance resolved.

Server args use SGLang's flag names without the leading dashes (`max-running-requests: 3`); `true` renders
as a bare switch. Flag names are checked against the pinned SGLang flag table by the planner.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import UserError, pydantic_error_line

ArgValue = str | int | float | bool | list[str | int | float]
POINT_NAME = re.compile(r"^c(\d+)$")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelSpec(Strict):
    path: str = Field(description="HF id or local path of the checkpoint (--model-path)")
    revision: str | None = Field(None, description="checkpoint revision (--revision)")
    served_name: str = Field(description="name clients use in requests (--served-model-name)")
    chat_template: str | None = Field(None, description="--chat-template (path or builtin name)")
    golden_key: str | None = Field(None, description="model key in the golden acceptance curves")
    precision: str = Field("bf16", description="checkpoint precision label for results (fp4, fp8, bf16)")


class Hardware(Strict):
    gpu: str = Field(description="GPU type label: gb300, h200, sim")
    gpus_per_node: int = Field(ge=1)


class Parallelism(Strict):
    tp: int = Field(1, ge=1)
    ep: int = Field(1, ge=1)
    pp: int = Field(1, ge=1)


class GoldenRef(Strict):
    curve: str
    thinking: Literal["thinking_on", "thinking_off"]
    method: Literal["match-expected", "multinomial"] = "match-expected"
    token_mode: Literal["fixed", "real-draft-token"] = "real-draft-token"


class Speculative(Strict):
    algorithm: Literal["EAGLE", "EAGLE3", "NEXTN", "DFLASH"]
    draft_model: str | None = None
    draft_revision: str | None = None
    num_steps: int | None = Field(None, ge=1)
    num_draft_tokens: int | None = Field(None, ge=1)
    topk: int | None = Field(None, ge=1)
    golden: GoldenRef | None = None
    mode: Literal["benchmark", "eval"] = Field(
        "benchmark", description="benchmark injects synthetic acceptance from the golden curve; eval injects none")


class KvOffload(Strict):
    kind: Literal["none", "dram"] = "none"
    hicache_size_gb: int | None = Field(None, ge=1, description="--hicache-size (GB per rank)")
    write_policy: Literal["write_through", "write_back", "write_through_selective"] | None = None


class Client(Strict):
    traces: str = Field(description="trace corpus: a directory of Weka v1 JSON files (relative to the recipe)")
    duration_s: float = Field(60, gt=0, description="profiling window length")
    grace_s: float = Field(30, ge=0, description="wait for in-flight requests after the window")
    warmup_s: float = Field(0, ge=0, description="agentic cache warmup before profiling")
    tokenizer: str | None = Field(None, description="tokenizer directory; default: the model's, or the demo one")
    seed: int = 42
    max_sessions: int | None = Field(None, ge=1, description="stop after this many sessions (default: time-boxed)")


class Server(Strict):
    args: dict[str, ArgValue] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    sglang_version: str = Field("0.5.23", description="pinned SGLang version whose flag table validates args")
    ready_timeout_s: float = Field(1800, gt=0)

    @field_validator("args")
    @classmethod
    def _no_dashes(cls, v: dict[str, ArgValue]) -> dict[str, ArgValue]:
        for key in v:
            if key.startswith("-"):
                raise ValueError(f"write flag names without dashes: {key!r} -> {key.lstrip('-')!r}")
        return v


class PointSpec(Strict):
    extends: str | None = Field(None, description="start from another point's settings, e.g. c24")
    args: dict[str, ArgValue | None] = Field(default_factory=dict, description="null removes an inherited arg")
    env: dict[str, str | None] = Field(default_factory=dict, description="null removes an inherited variable")


class Recipe(Strict):
    config_key: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    description: str = ""
    image: str = Field(description="pinned engine image, e.g. lmsysorg/sglang:v0.5.23")
    engine: Literal["sglang", "sim"] = "sglang"
    sim_profile: str = Field("demo", description="simulator hardware profile when engine is sim")
    model: ModelSpec
    hardware: Hardware
    parallelism: Parallelism = Parallelism()
    server: Server = Server()
    speculative: Speculative | None = None
    kv_offload: KvOffload = KvOffload()
    client: Client
    points: dict[str, PointSpec]

    @field_validator("points")
    @classmethod
    def _point_names(cls, v: dict[str, PointSpec]) -> dict[str, PointSpec]:
        if not v:
            raise ValueError("a recipe needs at least one point")
        for name in v:
            if not POINT_NAME.match(name):
                raise ValueError(f"point names are c<concurrency>, got {name!r}")
        return v


class Point(Strict):
    """One concrete point: effective settings after inheritance."""

    name: str
    conc: int
    args: dict[str, ArgValue]
    env: dict[str, str]
    extends_chain: list[str] = Field(default_factory=list)


def load_recipe(path: str | Path) -> Recipe:
    """Read and validate a recipe file; any mistake is a one-line UserError naming file and key path."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise UserError(f"{path}: no such recipe file") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    return parse_recipe(raw, source=str(path))


def parse_recipe(raw: Any, source: str = "<recipe>") -> Recipe:
    if not isinstance(raw, dict):
        raise UserError(f"{source}: a recipe is a mapping of keys")
    if isinstance(raw.get("points"), dict):
        raw = {**raw, "points": {str(k) if not isinstance(k, int) else f"c{k}": v or {}
                                 for k, v in raw["points"].items()}}
    try:
        recipe = Recipe.model_validate(raw)
    except ValidationError as exc:
        raise UserError(pydantic_error_line(source, exc)) from None
    expand_points(recipe, source)  # inheritance errors surface at load time
    return recipe


def _resolve(name: str, recipe: Recipe, source: str, seen: tuple[str, ...]) -> Point:
    spec = recipe.points[name]
    if name in seen:
        cycle = " -> ".join((*seen, name))
        raise UserError(f"{source}: points.{seen[0]}.extends: cycle {cycle}")
    if spec.extends is None:
        args: dict[str, ArgValue] = dict(recipe.server.args)
        env: dict[str, str] = dict(recipe.server.env)
        chain: list[str] = []
    else:
        if spec.extends not in recipe.points:
            known = ", ".join(recipe.points)
            raise UserError(f"{source}: points.{name}.extends: unknown point {spec.extends!r} (points: {known})")
        parent = _resolve(spec.extends, recipe, source, (*seen, name))
        args, env, chain = dict(parent.args), dict(parent.env), [*parent.extends_chain, spec.extends]
    for key, value in spec.args.items():
        if value is None:
            args.pop(key, None)
        else:
            args[key] = value
    for key, val in spec.env.items():
        if val is None:
            env.pop(key, None)
        else:
            env[key] = val
    conc = int(POINT_NAME.match(name).group(1))  # type: ignore[union-attr]
    return Point(name=name, conc=conc, args=args, env=env, extends_chain=chain)


def expand_points(recipe: Recipe, source: str = "<recipe>") -> list[Point]:
    """All points of the recipe, sorted by concurrency, with `extends` chains resolved."""
    points = [_resolve(name, recipe, source, ()) for name in recipe.points]
    return sorted(points, key=lambda p: p.conc)


def select_points(points: list[Point], names: list[str] | None, source: str = "<recipe>") -> list[Point]:
    """Keep the named points (`c4` or `4`), in recipe order; unknown names are an error."""
    if not names:
        return points
    wanted = [n if n.startswith("c") else f"c{n}" for n in names]
    by_name = {p.name: p for p in points}
    missing = [n for n in wanted if n not in by_name]
    if missing:
        raise UserError(f"{source}: no point {', '.join(missing)} (points: {', '.join(by_name)})")
    return [p for p in points if p.name in wanted]
