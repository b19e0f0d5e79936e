"""One truth per point: its `status.json` and its record (`point_result.json`) reconciled into one state, the
same way for `harness status`, `report`, `export` and a sweep's resume.

`reconcile` is the rule, a pure function: the status's final state wins over the record (a harness killed just
after writing a completed record reads `failed: harness_killed`, and the record is not a result); a record that
is present but cannot be read is a failed point (`record_corrupt`) that a resume runs again; a status that says
completed without a record beside it is failed too (`record_missing`). `point_truth` reads a point directory's two
files and applies it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.inputs.json_input import read_json_object
from harness.point.state.quarantine import quarantine_rows
from harness.point.state.status import read_status

RECORD_FILE = "point_result.json"
_FINAL = ("completed", "failed", "cancelled")


@dataclass(frozen=True)
class Unreadable:
    """A record that is there but cannot be read (truncated, corrupt, not a record): why."""

    message: str


# The record (its `state` and `state_reason` are read), unreadable, or None (absent).
RecordState = Mapping[str, Any] | Unreadable | None


@dataclass(frozen=True)
class PointTruth:
    """The point's state and reason, and whether its record describes it (`record_usable`: a report may show
    the record's numbers; a result only when the state is also completed)."""

    state: str              # completed | failed | cancelled | running | unknown
    reason: str | None
    record_usable: bool
    record_corrupt: bool = False

    @property
    def is_result(self) -> bool:
        """A completed point with a record that says so: what a report shows as measured and export ships."""
        return self.state == "completed" and self.record_usable

    @property
    def done(self) -> bool:
        """A resume skips it (anything else is run again)."""
        return self.is_result


def record_state(record: Mapping[str, Any]) -> str:
    """The state a record names (a record written before states were recorded counts as completed)."""
    state = record.get("state")
    return state if state in _FINAL else "completed"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def reconcile(status: Mapping[str, Any] | None, record: RecordState) -> PointTruth:
    """The point's one state from its status (None: no `status.json`) and its record."""
    status_state = _text(status.get("state")) if status is not None else None
    status_reason = _text(status.get("reason")) if status is not None else None
    if isinstance(record, Unreadable):
        if status_state in ("failed", "cancelled"):
            return PointTruth(status_state, status_reason, False, True)
        return PointTruth("failed", f"record_corrupt: {record.message}", False, True)
    if record is None:
        if status_state == "completed":
            return PointTruth("failed", f"record_missing: status.json says completed but {RECORD_FILE} is absent",
                              False)
        return PointTruth(status_state or "unknown", status_reason, False)
    state, reason = record_state(record), _text(record.get("state_reason"))
    if status is None:
        return PointTruth(state, reason, True)
    if status_state not in _FINAL:   # still running (a writer that is gone already reads failed), or unknown
        return PointTruth(status_state or "unknown", status_reason, False)
    if status_state == "completed":   # the record may say the point failed after all (strict power)
        return PointTruth(state, reason, True)
    return PointTruth(status_state, status_reason or reason, state == status_state)


def read_record(point_dir: Path) -> RecordState:
    """The record in `point_dir`, Unreadable (its rows set aside, `unreadable`), or None when there is none."""

    path = Path(point_dir) / RECORD_FILE
    if not path.exists() and not path.is_symlink():
        return None
    try:
        data = read_json_object(path, "point record")
    except UserError as exc:
        return unreadable(Path(point_dir), str(exc))
    except OSError as exc:
        return unreadable(Path(point_dir), f"{path}: {exc.strerror or exc}")
    return data


def unreadable(point_dir: Path, why: str) -> Unreadable:
    """A record that cannot be read, for `why`: the point's rows are moved into `quarantine/` and the message
    says where they went (or why they could not go)."""
    words = quarantine_rows(point_dir, why).words(point_dir)
    return Unreadable(f"{why}; {words}" if words else why)


def read_point_status(point_dir: Path) -> dict[str, Any] | None:
    """The point's `status.json` through `read_status` (a writer that is gone reads `failed: harness_killed`);
    None when there is none or it cannot be read."""

    try:
        status = read_status(Path(point_dir))
    except (UserError, OSError, ValueError):
        return None
    return status if isinstance(status, dict) else None


def point_truth(point_dir: Path, status: Mapping[str, Any] | None = None) -> PointTruth:
    """`reconcile` of the point directory's status (read here unless given) and record."""
    if status is None:
        status = read_point_status(point_dir)
    return reconcile(status, read_record(point_dir))


def reconciled_status(point_dir: Path, status: dict[str, Any] | None) -> dict[str, Any] | None:
    """`status` with the state and reason a point's truth gives (an eval's status, or none, as it is)."""
    if status is None or status.get("kind", "point") != "point":
        return status
    truth = point_truth(point_dir, status)
    if truth.state == status.get("state") and truth.reason == status.get("reason"):
        return status
    return {**status, "state": truth.state, "reason": truth.reason}
