"""Achieved concurrency of a point: what the load really was, beside the concurrency it was asked for.

Our record measures it (`achieved_concurrency.sessions`: live session trees over the throughput window,
comparable to the target). A row without that figure (an InferenceX row, an older record) still gives the
mean number of requests in flight by Little's law, L = λ·W: successful requests per second of the window
times their mean end-to-end latency. That is a different, lower figure (a session's think time between its
requests is not in flight), so it is labelled as such. Where neither is known it is absent, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.report.results.load import PointResult

Source = Literal["record", "littles_law", "absent"]


@dataclass(frozen=True)
class Achieved:
    """A point's achieved concurrency, where it came from, and why it is absent when it is."""

    value: float | None
    source: Source
    reason: str = ""


def littles_law(successful: int | None, mean_e2el_s: float | None, window_s: float | None) -> float | None:
    """Mean requests in flight over a window: `successful / window_s * mean_e2el_s` (Little's law).

    None when an input is missing, the window is not positive, or nothing succeeded.
    """
    if successful is None or mean_e2el_s is None or window_s is None:
        return None
    if successful <= 0 or window_s <= 0 or mean_e2el_s < 0:
        return None
    return successful / window_s * mean_e2el_s


def achieved_concurrency(p: PointResult) -> Achieved:
    """The record's live-session concurrency; else requests in flight by Little's law; else absent."""
    if p.achieved_sessions is not None:
        return Achieved(p.achieved_sessions, "record")
    if not p.recorded:
        return Achieved(None, "absent", "no record: nothing was measured")
    inflight = littles_law(p.num_requests_successful, p.stat("e2el", "mean"), p.window_seconds)
    if inflight is not None:
        return Achieved(inflight, "littles_law")
    return Achieved(None, "absent", "the result records neither an achieved concurrency nor the request "
                                    "count, mean E2EL and window that Little's law needs")
