"""The record of jobs this harness submitted: `<out>/.harness-jobs.json` beside the results (what was
submitted: plan, script, sbatch command, points) and a per-user index job id -> out dir, so `status`,
`follow`, `logs` and `cancel` find a job by its id. `cancel` refuses any job not in the record.

The index lives in `$HARNESS_STATE_DIR` (default `$XDG_STATE_HOME/harness`, else `~/.local/state/harness`).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.artifacts import read_json, write_json
from harness.errors import UserError

JOBS_FILE = ".harness-jobs.json"
INDEX_FILE = "slurm-jobs.json"


def state_dir() -> Path:
    if os.environ.get("HARNESS_STATE_DIR"):
        return Path(os.environ["HARNESS_STATE_DIR"])
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "harness"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _read(path: Path) -> dict[str, Any]:
    return read_json(path) if path.exists() else {}


def record_job(record: dict[str, Any]) -> None:
    """Add a submission to its out dir's record and to the per-user index."""
    out = Path(record["out_dir"])
    jobs_path = out / JOBS_FILE
    with _locked(jobs_path):
        data = _read(jobs_path)
        data.setdefault("jobs", []).append(record)
        write_json(jobs_path, data)
    index_path = state_dir() / INDEX_FILE
    with _locked(index_path):
        index = _read(index_path)
        index.setdefault("jobs", {})[record["job_id"]] = str(out)
        write_json(index_path, index)


def find_job(job_id: str, out_dir: Path | None = None) -> dict[str, Any]:
    """The submission record of `job_id` (from `out_dir` if given, else through the per-user index)."""
    job_id = job_id.split("_", 1)[0]
    if out_dir is None:
        index = _read(state_dir() / INDEX_FILE).get("jobs", {})
        if not isinstance(index, dict) or not isinstance(index.get(job_id), str):
            raise UserError(f"job {job_id}: not submitted by this harness (not in {state_dir() / INDEX_FILE}); "
                            "give --out DIR if it was submitted elsewhere")
        out_dir = Path(index[job_id])
    jobs_path = Path(out_dir) / JOBS_FILE
    records = _read(jobs_path).get("jobs", [])
    for record in records if isinstance(records, list) else ():
        if isinstance(record, dict) and record.get("job_id") == job_id:
            return _checked(dict(record), jobs_path)
    raise UserError(f"job {job_id}: not submitted by this harness (not in {jobs_path})")


class _JobPoint(BaseModel):
    """One task of a submission record, as `status`, `follow`, `logs` and `cancel` read it."""

    model_config = ConfigDict(extra="allow", strict=True)
    task_id: int
    conc: int
    name: str
    point_dir: str
    result: str
    kind: str = "point"


class _JobRecord(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    job_id: str
    out_dir: str
    points: list[_JobPoint]


def _checked(record: dict[str, Any], path: Path) -> dict[str, Any]:
    """The record when it has the fields and types the commands read; else one line naming the file."""
    try:
        _JobRecord.model_validate(record)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise UserError(f"{path}: jobs.{record.get('job_id')}.{where}: {first.get('msg')} "
                        "(a damaged submission record)") from None
    return record
