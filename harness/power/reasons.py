"""Reason codes that make measured power invalid, and what each one means.

Codes are stable snake_case strings: results and `power_validation.json` carry them, and tools
downstream match on them. Any reason makes `power_valid` false.
"""

from __future__ import annotations

from dataclasses import dataclass

NVML_UNAVAILABLE = "nvml_unavailable"
TELEMETRY_FILE_MISSING = "telemetry_file_missing"
TELEMETRY_FILE_UNREADABLE = "telemetry_file_unreadable"
TELEMETRY_FILE_EMPTY = "telemetry_file_empty"
TELEMETRY_COLUMN_MISSING = "telemetry_column_missing"
INVALID_SAMPLE_ROW = "invalid_sample_row"
NO_SAMPLES = "no_samples"
WINDOW_INVALID = "window_invalid"
GPU_COUNT_MISMATCH = "gpu_count_mismatch"
TIMESTAMPS_NOT_MONOTONIC = "timestamps_not_monotonic"
WINDOW_NOT_BRACKETED = "window_not_bracketed"
SAMPLING_GAP_EXCEEDED = "sampling_gap_exceeded"
WINDOW_CLOCK_MISMATCH = "window_clock_mismatch"
ENERGY_COUNTER_NOT_MONOTONIC = "energy_counter_not_monotonic"
ENERGY_COUNTER_MISMATCH = "energy_counter_mismatch"
INVALID_TOKEN_COUNT = "invalid_token_count"
INVALID_REQUEST_COUNT = "invalid_request_count"

DESCRIPTIONS: dict[str, str] = {
    NVML_UNAVAILABLE: "NVML could not be loaded or initialised (no driver, no GPU, no nvidia-ml-py)",
    TELEMETRY_FILE_MISSING: "the power CSV does not exist",
    TELEMETRY_FILE_UNREADABLE: "the power CSV could not be read or decoded",
    TELEMETRY_FILE_EMPTY: "the power CSV has no header line",
    TELEMETRY_COLUMN_MISSING: "a required column (timestamp_ns, gpu_index, gpu_uuid, power_w, energy_mj) is absent",
    INVALID_SAMPLE_ROW: "a row has an unparsable or impossible value (it is skipped, the file is suspect)",
    NO_SAMPLES: "the sampler ran but wrote no sample",
    WINDOW_INVALID: "the client window does not end after it starts",
    GPU_COUNT_MISMATCH: "the number of GPUs in the samples differs from the number the point uses",
    TIMESTAMPS_NOT_MONOTONIC: "a GPU's timestamps repeat or go backwards (the wall clock stepped)",
    WINDOW_NOT_BRACKETED: "a GPU has no sample at or before the window start, or none at or after its end",
    SAMPLING_GAP_EXCEEDED: "two consecutive samples of a GPU around the window are more than 3 s apart",
    WINDOW_CLOCK_MISMATCH: "the window's wall-clock span and its independently measured duration differ "
    "by more than max(0.5 s, 1%)",
    ENERGY_COUNTER_NOT_MONOTONIC: "a GPU's NVML energy counter decreased inside the window",
    ENERGY_COUNTER_MISMATCH: "counter energy and integrated power disagree by more than max(5%, 1 J)",
    INVALID_TOKEN_COUNT: "output or total token count is missing or not positive",
    INVALID_REQUEST_COUNT: "successful request count is missing or not positive",
}


@dataclass(frozen=True)
class Reason:
    """One reason power is invalid: a stable code, a human message, and the GPU it concerns (if one)."""

    code: str
    message: str
    gpu: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"code": self.code, "message": self.message}
        if self.gpu is not None:
            out["gpu"] = self.gpu
        return out
