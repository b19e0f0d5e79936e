"""Which requests a report's latency samples hold, and the compact samples file a point leaves beside its
per-request records.

`kept_latencies` is the one rule: a request counts when it has no error, was not cancelled, ran in the
profiling phase (a record without a phase is a profiling one) and has a finite `request_latency`; its TTFT
is kept when it has a finite one. Values are converted to seconds by their unit (unknown units read as ms).

`request_samples.bin`, beside `profile_export.jsonl`, holds those samples so that a report need not parse
the records again: one line of JSON (at most `MAX_HEADER` bytes) naming the source file's size and
`mtime_ns`, the counts and the encoding, then the E2EL values and the TTFT values as little-endian float64
seconds. A reader uses it only when every check passes (a regular file of exactly the announced size, the
source file unchanged, every value finite); anything else reads as absent, and the records are parsed.
"""

from __future__ import annotations

import json
import os
import stat as stat_mode
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.artifacts import write_bytes
from harness.errors import UserError
from harness.inputs.json_input import finite_number, parse_json, read_file_bytes

SAMPLES_FILE = "request_samples.bin"
SCHEMA_VERSION = 1
MAX_HEADER = 1024
MIN_RECORD_BYTES = 32   # no record line that holds a request_latency is shorter
UNIT_TO_S = {"ms": 1e-3, "ns": 1e-9, "us": 1e-6, "s": 1.0, "sec": 1.0}
_ENCODING = "<f8"

Stamp = tuple[int, int]   # (size, mtime_ns) of a records file


@dataclass(frozen=True)
class RequestSamples:
    """Per-request latencies (seconds) of one point's successful profiled requests."""

    e2el: Sequence[float]
    ttft: Sequence[float]


def kept_latencies(record: Any) -> tuple[float, float | None] | None:
    """(E2EL s, TTFT s or None) of one parsed `profile_export.jsonl` record; None when it is not kept."""
    if not isinstance(record, Mapping):
        return None
    meta = record.get("metadata") or {}
    if not isinstance(meta, Mapping):
        return None
    if record.get("error") or meta.get("was_cancelled") or meta.get("benchmark_phase", "profiling") != "profiling":
        return None
    metrics = record.get("metrics") or {}
    if not isinstance(metrics, Mapping):
        return None
    e = _seconds(metrics, "request_latency")
    return None if e is None else (e, _seconds(metrics, "time_to_first_token"))


def _seconds(metrics: Mapping[str, Any], name: str) -> float | None:
    v = metrics.get(name)
    if not isinstance(v, Mapping) or (value := finite_number(v.get("value"))) is None:
        return None
    return value * UNIT_TO_S.get(str(v.get("unit", "ms")), 1e-3)


def samples_of(records: Iterable[Any]) -> RequestSamples:
    """The kept samples of parsed records, in file order."""
    e2el, ttft = array("d"), array("d")
    for record in records:
        kept = kept_latencies(record)
        if kept is not None:
            e2el.append(kept[0])
            if kept[1] is not None:
                ttft.append(kept[1])
    return RequestSamples(e2el=e2el, ttft=ttft)


def stamp(path: Path) -> Stamp | None:
    """(size, mtime_ns) of the regular file at `path`; None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns) if stat_mode.S_ISREG(st.st_mode) else None


def samples_path(records_path: Path) -> Path:
    return Path(records_path).with_name(SAMPLES_FILE)


def write_samples_file(records_path: Path, records: Iterable[Any], source: Stamp | None) -> Path | None:
    """Write `request_samples.bin` beside `records_path` from its parsed `records`, taken when the file had
    the stamp `source`. Nothing is written (and an earlier samples file is removed) when the file is gone or
    has changed since; returns the path written, else None."""
    out = samples_path(records_path)
    samples = samples_of(records)
    if source is None or stamp(records_path) != source:
        out.unlink(missing_ok=True)
        return None
    header = json.dumps({"schema_version": SCHEMA_VERSION, "source": Path(records_path).name,
                         "source_size": source[0], "source_mtime_ns": source[1], "encoding": _ENCODING,
                         "e2el_count": len(samples.e2el), "ttft_count": len(samples.ttft)},
                        separators=(",", ":")).encode() + b"\n"
    body = array("d", samples.e2el) + array("d", samples.ttft)
    if body.itemsize != 8:
        raise RuntimeError("float64 arrays expected")
    if sys.byteorder != "little":
        body.byteswap()
    return write_bytes(out, header + body.tobytes())


def read_samples_file(records_path: Path) -> RequestSamples | None:
    """The samples of `request_samples.bin` beside `records_path` when it matches that file; else None."""
    import numpy as np

    source = stamp(records_path)
    path = samples_path(records_path)
    if source is None:
        return None
    try:
        data = read_file_bytes(path, "request samples",
                               MAX_HEADER + 16 * (source[0] // MIN_RECORD_BYTES + 1))
    except UserError:
        return None
    end = data.find(b"\n", 0, MAX_HEADER)
    if end < 0:
        return None
    try:
        header = parse_json(data[:end], str(path), max_depth=2)
    except UserError:
        return None
    if not isinstance(header, dict):
        return None
    n_e2el, n_ttft = header.get("e2el_count"), header.get("ttft_count")
    if type(n_e2el) is not int or type(n_ttft) is not int or not 0 <= n_ttft <= n_e2el:
        return None
    if (header.get("schema_version") != SCHEMA_VERSION or header.get("encoding") != _ENCODING
            or header.get("source") != Path(records_path).name
            or [header.get("source_size"), header.get("source_mtime_ns")] != list(source)
            or len(data) != end + 1 + 8 * (n_e2el + n_ttft)):
        return None
    values = np.frombuffer(data, np.dtype(_ENCODING), offset=end + 1)
    if not bool(np.isfinite(values).all()):
        return None
    e2el, ttft = array("d"), array("d")
    e2el.frombytes(values[:n_e2el].astype(np.float64).tobytes())
    ttft.frombytes(values[n_e2el:].astype(np.float64).tobytes())
    return RequestSamples(e2el=e2el, ttft=ttft)
