"""Eval thresholds (`harness/evals/thresholds.yaml`): the minimum score per task, per model prefix.

Resolution: `models.<prefix>.<task>` → `default.<task>` → the caller's `--min-score`; with none of
them the task has no threshold and the eval cannot pass or fail a gate (a user error).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import UserError, pydantic_error_line

THRESHOLDS_FILE = Path(__file__).with_name("thresholds.yaml")


class ThresholdsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default: dict[str, float] = Field(default_factory=dict)
    models: dict[str, dict[str, float]] = Field(default_factory=dict)


class Threshold(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str
    min_score: float
    source: str  # "models.<prefix>", "default" or "--min-score"


def load_thresholds(path: Path = THRESHOLDS_FILE) -> ThresholdsFile:
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise UserError(f"{path}: no such thresholds file") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    try:
        parsed = ThresholdsFile.model_validate(raw if raw is not None else {})
    except ValidationError as exc:
        raise UserError(pydantic_error_line(str(path), exc)) from None
    for where, table in [("default", parsed.default), *((f"models.{k}", v) for k, v in parsed.models.items())]:
        for task, value in table.items():
            if not 0.0 <= value <= 1.0:
                raise UserError(f"{path}: {where}.{task}: expected a score in [0, 1], got {value}")
    return parsed


def resolve_threshold(thresholds: ThresholdsFile, model_prefix: str, task: str,
                      min_score: float | None = None) -> Threshold:
    """The threshold of `task` for a model: per-model override, then default, then `min_score`."""
    per_model = thresholds.models.get(model_prefix, {})
    if task in per_model:
        return Threshold(task=task, min_score=per_model[task], source=f"models.{model_prefix}")
    if task in thresholds.default:
        return Threshold(task=task, min_score=thresholds.default[task], source="default")
    if min_score is not None:
        return Threshold(task=task, min_score=min_score, source="--min-score")
    raise UserError(f"no threshold for task {task!r} (model prefix {model_prefix!r}) in {THRESHOLDS_FILE.name}; "
                    f"add one or give --min-score")
