"""Per-request records beside a result (AIPerf 0.13 `profile_export.jsonl`): latency samples for the plots."""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.report.load import PointResult, finite_number

RECORD_FILES = ("aiperf/profile_export.jsonl", "aiperf_artifacts/profile_export.jsonl", "profile_export.jsonl")
_UNIT_TO_S = {"ms": 1e-3, "ns": 1e-9, "us": 1e-6, "s": 1.0, "sec": 1.0}
_FAST = {
    name: re.compile(rb'"' + name.encode() + rb'":\{"value":([-+0-9.eE]+),"unit":"(\w+)"')
    for name in ("request_latency", "time_to_first_token")
}
_PHASE = re.compile(rb'"benchmark_phase":"(\w+)"')
_NUMBER = rb"([-+0-9.eE]+)"
# One whole record of AIPerf 0.13's compact layout, from the end of the phase key to TTFT (both in ms). It
# starts at `k_phase"` rather than at a quote: quotes are everywhere in JSON, `k` is not, so the scan is fast.
_CHUNK_RECORD = re.compile(
    rb'k_phase":"(\w+)","phase_index":\d+,"phase_name":"\w+","was_cancelled":(true|false),'
    rb'"context_overflow_skip":\w+,"agent_depth":\d+,"root_correlation_id":"[^"\n]*"\},"metrics":\{'
    rb'"request_latency":\{"value":' + _NUMBER + rb',"unit":"ms"\},"time_to_first_token":\{"value":' + _NUMBER
    + rb',"unit":"ms"\}')
_CHUNK_BYTES = 4 * 1024 * 1024
_MS = 1e-3


@dataclass(frozen=True)
class RequestSamples:
    """Per-request latencies (seconds) of one point's successful profiled requests."""

    e2el: Sequence[float]
    ttft: Sequence[float]


def record_file(point_dir: Path) -> Path | None:
    for rel in RECORD_FILES:
        candidate = point_dir / rel
        if candidate.is_file():
            return candidate
    return None


def read_request_samples(path: Path) -> RequestSamples:
    """Stream a `profile_export.jsonl`, keeping E2EL and TTFT of successful, profiled, uncancelled requests.

    The file is read in blocks of whole lines. A block is read with one pattern matching AIPerf 0.13's
    compact records when every line of it is a record that fits the pattern; otherwise each line of the
    block is read on its own (a pattern per field, else the line parsed as JSON), so the result does not
    depend on the fast path.
    """
    e2el, ttft = array("d"), array("d")
    with open(path, "rb") as fh:
        carry = b""   # the start of a line the previous block ended in
        while True:
            block = fh.read(_CHUNK_BYTES)
            if not block:
                _read_span(carry, 0, len(carry), e2el, ttft)   # the last line, unterminated
                break
            first, last = block.find(b"\n") + 1, block.rfind(b"\n") + 1
            if first == 0:   # no line ends in this block
                carry += block
                continue
            _read_span(carry + block[:first], 0, len(carry) + first, e2el, ttft)
            _read_span(block, first, last, e2el, ttft)   # whole lines, read in place
            carry = block[last:]
    return RequestSamples(e2el=e2el, ttft=ttft)


def _read_span(data: bytes, start: int, end: int, e2el: array[float], ttft: array[float]) -> None:
    """The samples of the whole lines `data[start:end]`: one pattern for the span when every line of it is a
    record that fits `_CHUNK_RECORD` (the common case, checked by counting lines), else line by line."""
    import numpy as np

    if start >= end:
        return
    found = _CHUNK_RECORD.findall(data, start, end)
    lines = int(np.count_nonzero(np.frombuffer(data, np.uint8, end - start, start) == 10))
    lines += data[end - 1] != 10   # an unterminated last line
    if not found or len(found) != lines:
        for line in data[start:end].splitlines():
            _read_line(line, e2el, ttft)
        return
    phases, cancelled, e_ms, t_ms = zip(*found, strict=True)
    if phases.count(b"profiling") != len(phases) or cancelled.count(b"false") != len(cancelled):
        kept = [(e, t) for p, c, e, t in found if p == b"profiling" and c == b"false"]
        e_ms, t_ms = tuple(e for e, _ in kept), tuple(t for _, t in kept)
    for values, out in ((e_ms, e2el), (t_ms, ttft)):
        seconds = np.frombuffer(array("d", map(float, values)), np.float64) * _MS   # as float(v) * 1e-3
        out.frombytes(seconds.tobytes())


def _read_line(line: bytes, e2el: array[float], ttft: array[float]) -> None:
    if b'"request_latency"' not in line:
        return  # failed requests carry no metrics
    fast = _fast_record(line)
    if fast is False:
        return
    values = _slow_record(line) if fast is None or fast is True else fast
    if values is None:
        return
    e, t = values
    e2el.append(e)
    if t is not None:
        ttft.append(t)


def _fast_record(line: bytes) -> tuple[float, float | None] | None | bool:
    """(e2el, ttft) from a compact AIPerf line; False to skip the line; None when the pattern does not fit."""
    phase = _PHASE.search(line)
    if phase is None:
        return None
    if phase.group(1) != b"profiling" or b'"was_cancelled":true' in line:
        return False
    e = _FAST["request_latency"].search(line)
    t = _FAST["time_to_first_token"].search(line)
    if e is None or (t is None and b'"time_to_first_token"' in line):
        return None
    e_unit = _UNIT_TO_S.get(e.group(2).decode())
    t_unit = _UNIT_TO_S.get(t.group(2).decode()) if t is not None else 1.0
    if e_unit is None or t_unit is None:
        return None
    return float(e.group(1)) * e_unit, (float(t.group(1)) * t_unit if t is not None else None)


def _slow_record(line: bytes) -> tuple[float, float | None] | None:
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    meta = rec.get("metadata") or {}
    if rec.get("error") or meta.get("was_cancelled") or meta.get("benchmark_phase", "profiling") != "profiling":
        return None
    m = rec.get("metrics") or {}

    def seconds(name: str) -> float | None:
        v = m.get(name)
        if not isinstance(v, Mapping) or finite_number(v.get("value")) is None:
            return None
        return float(v["value"]) * _UNIT_TO_S.get(str(v.get("unit", "ms")), 1e-3)

    e = seconds("request_latency")
    return None if e is None else (e, seconds("time_to_first_token"))


def iter_points_with_samples(points: Iterable[PointResult]) -> Iterator[tuple[PointResult, RequestSamples]]:
    """Each point that has a per-request file beside it, with its samples."""
    for p in points:
        path = record_file(p.point_dir)
        if path is not None:
            yield p, read_request_samples(path)
