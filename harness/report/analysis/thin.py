"""Points whose place on a curve rests on little: fewer successful requests than a median needs, or an achieved
concurrency far below the concurrency asked for.

Such a point is measured and may be valid, but one request more or less, or lanes that sat idle for part of the
window, move it along the curve: a dip in throughput or a latency crossing between it and its neighbours is not a
trend. The tables mark it (`MARK` after its concurrency) and a note under them names each marked point and why.

- few requests: under `MIN_REQUESTS` successful requests, the 20 a p50 needs for ten of them to lie beyond it
  (`harness.report.analysis.verdicts.min_requests(50)`, which also marks each percentile from too few requests);
- low load: an achieved concurrency (live session trees over the window, as the record measures it) under
  `MIN_LOAD_RATIO` of the target. A figure from Little's law (no live-session count recorded) reads lower by
  construction and is not judged.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.report.results.load import PointResult

MARK = "◊"
MIN_REQUESTS = 20
MIN_LOAD_RATIO = 0.75


def thin_reasons(p: PointResult) -> list[str]:
    """Why `p`'s place on its curve rests on little (empty: it does not, or it has no record)."""
    if not p.recorded:
        return []
    out: list[str] = []
    n = p.num_requests_successful
    if n is not None and n < MIN_REQUESTS:
        out.append(f"{n} successful requests (a p50 needs {MIN_REQUESTS})")
    load = p.achieved_sessions
    if load is not None and p.conc > 0 and load < MIN_LOAD_RATIO * p.conc:
        out.append(f"achieved concurrency {load:.1f} of {p.conc} (under {MIN_LOAD_RATIO:.0%}: lanes sat idle "
                   "for part of the window)")
    return out


def is_thin(p: PointResult) -> bool:
    return bool(thin_reasons(p))


def marked(cell: str, p: PointResult) -> str:
    """The conc cell `cell` of `p`, with `MARK` where its place on the curve rests on little."""
    return f"{cell} {MARK}" if is_thin(p) else cell


def thin_note(labelled: Iterable[tuple[str, PointResult]]) -> str | None:
    """The note under a table with marked points (`labelled`: (identity, point)); None where none is marked."""
    named = [f"{pid}: {'; '.join(why)}" for pid, p in labelled if (why := thin_reasons(p))]
    if not named:
        return None
    return (f"{MARK} rests on little: " + "; ".join(named) + ". One request more or less moves such a point along "
            "the curve; read a dip or a crossing at it as noise, not a trend (a longer --duration gives it more "
            "requests).")
