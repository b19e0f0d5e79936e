"""Per-request records beside a result (the pinned AIPerf's `profile_export.jsonl`): latency samples for the plots.

A point the harness ran leaves `request_samples.bin` beside its records (`harness.point.record.samples_file`);
the report reads that when it matches the records file, and reads the records otherwise (another tool's
run, an older one, a copy that changed the file).
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from harness.point.record.samples_file import UNIT_TO_S, RequestSamples, kept_latencies, read_samples_file
from harness.report.results.load import PointResult

__all__ = ["RECORD_FILES", "RequestSamples", "iter_points_with_samples", "load_request_samples", "read_request_samples",
           "record_file"]

RECORD_FILES = ("aiperf/profile_export.jsonl", "aiperf_artifacts/profile_export.jsonl", "profile_export.jsonl")
_CHUNK_BYTES = 4 * 1024 * 1024
# A metric's value (a JSON number) and unit, as AIPerf writes it after `"<name>":{"value":`.
_VALUE_UNIT = re.compile(rb'(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?),"unit":"([a-z]+)"\}')
_METRICS = b'},"metrics":{'
_PHASE = b'"benchmark_phase":"'
_CANCELLED = b'"was_cancelled":'
_E2EL = b'"request_latency":'
_TTFT = b'"time_to_first_token":'
_VALUE = b'{"value":'


def record_file(point_dir: Path) -> Path | None:
    for rel in RECORD_FILES:
        candidate = point_dir / rel
        if candidate.is_file():
            return candidate
    return None


def load_request_samples(path: Path) -> RequestSamples:
    """The samples of the records file `path`: from the samples file the point runner left beside it when
    that matches the records file, else read from the records."""
    return read_samples_file(path) or read_request_samples(path)


def read_request_samples(path: Path) -> RequestSamples:
    """Stream a `profile_export.jsonl`, keeping E2EL and TTFT of the requests `kept_latencies` keeps.

    The file is read in blocks of whole lines. A line in AIPerf's compact layout (metadata, then metrics;
    phase, cancellation, E2EL and TTFT each written once, in any order, no error) is read by locating those
    keys; any other line is parsed as JSON, so the result does not depend on the fast reading.
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
    """The samples of the whole lines `data[start:end]`, each read in place when it fits the compact layout."""
    pos = start
    while pos < end:
        stop = data.find(b"\n", pos, end)
        if stop < 0:
            stop = end
        values = _compact_line(data, pos, stop)
        if values is None:
            _read_line(data[pos:stop], e2el, ttft)
        elif isinstance(values, tuple):
            e2el.append(values[0])
            if values[1] is not None:
                ttft.append(values[1])
        pos = stop + 1


def _compact_line(data: bytes, start: int, end: int) -> tuple[float, float | None] | Literal[False] | None:
    """What `kept_latencies` gives for the line `data[start:end]`, read by key positions: (E2EL, TTFT) when
    kept, False when not, None when the line is not in the compact layout (then it is parsed as JSON).

    The compact layout: `{"metadata":{...},"metrics":{...}}` and nothing else, the metadata flat (no
    braces), every metric an object without nested objects (the first `}}` after `"metrics":{` closes the
    metrics), object keys unique as a JSON writer writes them. Keys cannot occur inside JSON strings (their
    quotes would be escaped), so a key found in a region is that region's key.
    """
    if not data.startswith(b'{"metadata":{', start, end) or not data.endswith(b'"}}}', start, end):
        return None
    metrics = data.find(_METRICS, start, end)
    if metrics < 0 or data.find(b"{", start + 13, metrics) >= 0 or data.find(b"}", start + 13, metrics) >= 0 \
            or data.find(b"}}", metrics + len(_METRICS), end) != end - 3:
        return None   # metadata not flat, or something beside metadata and metrics (an error)
    phase = data.find(_PHASE, start, metrics)
    cancelled = data.find(_CANCELLED, start, metrics)
    if phase < 0 or cancelled < 0:
        return None
    phase += len(_PHASE)
    if not data.startswith(b'profiling"', phase):
        quote = data.find(b'"', phase, metrics)
        return None if quote < 0 or data.find(b"\\", phase, quote) >= 0 else False
    cancelled += len(_CANCELLED)
    if data.startswith(b"true", cancelled):
        return False
    if not data.startswith(b"false", cancelled):
        return None
    e = _value(data, _E2EL, metrics, end)
    if e is None or e is False:
        return e
    t = _value(data, _TTFT, metrics, end)
    if t is None:
        return None
    return e, (None if t is False else t)


def _value(data: bytes, key: bytes, metrics: int, end: int) -> float | Literal[False] | None:
    """A metric of the metrics `data[metrics:end]` in seconds; False when it is absent or not finite; None
    when it is not written the compact way."""
    at = data.find(key, metrics, end)
    if at < 0:
        return False
    at += len(key)
    if not data.startswith(_VALUE, at):
        return None
    m = _VALUE_UNIT.match(data, at + len(_VALUE), end)
    if m is None:
        return None
    unit = UNIT_TO_S.get(m.group(2).decode())
    if unit is None:
        return None
    value = float(m.group(1))
    return value * unit if math.isfinite(value) else False


def _read_line(line: bytes, e2el: array[float], ttft: array[float]) -> None:
    """One line parsed as JSON, kept by `kept_latencies`."""
    if b'"request_latency"' not in line:
        return  # failed requests carry no metrics
    try:
        record = json.loads(line)
    except ValueError:
        return
    values = kept_latencies(record)
    if values is None:
        return
    e2el.append(values[0])
    if values[1] is not None:
        ttft.append(values[1])


def iter_points_with_samples(points: Iterable[PointResult]) -> Iterator[tuple[PointResult, RequestSamples]]:
    """Each point that has a per-request file beside it, with its samples."""
    for p in points:
        path = record_file(p.point_dir)
        if path is not None:
            yield p, load_request_samples(path)
