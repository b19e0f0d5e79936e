"""What a point's work costs at a stated price (pure).

The hourly cost of a point is its GPUs times the price per GPU-hour, plus, where power was measured and is valid
and an energy price is given, its average total GPU power (kW) times the price per kWh. From it:

- per million total (input + output) and output tokens: hourly cost / (tokens/s x 3600) x 1e6;
- per agent-hour: hourly cost / the achieved concurrency (live sessions over the window);
- per good request: hourly cost / (good requests/s x 3600), when an SLO was given.

Every figure rests on the throughput window of the record; `basis` keeps what it was computed from.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from harness.recipe.pricing import Price

HOW_TO_PRICE = ("no cost: give a price per GPU-hour (--gpu-hour-price 3.0, or 3.0EUR; --energy-price 0.12 per kWh) "
                "on run, sweep, search, report or compare, or pricing: {gpu_hour: 3.0} in the recipe")


@dataclass(frozen=True)
class CostBasis:
    """The point's figures a cost is computed from (None: not measured)."""

    num_gpus: int
    total_tokens_per_s: float | None
    output_tokens_per_s: float | None
    achieved_sessions: float | None
    good_requests_per_s: float | None = None
    avg_total_gpu_power_w: float | None = None     # only when power is valid
    power_reason: str | None = None                # why avg_total_gpu_power_w is None


def _per(hourly: float, rate_per_s: float | None, scale: float = 1.0) -> float | None:
    return None if not rate_per_s or rate_per_s <= 0 else hourly / (rate_per_s * 3600.0) * scale


def cost_block(basis: CostBasis, price: Price) -> dict[str, Any]:
    """The record's `cost` block."""
    gpus = basis.num_gpus * price.gpu_hour
    energy: float | None = None
    energy_reason: str | None = None
    if price.energy_kwh is None:
        energy_reason = "no energy price"
    elif basis.avg_total_gpu_power_w is None:
        energy_reason = basis.power_reason or "power not measured"
    else:
        energy = basis.avg_total_gpu_power_w / 1000.0 * price.energy_kwh
    hourly = gpus + (energy or 0.0)
    sessions = basis.achieved_sessions
    return {
        "currency": price.currency,
        "gpu_hour_price": price.gpu_hour,
        "energy_price_kwh": price.energy_kwh,
        "hourly": {"gpus": gpus, "energy": energy, "total": hourly},
        "energy_reason": energy_reason,
        "per_million_total_tokens": _per(hourly, basis.total_tokens_per_s, 1e6),
        "per_million_output_tokens": _per(hourly, basis.output_tokens_per_s, 1e6),
        "per_agent_hour": None if not sessions or sessions <= 0 else hourly / sessions,
        "per_good_request": _per(hourly, basis.good_requests_per_s),
        "basis": asdict(basis),
    }


def basis_of(record: dict[str, Any]) -> CostBasis:
    """A point record's (`point_result.json`) cost basis: its GPUs, throughput, achieved concurrency, the good
    requests/s of its `slo_attainment` when it has one, and its power when valid."""
    tput = (record.get("request_metrics") or {}).get("throughput") or {}
    achieved = record.get("achieved_concurrency") or {}
    slo = record.get("slo_attainment") or {}
    power = record.get("avg_total_gpu_power_w") if record.get("power_valid") is True else None
    reasons = record.get("power_invalid_reasons") or []
    return CostBasis(
        num_gpus=int(record.get("num_gpus") or 1),
        total_tokens_per_s=(tput.get("total") or {}).get("tokens_per_second"),
        output_tokens_per_s=(tput.get("output") or {}).get("tokens_per_second"),
        achieved_sessions=achieved.get("sessions"),
        good_requests_per_s=slo.get("request_goodput_rps"),
        avg_total_gpu_power_w=power,
        power_reason=None if power is not None else
        "power not valid (" + (", ".join(str(r) for r in reasons) or "not measured") + ")")
