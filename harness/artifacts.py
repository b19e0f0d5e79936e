"""Atomic JSON artifacts: every JSON of ours carries `schema_version`; a row published for another tool
(InferenceX's `bmk_agentic_*`) follows that tool's contract and is written as given (`write_foreign_json`)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from harness import SCHEMA_VERSION


def write_json(path: Path, data: dict[str, Any]) -> Path:
    """Write `data` (with `schema_version` first) to `path` atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _write(path, {"schema_version": SCHEMA_VERSION, **{k: v for k, v in data.items() if k != "schema_version"}})


def write_foreign_json(path: Path, data: dict[str, Any]) -> Path:
    """Write another tool's row exactly as given (no `schema_version` added), atomically."""
    return _write(Path(path), data)


def _write(path: Path, body: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(body, fh, indent=2, sort_keys=False, default=str)
            fh.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: Path, text: str) -> Path:
    """Write text atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return path


def read_json(path: Path) -> dict[str, Any]:
    with open(path) as fh:
        data: dict[str, Any] = json.load(fh)
    return data
