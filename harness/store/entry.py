"""One store entry: one run (attempt) of one point, read from its directory.

An entry holds the point's identity (config key, point name, concurrency, variant, tag, attempt id), its state
(completed, failed, cancelled) and verdict, what it ran (image, SGLang, the client and its scenario, the recipe's git
revision as the harness recorded it, host and hardware, the recipe fingerprint and the plan's settings), the
headline metrics, the record, the published row, the settings and every worker fingerprint as JSON text (secrets
redacted), and the per-request E2EL/TTFT samples `compare` reads (`harness.report.results.samples`).

The entry key says which run of which point it is: the same point directory ingested twice is one entry, a later
run of the point (a new attempt id) is another.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import __version__
from harness.artifacts import data_view
from harness.errors import UserError
from harness.inputs.json_input import finite_number, read_json_object
from harness.point.state.attempt import ATTEMPTS_DIR
from harness.point.state.truth import unreadable
from harness.report.results.samples import load_request_samples, record_file

RECORD = "point_result.json"
STATUS = "status.json"
PLAN = "plan.json"
STORED_STATES = ("completed", "failed", "cancelled")


@dataclass
class Entry:
    """One run of one point, as the store keeps it (`schema.ENTRY_COLUMNS`), with its per-request samples."""

    entry_key: str
    config_key: str
    point: str
    conc: int
    state: str
    variant: str | None = None
    tag: str | None = None
    attempt: str | None = None
    valid: bool | None = None
    reasons: list[str] = field(default_factory=list)
    started_at_ns: int | None = None
    engine: str | None = None
    image: str | None = None
    sglang_version: str | None = None
    client_name: str | None = None
    client_version: str | None = None
    scenario: str | None = None
    harness_version: str | None = None
    recipe_revision: str | None = None
    host: str | None = None
    hardware: str | None = None
    recipe_fingerprint: str | None = None
    settings_hash: str | None = None
    tput_per_gpu: float | None = None
    e2el_p50: float | None = None
    e2el_p90: float | None = None
    ttft_p90: float | None = None
    intvty_p90: float | None = None
    j_per_token: float | None = None
    n_requests: int | None = None
    source: str | None = None
    record: Mapping[str, Any] | None = None
    row: Mapping[str, Any] | None = None
    settings: Mapping[str, Any] | None = None
    fingerprints: Mapping[str, Any] | None = None
    e2el: Sequence[float] = ()
    ttft: Sequence[float] = ()
    id: int | None = None          # the store's id (None: read from a directory)
    run_id: int | None = None      # the store run it arrived with (None: read from a directory)
    run_label: str | None = None   # where that run came from

    @property
    def in_baseline(self) -> bool:
        """Completed with a valid verdict: the only entries a baseline may hold."""
        return self.state == "completed" and self.valid is True

    def columns(self) -> tuple[Any, ...]:
        """The values of `schema.ENTRY_COLUMNS`, in order."""
        return (self.entry_key, self.config_key, self.point, self.conc, self.variant, self.tag, self.attempt,
                self.state, None if self.valid is None else int(self.valid), _text(self.reasons),
                self.started_at_ns, self.engine, self.image, self.sglang_version, self.client_name,
                self.client_version, self.scenario, self.harness_version, self.recipe_revision, self.host,
                self.hardware, self.recipe_fingerprint, self.settings_hash, self.tput_per_gpu, self.e2el_p50,
                self.e2el_p90, self.ttft_p90, self.intvty_p90, self.j_per_token, self.n_requests, self.source,
                _text(self.record), _text(self.row), _text(self.settings), _text(self.fingerprints))


def _text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"))


def pack(values: Sequence[float]) -> bytes:
    """Samples as little-endian float64 bytes."""
    out = values if isinstance(values, array) and values.typecode == "d" else array("d", values)
    if sys.byteorder != "little":
        out = array("d", out)
        out.byteswap()
    return out.tobytes()


def unpack(data: bytes) -> array[float]:
    out = array("d")
    out.frombytes(bytes(data))
    if sys.byteorder != "little":
        out.byteswap()
    return out


def _get(node: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def is_point_dir(path: Path) -> bool:
    return (path / RECORD).is_file() or (path / STATUS).is_file()


def read_entry(point_dir: Path) -> Entry | None:
    """The entry of one run directory of a point (the newest, or one under `attempts/`); None for a point still
    running (nothing to keep yet). A record or status that cannot be read is one line (`UserError`)."""
    record = _record(point_dir) if (point_dir / RECORD).is_file() else None
    status = read_json_object(point_dir / STATUS, "point status") if (point_dir / STATUS).is_file() else None
    plan = read_json_object(point_dir / PLAN, "point plan") if (point_dir / PLAN).is_file() else None
    state = _str(_get(status, "state")) or _str(_get(record, "state")) or "completed"
    if record is not None and state == "completed" and _str(record.get("state")) in STORED_STATES:
        state = str(record["state"])
    if state not in STORED_STATES:
        return None
    ident = record or status or {}
    conc = ident.get("conc")
    config_key = _str(ident.get("config_key")) or _str(_get(plan, "config_key"))
    if not isinstance(conc, int) or isinstance(conc, bool) or config_key is None:
        raise UserError(f"{point_dir}: its {'record' if record else 'status'} names no config_key and integer conc")
    fingerprints = {p.name: read_json_object(p, "fingerprint") for p in sorted(point_dir.glob("fingerprint_*.json"))
                    if p.is_file()}
    row_name = _str(_get(record, "row"))
    row = read_json_object(point_dir / row_name, "result row") if row_name and (point_dir / row_name).is_file() \
        and "/" not in row_name else None
    settings = _get(plan, "settings")
    entry = Entry(entry_key="", config_key=config_key, point=_str(_get(plan, "name")) or f"c{conc}", conc=conc,
                  state=state, source=str(point_dir.resolve()))
    for name in ("variant", "tag", "attempt", "engine", "image"):
        setattr(entry, name, _str(ident.get(name)) or _str(_get(status, name)))
    _validity(entry, record, status)
    _provenance(entry, record, status, plan, fingerprints)
    if record is not None and state == "completed":
        _metrics(entry, record, row)
        path = record_file(point_dir)
        if path is not None:
            samples = load_request_samples(path)
            entry.e2el, entry.ttft = samples.e2el, samples.ttft
    entry.record = data_view(record) if record is not None else data_view(status)
    entry.row = data_view(row) if row is not None else None
    entry.settings = data_view(settings) if isinstance(settings, Mapping) else None
    entry.settings_hash = _hash(entry.settings) if entry.settings is not None else None
    entry.fingerprints = data_view(fingerprints) if fingerprints else None
    entry.started_at_ns = _started(record, status, point_dir)
    entry.entry_key = _hash([config_key, entry.variant, entry.tag, conc, entry.attempt or _hash(entry.record)])
    return entry


def _record(point_dir: Path) -> dict[str, Any]:
    """The point's record; one that cannot be read is one line, its row set aside first
    (`harness.point.state.quarantine`)."""
    try:
        return read_json_object(point_dir / RECORD, "point record")
    except UserError as exc:
        raise UserError(unreadable(point_dir, str(exc)).message) from None


def _hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _validity(entry: Entry, record: Mapping[str, Any] | None, status: Mapping[str, Any] | None) -> None:
    if entry.state != "completed" or record is None:
        entry.valid = False if entry.state == "completed" else None
        reason = _get(status, "reason") or _get(record, "state_reason")
        entry.reasons = [str(reason)] if reason else [f"point_{entry.state}"]
        return
    valid = _get(record, "validity", "valid")
    entry.valid = valid if isinstance(valid, bool) else None
    reasons = _get(record, "validity", "reasons")
    entry.reasons = [str(r.get("code", r)) if isinstance(r, Mapping) else str(r) for r in reasons] \
        if isinstance(reasons, list) else []


def _provenance(entry: Entry, record: Mapping[str, Any] | None, status: Mapping[str, Any] | None,
                plan: Mapping[str, Any] | None, fingerprints: Mapping[str, Any]) -> None:
    fp = _get(record, "fingerprint")
    entry.sglang_version = (_str(_get(fp, "sglang_version")) or _str(_get(fp, "server_version"))
                            or _str(_get(plan, "settings", "sglang_version")))
    entry.client_name = _str(_get(record, "client", "tool", "name"))
    entry.client_version = _str(_get(record, "client", "tool", "version"))
    kind = _str(_get(record, "scenario_type")) or "agentic-coding"
    scenario = _str(_get(record, "client", "scenario")) or _str(_get(plan, "settings", "client", "scenario"))
    entry.scenario = f"{kind}/{scenario}" if scenario else kind
    commit = _get(record, "harness_commit") or _get(status, "harness_commit")
    if isinstance(commit, Mapping) and _str(commit.get("commit")):
        entry.recipe_revision = str(commit["commit"])[:12] + ("+dirty" if commit.get("dirty") else "")
    entry.harness_version = __version__
    entry.host = _str(_get(status, "harness_host")) or _str(_get(fp, "host")) \
        or next((_str(f.get("hostname")) for f in fingerprints.values() if isinstance(f, Mapping)), None)
    hw = _str(_get(record, "hw")) or _str(_get(plan, "settings", "hardware", "gpu"))
    gpus = _get(fp, "gpus")
    names = sorted({str(g.get("name")) for g in gpus if isinstance(g, Mapping) and g.get("name")}) \
        if isinstance(gpus, list) else []
    entry.hardware = " ".join(x for x in (hw, f"{len(gpus)}x {'/'.join(names)}" if names else None) if x) or None
    entry.recipe_fingerprint = _str(_get(record, "recipe_fingerprint")) or _str(_get(status, "fingerprint"))


def _metrics(entry: Entry, record: Mapping[str, Any], row: Mapping[str, Any] | None) -> None:
    entry.tput_per_gpu = finite_number(_get(record, "request_metrics", "throughput", "per_gpu", "total_tput_tps"))
    entry.e2el_p50 = finite_number(_get(record, "request_metrics", "latency", "e2el", "p50"))
    entry.e2el_p90 = finite_number(_get(record, "request_metrics", "latency", "e2el", "p90"))
    entry.ttft_p90 = finite_number(_get(record, "request_metrics", "latency", "ttft", "p90"))
    entry.intvty_p90 = finite_number(_get(record, "request_metrics", "latency", "intvty", "p90"))
    entry.j_per_token = finite_number(_get(row, "joules_per_total_token"))
    n = record.get("num_requests_successful")
    entry.n_requests = n if isinstance(n, int) and not isinstance(n, bool) else None


def _started(record: Mapping[str, Any] | None, status: Mapping[str, Any] | None, point_dir: Path) -> int:
    start = _get(record, "request_metrics", "throughput", "window_start_ns")
    if isinstance(start, int) and not isinstance(start, bool):
        return start
    phases = _get(status, "phases")
    if isinstance(phases, Mapping):
        stamps = [v for v in phases.values() if isinstance(v, int) and not isinstance(v, bool)]
        if stamps:
            return min(stamps)
    marker = point_dir / (RECORD if (point_dir / RECORD).exists() else STATUS)
    return marker.stat().st_mtime_ns


def point_dirs(run_dir: Path) -> list[Path]:
    """Every run directory of every point under `run_dir`: each point's newest and its earlier attempts."""
    found: list[Path] = []
    if is_point_dir(run_dir):
        return [run_dir, *_attempts(run_dir)]
    for dirpath, dirnames, _files in os.walk(run_dir):
        here = Path(dirpath)
        if is_point_dir(here):
            found += [here, *_attempts(here)]
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
    return found


def _attempts(point_dir: Path) -> list[Path]:
    attempts = point_dir / ATTEMPTS_DIR
    if not attempts.is_dir() or attempts.is_symlink():
        return []
    return [d for d in sorted(attempts.iterdir()) if d.is_dir() and not d.is_symlink() and is_point_dir(d)]


def read_run_dir(run_dir: Path) -> list[Entry]:
    """The entries of a run directory; one line when it is not one."""
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: not a directory (expected a run directory, e.g. runs/)")
    dirs = point_dirs(run_dir)
    if not dirs:
        raise UserError(f"{run_dir}: not a run directory (no point_result.json or status.json below it)")
    return [e for d in dirs if (e := read_entry(d)) is not None]
