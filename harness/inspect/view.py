"""One point seen from inside: its series on one clock, where the time went, its facts, findings and stability
diagnostics, as one dict (the page's JSON twin holds it whole)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from harness.errors import UserError
from harness.inspect import facts as facts_mod
from harness.inspect import time_split, timeline
from harness.inspect.clock import Window, profiling_window
from harness.inspect.findings import Finding, findings
from harness.inspect.point_files import PointFiles, read_point_files
from harness.point.record.stability import stability_metrics

VIEW_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class PointView:
    label: str
    data: dict[str, Any]          # the JSON twin's body for this point
    findings: list[Finding]
    facts: dict[str, Any]


def view_of(data: dict[str, Any]) -> PointView:
    """A point's view again from its JSON twin's entry."""
    return PointView(data["label"], data, [Finding(**f) for f in data.get("findings") or []], data.get("facts") or {})


def _state(pf: PointFiles) -> dict[str, Any]:
    record, status = pf.record or {}, pf.status or {}
    state = status.get("state") or record.get("state") or "unknown"
    reason = status.get("reason") or record.get("state_reason")
    validity = record.get("validity") or {}
    return {"state": state, "reason": reason, "valid": validity.get("valid"),
            "invalid_reasons": validity.get("reasons") or [], "simulated": bool(record.get("simulated")
                                                                                or status.get("simulated")),
            "engine": record.get("engine") or status.get("engine"), "conc": record.get("conc", status.get("conc")),
            "config_key": record.get("config_key") or status.get("config_key"),
            "variant": record.get("variant") or status.get("variant")}


def _duration_s(pf: PointFiles) -> float | None:
    requested = ((pf.record or {}).get("window_clock") or {}).get("requested_s")
    if isinstance(requested, (int, float)):
        return float(requested)
    for phase in ((pf.server_metrics or {}).get("input_config") or {}).get("phases") or []:
        if isinstance(phase, dict) and phase.get("kind") == "profiling" and isinstance(phase.get("duration"),
                                                                                       (int, float)):
            return float(phase["duration"])
    return None


T = TypeVar("T")
_STRUCTURE = (AttributeError, TypeError, KeyError, IndexError, ValueError)


def _from(file: Path, what: Callable[[], T]) -> T:
    """`what()`, a file whose JSON parsed but holds another structure than its writer's being one line naming it."""
    try:
        return what()
    except _STRUCTURE as exc:
        raise UserError(f"{file}: not the structure its writer leaves ({type(exc).__name__}: {exc})") from None


def build_view(point_dir: Path) -> PointView:
    pf = read_point_files(point_dir)
    pdir, art = pf.point_dir, pf.point_dir / "aiperf"
    state = _from(pdir / "status.json", lambda: _state(pf))
    label = pf.label
    w = _from(art / "server_metrics_export.json", lambda: profiling_window(pf))
    data: dict[str, Any] = {"point_dir": str(pdir), "label": label, **state, "absent": dict(pf.absent)}
    if w is None:
        data.update(window=None, facts={}, findings=[], series={})
        data["absent"]["window"] = "the point never reached its profiling window: nothing to draw on its clock"
        return PointView(label, data, [], {})
    window = w
    requests = _from(art / "profile_export.jsonl", lambda: timeline.request_timeline(pf, window))
    server = _from(art / "server_metrics_export.json", lambda: timeline.server_series(pf, window))
    missing: dict[str, str] = {}
    facts = {**_from(pdir / "point_result.json", lambda: facts_mod.client_facts(pf, requests, window)),
             **facts_mod.server_facts(server, window, missing),
             **_from(pdir / "point_result.json", lambda: facts_mod.power_facts(pf, window, missing))}
    fired = findings(facts)
    batch = timeline.batch_log_series(pf, window)
    if batch is None:
        missing["batch_log"] = "server.log has no SGLang Prefill/Decode batch lines"
    truth = _from(pdir / "sim_truth.jsonl", lambda: timeline.truth_series(pf, window))
    client_e2el = [r["e2el_ms"] / 1e3 for r in requests if r["phase"] == "profiling" and r["ok"]]
    data.update(
        window=_window_json(window),
        series={"phases": _from(pdir / "status.json", lambda: timeline.phase_bands(pf, window)),
                "client": _from(art / "profile_export.jsonl", lambda: timeline.client_series(pf, window)),
                "server": server, "batch_log": batch,
                "power": timeline.power_series(pf, window), "truth": truth},
        requests=requests,
        time_split={"server": _from(art / "server_metrics_export.json",
                                    lambda: time_split.from_server(pf.server_metrics, client_e2el)),
                    "simulator_truth": time_split.from_truth(truth, requests)},
        stability=_from(art / "profile_export.jsonl", lambda: _stability(pf)),
        facts=facts, findings=[f.to_json() for f in fired],
    )
    if "server_metrics" in pf.absent:   # said once, by the missing file
        missing.pop("server", None)
    data["absent"].update(missing)
    return PointView(label, data, fired, facts)


def _stability(pf: PointFiles) -> dict[str, Any]:
    """The record's stability block, or the same computed from the records (a record written before it had one)."""
    kept = (pf.record or {}).get("stability")
    return kept if isinstance(kept, dict) else stability_metrics(pf.requests, _duration_s(pf))


def _window_json(w: Window) -> dict[str, Any]:
    return {"start_ns": w.start_ns, "end_ns": w.end_ns, "start_utc": facts_mod.utc_text(w.start_ns),
            "duration_s": None if w.end_ns is None else w.s(w.end_ns), "source": w.source}
