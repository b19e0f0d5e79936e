"""A planned sweep on disk (`harness submit` writes it, `harness run-point` reads it)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.evals.plan import EvalTask
from harness.point.run import PointOptions
from harness.point.validity import Thresholds
from harness.recipe.plan import PointPlan


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

    @property
    def n_tasks(self) -> int:
        return len(self.points) + (self.eval is not None)

    def options(self) -> PointOptions:
        return PointOptions(out_dir=Path(self.out_dir), launcher=self.launcher, ready_timeout_s=self.ready_timeout_s,
                            thresholds=self.thresholds, mounts=tuple(self.mounts),
                            gpus=None if self.gpus is None else tuple(self.gpus), overrides=tuple(self.overrides),
                            image_path=self.image_path, variant=self.variant, tag=self.tag, note=self.note,
                            stall_timeout_s=self.stall_timeout_s)


def load_sweep_plan(path: Path) -> SweepPlanFile:
    from harness.artifacts import read_json
    from harness.errors import UserError, pydantic_error_line

    try:
        return SweepPlanFile.model_validate(read_json(path))
    except FileNotFoundError:
        raise UserError(f"{path}: no such sweep plan file") from None
    except ValidationError as exc:
        raise UserError(pydantic_error_line(str(path), exc)) from None
