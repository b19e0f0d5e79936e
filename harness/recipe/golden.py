"""Golden acceptance-length (AL) curves and the synthetic-acceptance environment they imply.

A golden curve is one YAML file in `golden_al_distribution/`, named after the curve:

    <model key>:
      thinking_on:  {<k>: <AL>, ...}
      thinking_off: {<k>: <AL>, ...}

k is the draft length (draft tokens proposed per verify step) and AL the mean number of tokens
committed per verify step, bonus token included (so 1 <= AL <= k + 1), with two decimals.

For a speculative-decoding benchmark point the harness sets SGLang's synthetic acceptance to the golden
AL for the model, thinking mode and draft length of that point (`acceptance_env`). This module is the
only place those variables are produced; recipes may not set them. Unknown curves, models, thinking modes
and draft lengths are errors: a golden value is looked up, never interpolated or guessed.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, field_validator, model_validator

from harness.errors import UserError
from harness.inputs.yaml_input import Where, load_yaml, read_text

THINKING_MODES: tuple[str, ...] = ("thinking_on", "thinking_off")
ACC_ENV_PREFIX = "SGLANG_SIMULATE_ACC_"
ENV_LEN = "SGLANG_SIMULATE_ACC_LEN"
ENV_METHOD = "SGLANG_SIMULATE_ACC_METHOD"
ENV_TOKEN_MODE = "SGLANG_SIMULATE_ACC_TOKEN_MODE"
METHODS: tuple[str, ...] = ("match-expected", "multinomial")
TOKEN_MODES: tuple[str, ...] = ("fixed", "real-draft-token")
MODES: tuple[str, ...] = ("perf", "eval")

# Speculative algorithms whose draft length is --speculative-num-steps (NEXTN is SGLang's MTP spelling).
EAGLE_FAMILY: tuple[str, ...] = ("EAGLE", "EAGLE3", "NEXTN", "MTP")
DFLASH = "DFLASH"
DSPARK = "DSPARK"   # k = --speculative-dspark-block-size (draft tokens per block; verify width k + 1)
_NUM_STEPS = "--speculative-num-steps"
_TOPK = "--speculative-eagle-topk"
_DRAFT_TOKENS = "--speculative-num-draft-tokens"
_DFLASH_BLOCK = "--speculative-dflash-block-size"
_DSPARK_BLOCK = "--speculative-dspark-block-size"

_CURVE_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")

DraftLength = Annotated[int, Strict(), Field(ge=1)]
AcceptanceLength = Annotated[float, Strict()]


class ModelCurve(BaseModel):
    """The golden values of one model: draft length k -> AL, per thinking mode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thinking_on: dict[DraftLength, AcceptanceLength] | None = None
    thinking_off: dict[DraftLength, AcceptanceLength] | None = None

    @field_validator("thinking_on", "thinking_off")
    @classmethod
    def _values_in_range(cls, table: dict[int, float] | None) -> dict[int, float] | None:
        if table is None:
            return None
        if not table:
            raise ValueError("expected at least one `k: AL` entry")
        for k, al in table.items():
            if not math.isfinite(al) or not 1.0 <= al <= k + 1:
                raise ValueError(f"k={k}: AL {al} is outside [1, k+1] = [1, {k + 1}]")
            if round(al, 2) != al:
                raise ValueError(f"k={k}: AL {al} has more than two decimals")
        return dict(sorted(table.items()))

    @model_validator(mode="after")
    def _has_a_mode(self) -> ModelCurve:
        if self.thinking_on is None and self.thinking_off is None:
            raise ValueError("expected thinking_on and/or thinking_off")
        return self

    def modes(self) -> list[str]:
        """The thinking modes this model has values for."""
        return [m for m in THINKING_MODES if getattr(self, m) is not None]


