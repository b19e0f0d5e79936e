"""A tested point's outcome against one `<=` SLO on a percentile, recomputed from its own record by the rules of
docs/search.md (its outcome table), without the search's code: what the search tests check `search.json` against."""

from __future__ import annotations

from typing import Any

SAMPLE = {"too_few_completed", "window_too_short", "concurrency_below_target"}   # invalid only for its sample
LOAD = {"concurrency_below_target"}                                              # the sample reasons of a short load
MIN_ACHIEVED = 0.7                                                               # --min-achieved-ratio's default


def own_outcome(record: dict[str, Any], conc: int, value: float | None, interval: list[float | None] | None,
                threshold: float) -> str:
    """`fail`, `inconclusive` or `pass` for the point whose record this is, `value` its metric and `interval` the
    95 % bounds of it (the search's, `[low, high]`, an unbounded end null: a record holds no per-request bounds)."""
    if record["state"] != "completed":
        return "fail"
    reasons = {r["code"] for r in record["validity"]["reasons"]}
    if reasons - SAMPLE:
        return "fail"
    achieved = (record.get("achieved_concurrency") or {}).get("sessions")
    low_load = achieved is not None and achieved < MIN_ACHIEVED * conc
    straddles = interval is not None and (interval[0] is None or interval[0] <= threshold) and (
        interval[1] is None or threshold <= interval[1])
    clear_breach = value is not None and value > threshold and interval is not None and not straddles
    if clear_breach and reasons <= LOAD and (low_load or reasons):
        return "fail"   # less load than the target's already breaches it: the target's load does too
    if reasons or low_load or straddles:
        return "inconclusive"
    return "pass" if value is not None and value <= threshold else "fail"
