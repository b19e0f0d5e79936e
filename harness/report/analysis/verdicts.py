"""The verdict table a report opens with: per point, whether it is valid and publishable and why not, how
many requests and how much load its numbers rest on, and its headline numbers (throughput per GPU, E2EL and
TTFT p50/p90, power).

A percentile is marked (`†`) when it rests on fewer than `MIN_TAIL_SAMPLES` requests beyond it: with n
requests, a p90 is set by the slowest ~n/10 of them, so a p90 from 13 requests is the second-slowest
request, and one slow request moves it. Ten requests beyond the percentile is the least that makes it a
statistic rather than an anecdote; that asks 100 requests of a p90 and 20 of a p50 (`min_requests`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.point.record.sample_size import MIN_TAIL_SAMPLES, min_requests
from harness.report.analysis.achieved import achieved_concurrency
from harness.report.analysis.curves import power_text
from harness.report.analysis.table import TOTAL_PER_GPU, fmt, ordered
from harness.report.results.load import PointResult

FEW = "†"        # a percentile from too few requests
INFLIGHT = "‡"   # achieved concurrency as requests in flight (Little's law), not live sessions

COLUMNS = ("conc", "valid", "publishable", "reasons", "requests ok", "achieved conc", TOTAL_PER_GPU,
           "E2EL p50 (s)", "E2EL p90 (s)", "TTFT p50 (s)", "TTFT p90 (s)", "power")
NUMERIC = frozenset({"conc", "requests ok", "achieved conc", TOTAL_PER_GPU, "E2EL p50 (s)", "E2EL p90 (s)",
                     "TTFT p50 (s)", "TTFT p90 (s)"})
_PERCENTILES = (("e2el", 50), ("e2el", 90), ("ttft", 50), ("ttft", 90))


def few_requests(p: PointResult, percentile: float) -> bool:
    """True when `p`'s successful requests are too few for `percentile` (unknown counts are not judged)."""
    n = p.num_requests_successful
    return n is not None and n < min_requests(percentile)


@dataclass(frozen=True)
class VerdictRow:
    """One point's cells, in `COLUMNS` order."""

    conc: int
    valid: bool
    cells: tuple[str, ...]


def reasons_text(p: PointResult) -> str:
    """`code: message; ...` of an invalid point, `-` for a valid one."""
    return "; ".join(f"{r.code}: {r.message}" if r.message else r.code for r in p.invalid_reasons) or "-"


def _percentile(p: PointResult, metric: str, percentile: int) -> str:
    value = p.stat(metric, f"p{percentile}")
    if value is None:
        return "-"
    return fmt(value) + (f" {FEW}" if few_requests(p, percentile) else "")


def _achieved(p: PointResult) -> str:
    a = achieved_concurrency(p)
    if a.value is None:
        return "-"
    return fmt(a.value, 1) + (f" {INFLIGHT}" if a.source == "littles_law" else "")


def verdict_row(p: PointResult, cell: str | None = None) -> VerdictRow:
    """`cell` names the point in the conc column (its identity in a curve; the concurrency by default)."""
    valid = "valid" if p.valid else "INVALID"
    publishable = p.publish_label or "-"
    cells = (str(p.conc) if cell is None else cell, valid, publishable, reasons_text(p), fmt(p.num_requests_successful),
             _achieved(p), fmt(p.total_tput_per_gpu, 1),
             *(_percentile(p, metric, q) for metric, q in _PERCENTILES), power_text(p))
    return VerdictRow(conc=p.conc, valid=p.valid, cells=cells)


def verdict_rows(points: Iterable[PointResult], cells: Sequence[str] | None = None) -> list[VerdictRow]:
    """One row per point: by concurrency, or in the given order with `cells` (`harness.report.analysis.table.ordered`)."""
    return [verdict_row(p, cell) for cell, p in ordered(points, cells)]


COLUMN_NOTE = ("requests ok: successful requests, the sample every percentile is taken from; achieved conc: mean "
               "live session trees over the throughput window (compare with conc); publishable: the point's "
               "publication status (- where its result records none).")


def footnotes(points: Sequence[PointResult]) -> list[str]:
    """What the table's marks and dashes mean, for the ones that appear in it."""
    out: list[str] = []
    if any(few_requests(p, q) and p.stat(m, f"p{q}") is not None for p in points for m, q in _PERCENTILES):
        out.append(f"{FEW} from too few requests: fewer than {MIN_TAIL_SAMPLES} lie beyond the percentile "
                   f"(a p50 needs {min_requests(50)} successful requests, a p90 {min_requests(90)}); one "
                   "request more or less moves it.")
    achieved = [(p, achieved_concurrency(p)) for p in points]
    if any(a.source == "littles_law" for _, a in achieved):
        out.append(f"{INFLIGHT} requests in flight by Little's law (successful requests / window × mean E2EL): "
                   "the result records no live-session figure; this one leaves out think time, so it reads lower.")
    absent = [f"c{p.conc} ({a.reason})" for p, a in achieved if a.source == "absent"]
    if absent:
        out.append('achieved conc "-": ' + "; ".join(absent) + ".")
    return out
