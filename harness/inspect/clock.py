"""One clock for everything a point kept: wall-clock UTC nanoseconds, shown as seconds from the profiling window's
start (AIPerf's own profiling phase start; else the first profiled request's credit; else the harness's
`profiling` phase mark)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.inspect.point_files import PointFiles

NS = 1e9
AIPERF_PHASE = "AIPerf's profiling phase"


@dataclass(frozen=True)
class Window:
    """The profiling window (UTC ns) and where its start came from."""

    start_ns: int
    end_ns: int | None
    source: str

    def s(self, ns: int | float) -> float:
        """Seconds from the window's start."""
        return round((ns - self.start_ns) / NS, 6)


def aiperf_phase_ranges(pf: PointFiles) -> dict[str, tuple[int, int]]:
    """AIPerf's phase time ranges (warmup, profiling) from its server-metrics export, UTC ns."""
    ranges = (((pf.server_metrics or {}).get("summary") or {}).get("phase_time_ranges") or {})
    out: dict[str, tuple[int, int]] = {}
    for name, span in ranges.items():
        if isinstance(span, dict) and isinstance(span.get("start_ns"), int) and isinstance(span.get("end_ns"), int):
            out[str(name)] = (span["start_ns"], span["end_ns"])
    return out


def _meta(r: dict[str, Any]) -> dict[str, Any]:
    meta = r.get("metadata")
    return meta if isinstance(meta, dict) else {}


def profiling_window(pf: PointFiles) -> Window | None:
    """The window every series is drawn against, or None when the point never reached the client."""
    ranges = aiperf_phase_ranges(pf)
    if "profiling" in ranges:
        start, end = ranges["profiling"]
        return Window(start, end, f"{AIPERF_PHASE} (server-metrics export)")
    profiled = [_meta(r) for r in pf.requests if _meta(r).get("benchmark_phase") == "profiling"]
    starts = [int(m.get("credit_issued_ns") or m.get("request_start_ns") or 0) for m in profiled]
    starts = [s for s in starts if s > 0]
    if starts:
        ends = [int(m.get("request_end_ns") or 0) for m in profiled]
        return Window(min(starts), max(ends) or None, "the first profiled request's credit (AIPerf records)")
    phases = (pf.status or {}).get("phases") or {}
    if isinstance(phases.get("profiling"), int):
        return Window(phases["profiling"], None, "the harness's profiling phase mark (status.json)")
    return None
