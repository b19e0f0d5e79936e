"""`--slo` (per-request bounds) and `--gpu-hour-price`/`--energy-price`: the options that judge a point by a request
SLO and price its work, on `run`, `sweep`, `search`, `report` and `compare`. A flag replaces the recipe's `slo:` or
`pricing:`; a malformed one is one error line naming the flag (`harness.recipe.request_slo`, `harness.recipe.pricing`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.recipe.pricing import Price
    from harness.recipe.request_slo import RequestSlo
    from harness.recipe.schema import Recipe

SLO_HELP = ("per-request SLO: bounds each request's own TTFT (s), E2EL (s) and interactivity (tokens/s) must meet, "
            "e.g. 'ttft<=0.5,e2el<=10,intvty>=20'; each point then records its attainment (share of requests "
            "meeting every bound) and goodput")


def add_slo_option(parser: argparse.ArgumentParser, help_text: str = SLO_HELP) -> None:
    parser.add_argument("--slo", dest="request_slo", metavar="BOUNDS", help=help_text)


def add_price_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpu-hour-price", metavar="PRICE",
                        help="price per GPU-hour, optionally with a currency code (3.0 or 2.5EUR; default USD): "
                             "each point gets its cost per million tokens, per agent-hour and per good request")
    parser.add_argument("--energy-price", metavar="PRICE",
                        help="with --gpu-hour-price: price per kWh of GPU energy, added where power is measured "
                             "and valid")


def slo_of(args: argparse.Namespace, recipe: Recipe | None = None) -> RequestSlo | None:
    """`--slo`, else the recipe's `slo:`, else None."""
    from harness.recipe.request_slo import parse_request_slo

    text = getattr(args, "request_slo", None)
    if text is not None:
        return parse_request_slo(text, "--slo")
    if recipe is not None and recipe.slo is not None:
        return parse_request_slo(recipe.slo, "slo")
    return None


def price_of(args: argparse.Namespace, recipe: Recipe | None = None) -> Price | None:
    """`--gpu-hour-price` (with `--energy-price`), else the recipe's `pricing:`, else None."""
    from harness.errors import UserError
    from harness.recipe.pricing import parse_price

    gpu_hour = getattr(args, "gpu_hour_price", None)
    energy = getattr(args, "energy_price", None)
    if gpu_hour is not None:
        return parse_price(gpu_hour, energy)
    if energy is not None:
        raise UserError("--energy-price: goes with --gpu-hour-price (the GPU-hour price names the currency)")
    if recipe is not None and recipe.pricing is not None:
        return recipe.pricing.price()
    return None
