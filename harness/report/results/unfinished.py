"""Points that left no record: a point directory of this harness whose `status.json` says it failed, was
cancelled or still runs before AIPerf left any request (a server that never became ready, a launch error, a
harness killed mid-load). Reports show them as invalid points with their state and reason, so a failed
point never vanishes from a report. Each status is read through `read_status`: a point whose harness is gone
reads `failed: harness_killed`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.point.state.status import read_status
from harness.point.state.status_dir import status_dirs
from harness.point.state.truth import reconcile
from harness.report.results.load import RECORD_FILE, RESULT_PREFIX, PointResult, Reason


def unfinished_points(run_dirs: Iterable[Path]) -> list[PointResult]:
    """A point per directory below `run_dirs` holding a point's `status.json` and no result file."""

    points = []
    for d in sorted({d for root in run_dirs for d in status_dirs(root)}):
        if (d / RECORD_FILE).exists() or any(d.glob(f"{RESULT_PREFIX}*.json")):
            continue
        try:
            status = read_status(d)
        except (OSError, ValueError, UserError):
            continue
        if isinstance(status, Mapping) and status.get("kind", "point") == "point":
            truth = reconcile(status, None)   # harness.point.state.truth: completed without a record is failed
            status = {**status, "state": truth.state, "reason": truth.reason}
        point = status_point(status, d) if isinstance(status, Mapping) else None
        if point is not None:
            points.append(point)
    return points


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def status_point(status: Mapping[str, Any], point_dir: Path) -> PointResult | None:
    """The point a `status.json` describes, with no measurements; None for an eval's status or one that
    names no point."""
    conc, key = status.get("conc"), status.get("config_key")
    if status.get("kind", "point") != "point" or isinstance(conc, bool) or not isinstance(conc, int) \
            or conc < 1 or not isinstance(key, str) or not key:
        return None
    state = _text(status.get("state")) or "unknown"
    if state == "running":
        reason = Reason("point_running", f"still running (phase {status.get('phase') or 'starting'}); no result yet")
    else:
        reason = Reason(f"point_{state}", _text(status.get("reason")) or f"{state} without a result")
    simulated = bool(status.get("simulated"))
    fingerprint = status.get("fingerprint")
    return PointResult(
        source=point_dir / "status.json", conc=conc, curve_key=key, config_key=key,
        image=_text(status.get("image")), engine=_text(status.get("engine")) or ("sim" if simulated else "real"),
        simulated=simulated, engine_label=None, model="", framework="sglang", precision="", spec_decoding="",
        hw="sim" if simulated else "", tp=None, ep=None, pp=None, num_gpus=None, kv_offloading="",
        recipe_fingerprint=fingerprint if isinstance(fingerprint, str) else None,
        total_tput_per_gpu=None, output_tput_per_gpu=None, input_tput_per_gpu=None, latency={},
        num_requests_total=None, num_requests_successful=None, errors=None, cancelled_at_cutoff=None,
        valid=False, invalid_reasons=(reason,), power_valid=None, power_invalid_reasons=(),
        variant=_text(status.get("variant")) or None,
        overrides=tuple(o for o in status.get("overrides") or () if isinstance(o, str)),
        tag=_text(status.get("tag")) or None, note=_text(status.get("note")) or None, state=state)
