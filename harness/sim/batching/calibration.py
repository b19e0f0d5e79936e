"""A profile's efficiency constants fitted from microbenchmarks of the GPU it simulates.

`benchmarks/h200_microbench.py` measures one GPU (weight-streaming products, large products,
attention, launches) and writes a JSON file; the shipped measurements sit in
`profiles/measurements/`. A profile that uses them names the file and which of its constants are
measured (`Calibration`); `fit_constants` turns the file into those constants, and the profile's
values must equal the fit (a unit test holds them together), so a constant is never edited by hand
once it is measured.

The fit, against the profile's datasheet figures (`hbm_bw`, `flops`):
- `bw_efficiency`: median weight bytes per second of the bf16 products with decode-sized batches
  (1 to 64 rows, where the weight read dominates) over `hbm_bw`;
- `flops_efficiency`: the best large product at the serving precision's compute type over `flops`
  (W4A16 and bf16 serving compute in bf16; fp8 serving in fp8).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

MEASUREMENT_DIR = Path(__file__).resolve().parent / "profiles" / "measurements"
DECODE_BATCHES = (1, 8, 32, 64)
FITTED = ("bw_efficiency", "flops_efficiency")


class Calibration(BaseModel):
    """Which constants of a profile come from measurements, and which remain assumptions."""

    model_config = ConfigDict(extra="forbid")

    measurements: str  # a file name in profiles/measurements/
    compute_dtype: Literal["bf16", "fp8_e4m3"]
    measured: list[str]
    assumed: list[str]


def load_measurements(name: str) -> dict[str, Any]:
    """One shipped microbenchmark file, by name."""
    data: dict[str, Any] = json.loads((MEASUREMENT_DIR / name).read_text())
    return data


def fit_constants(measurements: dict[str, Any], *, hbm_bw: float, flops: float, compute_dtype: str) -> dict[str, float]:
    """`bw_efficiency` and `flops_efficiency` from one microbenchmark file (see the module docstring)."""
    streaming = [r["weight_bytes_per_s"] for r in measurements["gemv"] if r["batch"] in DECODE_BATCHES]
    products = [r["flops_per_s"] for r in measurements["gemm"] if r.get("dtype") == compute_dtype and "flops_per_s" in r]
    if not streaming or not products:
        raise ValueError(f"the measurements lack decode-batch products or {compute_dtype} products")
    return {
        "bw_efficiency": round(min(1.0, statistics.median(streaming) / hbm_bw), 3),
        "flops_efficiency": round(min(1.0, max(products) / flops), 3),
    }
