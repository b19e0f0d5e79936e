"""Atomic JSON artifacts: every JSON of ours carries `schema_version`; a row published for another tool
(InferenceX's `bmk_agentic_*`) follows that tool's contract and is written as given (`write_foreign_json`).

Every writer here is a boundary where data leaves the process: what it writes passes through
`harness.redact` first (JSON by structure, text by pattern), as does `print_json` for `--json` output."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness import SCHEMA_VERSION
from harness.errors import UserError
from harness.redact import any_remembered, redact_data, redact_text, scrub_remembered


def write_json(path: Path, data: dict[str, Any]) -> Path:
    """Write `data` (with `schema_version` first) to `path` atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _write(path, {"schema_version": SCHEMA_VERSION, **{k: v for k, v in data.items() if k != "schema_version"}})


def write_foreign_json(path: Path, data: dict[str, Any]) -> Path:
    """Write another tool's row as given (no `schema_version` added; secrets redacted), atomically."""
    return _write(Path(path), data)


def json_text(data: Any) -> str:
    """`data` as indented JSON, secrets redacted (what every `--json` prints)."""
    return json.dumps(redact_data(data), indent=2, sort_keys=False, default=str)


def print_json(data: Any) -> None:
    """Print `data` as indented JSON on stdout, secrets redacted."""
    sys.stdout.write(json_text(data) + "\n")


def write_bytes(path: Path, data: bytes) -> Path:
    """Write `data` atomically (a temp file beside `path`, renamed over it): a reader sees the old file or the
    new one, never a part. No redaction: for bytes the harness made itself (`request_samples.bin`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _write(path: Path, body: dict[str, Any]) -> Path:
    return write_bytes(path, (json_text(body) + "\n").encode())


def write_text(path: Path, text: str) -> Path:
    """Write text atomically, secrets redacted."""
    return write_bytes(path, redact_text(text).encode())


def append_text(path: Path, text: str) -> None:
    """Append to a log file (e.g. `harness.log`), secrets redacted."""
    with open(path, "a") as fh:
        fh.write(redact_text(text))


def scrub_logs(directory: Path) -> None:
    """`scrub_log` of every log a child process wrote in `directory` (servers, router, client)."""
    for log in sorted(Path(directory).glob("*.log")):
        if log.name != "harness.log":
            scrub_log(log)


def scrub_log(path: Path) -> None:
    """Rewrite a log a child process wrote (`server.log`) without the remembered secret values, if it holds any.
    Line by line into a temp file, then renamed: bounded memory whatever the log's size."""
    path = Path(path)
    if not any_remembered() or not path.is_file():
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        changed = False
        with open(path, errors="surrogateescape") as src, os.fdopen(fd, "w", errors="surrogateescape") as dst:
            for line in src:
                clean = scrub_remembered(line)
                changed = changed or clean != line
                dst.write(clean)
        if changed:
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def read_json(path: Path, what: str = "JSON") -> dict[str, Any]:
    """The JSON object in `path`, through the one bounded reader (`harness.inputs.json_input.read_json_object`):
    a corrupt, foreign, deep, looping or non-regular file is a one-line `UserError`."""
    from harness.inputs.json_input import read_json_object

    return read_json_object(path, what)


def write_error(exc: OSError, path: Path, what: str) -> UserError:
    """A failed write as one line naming the path and the cause (a full disk, a read-only or forbidden place)."""
    return UserError(f"{exc.filename or path}: cannot write the {what}: {exc.strerror or exc}")


@contextmanager
def staged_dir(out: Path, what: str, *, merge: bool = False) -> Iterator[Path]:
    """A temporary directory beside `out` to build `what` in, put in place only when the build completes: renamed
    to `out` (new or an empty directory), or with `merge` each of its files moved into `out` (a report over an
    earlier one). Whatever fails, the temporary directory is removed, so nothing half-written is left; an OSError
    (ENOSPC, EROFS, EACCES, ...) becomes one line naming the path and the cause."""
    out = Path(out)
    tmp: Path | None = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
        os.chmod(tmp, 0o755)
        yield tmp
        if merge:
            out.mkdir(exist_ok=True)
            for item in sorted(tmp.iterdir()):
                os.replace(item, out / item.name)
            tmp.rmdir()
        else:
            if out.is_dir():
                out.rmdir()   # empty: the caller checked
            os.rename(tmp, out)
        tmp = None
    except OSError as exc:
        name = exc.filename if isinstance(exc.filename, str) else None
        if tmp is not None and name is not None and name.startswith(str(tmp)):
            exc.filename = str(out) + name[len(str(tmp)):]   # the path as it was to be, not the temporary one
        raise write_error(exc, out, what) from None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