class GoldenCurve(BaseModel):
    """One golden curve file: its name, where it came from, and its models."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    source: str
    models: dict[str, ModelCurve] = Field(min_length=1)

    def lookup(self, model_key: str, thinking: str, k: int) -> float:
        """The golden AL for (model, thinking mode, draft length k); anything unknown is a UserError."""
        model = self.models.get(model_key)
        if model is None:
            raise UserError(
                f"golden curve {self.name}: no model {model_key!r} (known: {', '.join(sorted(self.models))})"
            )
        if thinking not in THINKING_MODES:
            raise UserError(
                f"golden curve {self.name}: thinking mode must be one of {', '.join(THINKING_MODES)}, "
                f"got {thinking!r}"
            )
        table: dict[int, float] | None = getattr(model, thinking)
        if table is None:
            raise UserError(
                f"golden curve {self.name}: {model_key} has no {thinking} values "
                f"(known: {', '.join(model.modes())})"
            )
        if isinstance(k, bool) or not isinstance(k, int):
            raise UserError(f"golden curve {self.name}: draft length k must be an integer, got {k!r}")
        if k not in table:
            raise UserError(
                f"golden curve {self.name}: no golden AL for {model_key}/{thinking}/k={k} "
                f"(known k: {', '.join(str(x) for x in table)}); golden values are never interpolated"
            )
        return table[k]


def golden_dir() -> Path:
    """The directory holding the shipped golden curve files (the `golden_al_distribution` package)."""
    import golden_al_distribution

    return Path(golden_al_distribution.__file__).resolve().parent


def list_curves(directory: Path | None = None) -> list[str]:
    """Names of the golden curves available (file stems), sorted."""
    root = directory or golden_dir()
    return sorted(p.stem for p in root.glob("*.yaml") if _CURVE_NAME.fullmatch(p.stem))


def load_curve(name: str, directory: Path | None = None) -> GoldenCurve:
    """Load and validate the golden curve `name` (a file stem of `golden_al_distribution/`)."""
    return _load_curve(name, directory or golden_dir())


@lru_cache(maxsize=64)
def _load_curve(name: str, root: Path) -> GoldenCurve:
    known = list_curves(root)
    if not _CURVE_NAME.fullmatch(name) or name not in known:
        raise UserError(f"unknown golden curve {name!r} (known: {', '.join(known) or 'none'})")
    path = root / f"{name}.yaml"
    where = _display(path)
    data, lines = load_yaml(read_text(path, "golden curve"), where)
    if not isinstance(data, dict) or not data:
        raise UserError(f"{where}: <root>: expected a mapping `<model key>: {{thinking_on: {{k: AL}}}}`")
    try:
        return GoldenCurve.model_validate({"name": name, "source": where, "models": data})
    except ValidationError as exc:
        first = exc.errors()[0]
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise Where(where, lines).error(tuple(first["loc"][1:]), msg) from None  # drop the "models" wrapper


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return f"golden_al_distribution/{path.name}" if path.parent == golden_dir() else str(path)


def lookup(curve_name: str, model_key: str, thinking: str, k: int, directory: Path | None = None) -> float:
    """The golden AL of `curve_name` for (model, thinking mode, draft length k)."""
    return load_curve(curve_name, directory).lookup(model_key, thinking, k)


def _flag_int(server_args: dict[str, object], flag: str, algorithm: str) -> int | None:
    """The integer value of `flag` in server_args (keys with or without leading `--`), or None."""
    for key in (flag, flag[2:]):
        if key in server_args:
            value = server_args[key]
            if isinstance(value, bool) or not isinstance(value, int):
                raise UserError(f"{flag}: {algorithm} needs an integer, got {value!r}")
            return value
    return None


def normalize_algorithm(algorithm: str) -> str:
    """The speculative algorithm in upper case, checked against those with a draft-length rule."""
    name = str(algorithm).strip().upper()
    if name not in EAGLE_FAMILY and name not in (DFLASH, DSPARK):
        supported = ", ".join((*EAGLE_FAMILY, DFLASH, DSPARK))
        raise UserError(
            f"speculative algorithm {algorithm!r} has no golden draft-length rule (supported: {supported})"
        )
    return name


def draft_length(algorithm: str, server_args: dict[str, object]) -> int:
    """Draft length k used for the golden lookup.

    EAGLE / EAGLE3 / NEXTN (MTP): k = --speculative-num-steps.
    DSPARK: k = --speculative-dspark-block-size (its draft tokens per block).
    DFLASH: k = block size - 1, the block size being --speculative-num-draft-tokens or its alias
    --speculative-dflash-block-size (the block's first position is the anchor, not a draft token).
    The flag must be given explicitly: SGLang would otherwise pick a value from the model or draft config.
    """
    algo = normalize_algorithm(algorithm)
    if algo in EAGLE_FAMILY:
        steps = _flag_int(server_args, _NUM_STEPS, algo)
        if steps is None:
            raise UserError(
                f"{_NUM_STEPS}: {algo} needs an explicit value to pick the golden AL "
                "(SGLang would choose one from the model architecture)"
            )
        if steps < 1:
            raise UserError(f"{_NUM_STEPS}: {steps} leaves no draft token (expected >= 1)")
        return steps
    if algo == DSPARK:
        gamma = _flag_int(server_args, _DSPARK_BLOCK, algo)
        if gamma is None or gamma < 1:
            raise UserError(f"{_DSPARK_BLOCK}: DSPARK needs an explicit block size >= 1 to pick the golden AL "
                            f"(got {gamma})")
        return gamma
    block = _flag_int(server_args, _DRAFT_TOKENS, algo)
    alias = _flag_int(server_args, _DFLASH_BLOCK, algo)
    if block is not None and alias is not None and block != alias:
        raise UserError(f"{_DRAFT_TOKENS} {block} and {_DFLASH_BLOCK} {alias} disagree (give one of them)")
    size = block if block is not None else alias
    if size is None:
        raise UserError(
            f"{_DRAFT_TOKENS}: DFLASH needs an explicit block size to pick the golden AL "
            "(SGLang would take it from the draft config)"
        )
    if size < 2:
        raise UserError(
            f"{_DRAFT_TOKENS}: block size {size} leaves no draft token (the first position is the anchor; "
            "expected >= 2)"
        )
    return size - 1


def max_acceptance_length(algorithm: str, server_args: dict[str, object]) -> int:
    """SGLang's upper clamp of the simulated AL: steps + 1 (EAGLE family), block size + 1 (DSPARK) or the block
    size (DFLASH)."""
    return draft_length(algorithm, server_args) + 1


def check_no_recipe_acceptance_env(env: dict[str, object], where: str) -> None:
    """Reject SGLANG_SIMULATE_ACC_* set by a recipe: synthetic acceptance comes from the golden curve only.

    `where` is the location prefix of the error, e.g. "recipes/x.yaml: points.c24.env".
    """
    for key in env:
        if str(key).startswith(ACC_ENV_PREFIX):
            raise UserError(
                f"{where}.{key}: synthetic acceptance is set by the harness from the golden curve; "
                "remove it from the recipe"
            )


def acceptance_env(
    *,
    algorithm: str | None,
    server_args: dict[str, object],
    curve: str,
    model_key: str,
    thinking: str,
    mode: Literal["perf", "eval"] | str,
    method: str = "match-expected",
    token_mode: str = "real-draft-token",
    directory: Path | None = None,
) -> dict[str, str]:
    """The SGLANG_SIMULATE_ACC_* variables to inject into a server's environment.

    `mode="eval"` (accuracy evals run with real acceptance) and `algorithm=None` (no speculative
    decoding) inject nothing. Otherwise the golden AL for the point's draft length is checked against
    SGLang's clamp (1 <= AL <= max_len), and `real-draft-token` requires `--speculative-eagle-topk 1`
    for the EAGLE family. The AL is formatted with two decimals.
    """
    if mode not in MODES:
        raise UserError(f"acceptance mode must be one of {', '.join(MODES)}, got {mode!r}")
    if method not in METHODS:
        raise UserError(f"{ENV_METHOD} must be one of {', '.join(METHODS)}, got {method!r}")
    if token_mode not in TOKEN_MODES:
        raise UserError(f"{ENV_TOKEN_MODE} must be one of {', '.join(TOKEN_MODES)}, got {token_mode!r}")
    if mode == "eval" or algorithm is None:
        return {}
    algo = normalize_algorithm(algorithm)
    k = draft_length(algo, server_args)
    if algo in EAGLE_FAMILY and token_mode == "real-draft-token":
        topk = _flag_int(server_args, _TOPK, algo)
        if topk != 1:
            got = "unset" if topk is None else str(topk)
            raise UserError(
                f"{_TOPK}: {ENV_TOKEN_MODE}=real-draft-token needs {_TOPK} 1 for {algo} (got {got})"
            )
    al = lookup(curve, model_key, thinking, k, directory)
    max_len = k + 1
    if not 1.0 <= al <= max_len:
        raise UserError(
            f"golden curve {curve}: AL {al:.2f} for {model_key}/{thinking}/k={k} is outside "
            f"[1, {max_len}] and SGLang would clamp it silently"
        )
    return {ENV_LEN: f"{al:.2f}", ENV_METHOD: method, ENV_TOKEN_MODE: token_mode}
