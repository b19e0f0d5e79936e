"""The points (and evals) under a run directory as their `status.json` says now: what `harness status DIR`
shows. Each status is read through `read_status`, so a point left `running` by a harness that is gone reads
(and is rewritten) as `failed: harness_killed`. Earlier attempts (`attempts/`) are not shown."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.point.state.attempt import ATTEMPTS_DIR
from harness.point.state.ownership import LOCK_FILE
from harness.point.state.status import STATUS_FILE, read_status, shown_phase
from harness.point.state.truth import reconciled_status


def status_dirs(root: Path) -> list[Path]:
    """Every directory below `root` (or `root` itself) holding a `status.json`, sorted."""
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"{root}: no such directory (expected a run directory or a job id)")
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and not (d == ATTEMPTS_DIR and (STATUS_FILE in filenames or LOCK_FILE in filenames)))
        if STATUS_FILE in filenames:
            found.append(Path(dirpath))
    return sorted(found)


def _text(value: Any) -> str | None:
    """A field shown as text: a string as it is, anything else (a damaged file's number, list, ...) as JSON."""
    return value if value is None or isinstance(value, str) else json.dumps(value, default=str)[:80]


def dir_views(root: Path) -> list[dict[str, Any]]:
    """One view per point or eval directory: where, state, phase, exit status, reason, attempt."""
    views = []
    for d in status_dirs(root):
        try:
            status = read_status(d) or {}
        except (OSError, ValueError) as exc:
            status = {"state": "unknown", "reason": f"status.json not readable ({exc})"}
        if not isinstance(status, dict):
            status = {"state": "unknown", "reason": "status.json is not an object"}
        status = reconciled_status(d, status) or status   # with its record, as report and export read it
        views.append({"point_dir": str(d), "kind": _text(status.get("kind", "point")), "conc": status.get("conc"),
                      "state": _text(status.get("state")), "phase": shown_phase(status),
                      "exit_status": status.get("exit_status"), "reason": _text(status.get("reason")),
                      "attempt": status.get("attempt"), "publishable": status.get("publishable")})
    return views


def render_dir_table(root: Path, views: list[dict[str, Any]]) -> str:
    rows = [("point", "state", "phase", "exit", "reason")]
    for v in views:
        where = os.path.relpath(v["point_dir"], root)
        tail = v["reason"] or ""
        if isinstance(v.get("publishable"), str):
            tail = f"{tail}  [{v['publishable']}]".lstrip()
        rows.append((where, str(v["state"]), v["phase"] or "-",
                     "-" if v["exit_status"] is None else str(v["exit_status"]), tail))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1]).rstrip()
                     for r in rows)
