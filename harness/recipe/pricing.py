"""What a GPU-hour (and a kWh of GPU energy) costs: `--gpu-hour-price 3.0` (USD), `3.0EUR`, `--energy-price 0.12`.

A price is a positive finite number, optionally followed by a three-letter currency code (default USD); the energy
price per kWh, when given, is in the GPU-hour price's currency. Given on `run`, `sweep`, `search`, `report` and
`compare`, or in a recipe as `pricing: {gpu_hour: 3.0, currency: USD, energy_kwh: 0.12}`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from harness.errors import UserError

DEFAULT_CURRENCY = "USD"
_PRICE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]{3})?\s*$")


@dataclass(frozen=True)
class Price:
    """Price per GPU-hour, its currency, and the energy price per kWh (None: energy not priced)."""

    gpu_hour: float
    currency: str = DEFAULT_CURRENCY
    energy_kwh: float | None = None

    @property
    def text(self) -> str:
        energy = f", {self.energy_kwh:g} {self.currency}/kWh" if self.energy_kwh is not None else ""
        return f"{self.gpu_hour:g} {self.currency}/GPU-hour{energy}"


def parse_amount(text: str, key: str) -> tuple[float, str | None]:
    """`3.0` -> (3.0, None); `2.5EUR` -> (2.5, 'EUR'); anything else a one-line UserError naming `key`."""
    match = _PRICE.match(text) if isinstance(text, str) else None
    value = float(match.group(1)) if match else math.nan
    if match is None or not math.isfinite(value) or value <= 0:
        raise UserError(f"{key}: expected a positive price, optionally with a currency code (3.0 or 3.0USD), "
                        f"got {text!r}")
    return value, match.group(2).upper() if match.group(2) else None


def parse_price(gpu_hour: str, energy_kwh: str | None = None, key: str = "--gpu-hour-price") -> Price:
    """A Price from the two options' texts; the energy price's currency, when it names one, must be the same."""
    value, currency = parse_amount(gpu_hour, key)
    energy = None
    if energy_kwh is not None:
        energy, energy_currency = parse_amount(energy_kwh, "--energy-price")
        if energy_currency and energy_currency != (currency or DEFAULT_CURRENCY):
            raise UserError(f"--energy-price: {energy_currency} differs from {key}'s currency "
                            f"{currency or DEFAULT_CURRENCY} (one currency for both)")
    return Price(value, currency or DEFAULT_CURRENCY, energy)
