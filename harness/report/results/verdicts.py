"""Each exported row's verdict, where our readers find it: `harness_verdicts.json` at the root of an export.

InferenceX's row has no place for our verdict (its contract takes no extra key: `harness.point.record.
inferencex_row`), so `harness export --inferencex` writes, beside the `bmk_agentic_<name>/` directories, one file
of ours naming every exported row (by its path inside the export) with the record's `state`, `validity` and
`publishable` blocks. `harness report` and `harness check --results` read a row with its verdict
(`harness.report.results.load`), so a point counts the same in its run directory and in its export: an invalid
point exported with `--include-unofficial` is shown, and kept off the frontier, as it is in the run. The file's
name matches no `bmk_agentic_*.json` glob, so a collector of rows never reads it as one. A row without an entry (an
export made before this file existed, or InferenceX's own rows) is read as before.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.inputs.json_input import read_json_object
from harness.point.record.publishable import of

VERDICTS_FILE = "harness_verdicts.json"
VERDICT_KEYS = ("state", "validity", "publishable")


def verdict_of(record: dict[str, Any]) -> dict[str, Any]:
    """The record's verdict: its state (completed when it names none), its validity and its publishability (as
    the export judged it, `harness.point.record.publishable.of`)."""
    verdict: dict[str, Any] = {"state": record.get("state") or "completed", "publishable": of(record)}
    if isinstance(record.get("validity"), Mapping):
        verdict["validity"] = record["validity"]
    return verdict


def verdicts_document(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The file's body: row path inside the export (POSIX) -> its verdict."""
    return {"rows": {name: dict(rows[name]) for name in sorted(rows)}}


def invalid_words(verdict: Mapping[str, Any]) -> str | None:
    """`too_few_requests, ...` for a verdict that is not valid, None for a valid one."""
    validity = verdict.get("validity")
    if not isinstance(validity, Mapping) or validity.get("valid", True):
        return None
    reasons = validity.get("reasons")
    codes = [str(r.get("code", "?")) if isinstance(r, Mapping) else str(r)
             for r in (reasons if isinstance(reasons, list) else [])]
    return ", ".join(codes) or "invalid"


def row_verdict(row_path: Path) -> dict[str, Any]:
    """The verdict the export beside `row_path` recorded for it (`<export>/bmk_agentic_<name>/<row>`), or {}."""
    export = row_path.parent.parent
    manifest = export / VERDICTS_FILE
    try:
        stat = manifest.stat()
    except OSError:
        return {}
    rows = _rows(str(manifest), stat.st_mtime_ns, stat.st_size)
    verdict = rows.get(row_path.relative_to(export).as_posix())
    return {k: verdict[k] for k in VERDICT_KEYS if k in verdict} if isinstance(verdict, Mapping) else {}


@functools.lru_cache(maxsize=8)
def _rows(manifest: str, mtime_ns: int, size: int) -> Mapping[str, Any]:
    """The manifest's rows, read once per version of the file (an export of many rows is read row by row)."""
    del mtime_ns, size   # the cache key: a rewritten file is read again
    rows = read_json_object(Path(manifest), "export verdicts").get("rows")
    if not isinstance(rows, Mapping):
        raise UserError(f"{manifest}: rows: expected an object of row path -> verdict")
    return rows
