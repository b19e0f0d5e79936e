"""What a point's record says of it at a request SLO and a price, when given (`run --slo ... --gpu-hour-price ...`,
or the recipe's `slo:` and `pricing:`): `slo_attainment` (`harness.point.record.slo`) and `cost`
(`harness.point.record.cost`), both in our record only, never in the published row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.point.record.cost import basis_of, cost_block
from harness.point.record.result_fields import RequestRecord
from harness.point.record.slo import attainment
from harness.recipe.pricing import Price
from harness.recipe.request_slo import RequestSlo


@dataclass(frozen=True)
class Judging:
    """The request SLO and the price a point is judged by (None: not given)."""

    slo: RequestSlo | None = None
    price: Price | None = None


def judged_fields(records: list[RequestRecord], cancelled_at_cutoff: int | None, num_gpus: int,
                  record: dict[str, Any], judging: Judging) -> dict[str, Any]:
    """The record's `slo_attainment` and `cost` (each only when its SLO or price is given); the cost counts the good
    requests of the attainment computed here, and the power of `record`."""
    out: dict[str, Any] = {}
    if judging.slo is not None:
        out["slo_attainment"] = attainment(records, cancelled_at_cutoff, num_gpus, judging.slo)
    if judging.price is not None:
        out["cost"] = cost_block(basis_of({**record, **out}), judging.price)
    return out


NOT_JUDGED = Judging()
