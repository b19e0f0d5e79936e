"""A planned sweep on disk (`harness submit` writes it, `harness run-point` reads it).

One array task per point, or (`reuse_deployment`) one task that runs every point in order on one deployment.

Its secret values are numbered placeholders (`harness.redact.seal`); `load_sweep_plan` puts them back from
`HARNESS_SECRETS` in the task's environment (set by `harness submit` for sbatch) and removes that variable, so
no child process inherits it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.artifacts import read_json
from harness.errors import UserError, pydantic_error_line
from harness.evals.plan import EvalTask
from harness.point.run import PointOptions
from harness.recipe.plan import PointPlan
from harness.recipe.request_slo import parse_request_slo
from harness.recipe.schema import Pricing
from harness.recipe.thresholds import Thresholds
from harness.redact import sealed_numbers, unseal

SECRETS_ENV = "HARNESS_SECRETS"


class SweepPlanFile(BaseModel):
    """A planned sweep on disk: the options every point runs with and each point's plan."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int | None = None   # written by harness.artifacts.write_json
    out_dir: str
    launcher: str = "local"
    ready_timeout_s: float = 1800.0
    stall_timeout_s: float | None = None   # None: derived from each point's window
    thresholds: Thresholds = Thresholds()
    mounts: list[str] = []
    image_path: str | None = None
    gpus: list[str] | None = None
    overrides: list[str] = []
    variant: str | None = None
    tag: str | None = None
    note: str | None = None
    points: list[PointPlan]
    eval: EvalTask | None = None   # one more array task after the points (`submit --with-eval`)
    reuse_deployment: bool = False   # `submit --reuse-deployment`: ONE task runs every point on one deployment
    slo: str | None = None           # the recipe's per-request SLO (each record's slo_attainment)
    pricing: Pricing | None = None   # the recipe's, else the cluster profile's price (each record's cost)

    @property
    def n_tasks(self) -> int:
        if self.reuse_deployment:
            return 1
        return len(self.points) + (self.eval is not None)

    def options(self) -> PointOptions:
        return PointOptions(out_dir=Path(self.out_dir), launcher=self.launcher, ready_timeout_s=self.ready_timeout_s,
                            thresholds=self.thresholds, mounts=tuple(self.mounts),
                            gpus=None if self.gpus is None else tuple(self.gpus), overrides=tuple(self.overrides),
                            image_path=self.image_path, variant=self.variant, tag=self.tag, note=self.note,
                            stall_timeout_s=self.stall_timeout_s,
                            slo=None if self.slo is None else parse_request_slo(self.slo, "slo"),
                            price=None if self.pricing is None else self.pricing.price())


def load_sweep_plan(path: Path) -> SweepPlanFile:
    secrets = os.environ.pop(SECRETS_ENV, None)
    try:
        data = read_json(path)
        missing = sealed_numbers(data)
        if missing:
            values = _secret_values(secrets)
            missing -= values.keys()
            if missing:
                raise UserError(f"{path}: {len(missing)} secret value(s) of this plan are not in ${SECRETS_ENV} "
                                "(`harness submit` passes them to sbatch; a job submitted by hand has none)")
            data = unseal(data, values)
        return SweepPlanFile.model_validate(data)
    except FileNotFoundError:
        raise UserError(f"{path}: no such sweep plan file") from None
    except ValidationError as exc:
        raise UserError(pydantic_error_line(str(path), exc)) from None


def _secret_values(text: str | None) -> dict[str, str]:
    try:
        values = json.loads(text or "{}")
    except json.JSONDecodeError:
        values = None
    if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
        raise UserError(f"${SECRETS_ENV}: not a JSON object of strings")
    return {str(k): v for k, v in values.items()}
