"""The validity thresholds a recipe sets (`validity:`): what a point must reach for its verdict to be valid."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Thresholds(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    min_completed_requests: int = Field(default=10, ge=0, description="successful profiled requests needed")
    min_window_fraction: float = Field(default=0.5, ge=0, le=1, description="measured window / requested duration")
    max_error_ratio: float = Field(default=0.10, ge=0, le=1,
                                   description="failed / completed requests (InferenceX's error-rate gate)")
    max_cancelled_ratio: float = Field(default=0.20, ge=0, le=1, description="cancelled at cutoff / requests sent")
    min_concurrency_ratio: float = Field(
        default=0.5, ge=0, le=1, description="achieved session-tree concurrency / target concurrency")
    max_accept_length_error: float = Field(default=0.02, ge=0, description="|achieved - target| / target")
    require_power: bool = Field(default=False, description="invalid without valid power (also `--require-power`)")
