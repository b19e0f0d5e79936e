"""Atomic JSON artifacts: every JSON of ours carries `schema_version`; a row published for another tool
(InferenceX's `bmk_agentic_*`) follows that tool's contract and is written as given (`write_foreign_json`).

Every writer here is the boundary where data leaves the process, and the only one: what it writes passes through
`harness.redact` first (JSON by structure, text by pattern, a command by its argv and env), as do `print_json` for
`--json` output and `RedactingStream`, the console every command prints to. Callers pass the real values.

A result written here survives a crash of the machine: each writer writes a temporary file beside its target,
flushes and fsyncs it, renames it into place and fsyncs the directory; a move into place (`staged_dir`) syncs
what it moves and then the directory it moved into; `sync_tree` does the same for files another process wrote (a
point's AIPerf outputs and power samples). Streamed logs (`append_text`) are not synced line by line."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import shlex
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from harness import SCHEMA_VERSION
from harness.errors import UserError
from harness.inputs.json_input import read_json_object
from harness.redact import (
    REDACTED,
    any_remembered,
    redact_argv,
    redact_data,
    redact_env,
    redact_text,
    remember,
    scrub_remembered,
    seal,
    secret_values,
)

# One command as it is recorded: a `# comment` line (or None), its argv, its environment.
Command = tuple[str | None, Sequence[str], Mapping[str, str]]


def write_json(path: Path, data: dict[str, Any]) -> Path:
    """Write `data` (with `schema_version` first) to `path` atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _write(path, {"schema_version": SCHEMA_VERSION, **{k: v for k, v in data.items() if k != "schema_version"}})


def write_bulk_json(path: Path, data: dict[str, Any], bulk: Iterable[str]) -> dict[str, Any]:
    """A large document (tens of MB: a point's every series and request) as compact JSON, atomically; what was
    written is returned (a page drawn from it shows nothing the file does not). Its own entries are redacted by
    structure as `write_json` does; in the entries named by `bulk` (at the top level or one level down), which hold
    numbers and the identifiers of another tool's records, every string as text, each distinct string once."""
    names = frozenset(bulk)
    redacted = _bulk_redacted(data, names)
    write_bytes(path, json.dumps(redacted, separators=(",", ":"), ensure_ascii=False).encode())
    return redacted


def _bulk_redacted(data: dict[str, Any], bulk: frozenset[str]) -> dict[str, Any]:
    cache: dict[str, str] = {}

    def strings(value: Any) -> Any:
        if isinstance(value, str):
            if value not in cache:
                cache[value] = redact_text(value)
            return cache[value]
        if isinstance(value, dict):
            return {k: strings(v) for k, v in value.items()}
        if isinstance(value, list):
            return value if not value or not isinstance(value[0], (str, dict, list)) else [strings(v) for v in value]
        return value

    def holds_bulk(value: Any) -> bool:
        if isinstance(value, dict):
            return bool(bulk & value.keys()) or any(isinstance(v, list) and holds_bulk(v) for v in value.values())
        return isinstance(value, list) and any(isinstance(v, dict) and holds_bulk(v) for v in value)

    def walk(value: Any) -> Any:
        if isinstance(value, list):
            return [walk(v) if holds_bulk(v) else redact_data(v) for v in value]
        small = redact_data({k: v for k, v in value.items() if k not in bulk and not holds_bulk(v)})
        return {k: strings(v) if k in bulk else walk(v) if holds_bulk(v) else small[k] for k, v in value.items()}

    out: dict[str, Any] = walk(data)
    return out


def write_foreign_json(path: Path, data: dict[str, Any]) -> Path:
    """Write another tool's row as given (no `schema_version` added; secrets redacted), atomically."""
    return _write(Path(path), data)


def json_text(data: Any) -> str:
    """`data` as indented JSON, secrets redacted (what every `--json` prints)."""
    return json.dumps(redact_data(data), indent=2, sort_keys=False, default=str)


def print_json(data: Any) -> None:
    """Print `data` as indented JSON on stdout, secrets redacted."""
    sys.stdout.write(json_text(data) + "\n")


def write_sealed_json(path: Path, data: dict[str, Any]) -> dict[str, str]:
    """`write_json` for a file that travels without its secrets (the Slurm sweep plan on shared storage): each
    secret value becomes a numbered placeholder (`<redacted:1>`, `harness.redact.seal`); returns {number: value}
    for the process that runs it to put back (`harness.redact.unseal`)."""
    sealed, secrets = seal(data)
    write_json(path, sealed)
    return secrets


def keep_out(data: Any) -> None:
    """Mask the secret values in `data` (a plan's env and argv) verbatim in everything written or printed from now
    on in this process, wherever they appear (a server that echoes them into its log, an error message)."""
    remember(secret_values(data))


def data_view(data: Any) -> Any:
    """Data (a JSON-like value) as it may be shown or compared: every secret value redacted. For what is not written
    by a writer here: a plan's identity (its settings hashed into its fingerprint, so a rotated secret leaves it as
    it was) and the simulator's `/server_info` reply."""
    return redact_data(data)


# What a masked value may hold without holding a secret: nothing, or the key a local OpenAI-style server takes for
# none (lm-eval records `"api_key": "EMPTY"`).
_HOLDS_NOTHING = frozenset({"", "none", "null", "nil", "undefined", "empty"})


def holds_secret(data: Any) -> bool:
    """True when a writer would mask a value in `data` (a string as text, a JSON-like value by its names and
    structure, a setting outside the allow-list by its shape) that holds something: a secret left in what leaves
    without a writer (an export's copied files). Masked values, setting hashes, variant marks and `None`/`null`/
    `EMPTY` hold none. Masks nothing itself."""
    found: list[str] = []

    def note(value: str) -> str:
        if value.strip().strip("'\"").lower() not in _HOLDS_NOTHING:
            found.append(value)
        return REDACTED

    if isinstance(data, str):
        redact_text(data, note)
    else:
        redact_data(data, note, lambda value: redact_text(value, note))
    return bool(found)


def command_view(argv: Sequence[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """A command as it may be shown: its argv (`--api-key VALUE`) and environment with the secrets redacted."""
    return redact_argv(argv), env_view(env)


def env_view(env: Mapping[str, str]) -> dict[str, str]:
    """An environment as it may be shown, by the rule for settings (`OPENAI_APIKEY`'s value redacted). For a
    record that holds an environment under another name (`expected`, `effective`), where a writer reading the
    record by its keys would not know the values for settings."""
    return redact_env(env)


def command_text(commands: Iterable[Command]) -> str:
    """Commands as recorded (`server_command.txt`): per command its comment, the argv as one shell line, then
    `NAME=VALUE` per variable, sorted; secrets redacted."""
    lines: list[str] = []
    for comment, argv, env in commands:
        shown_argv, shown_env = command_view(argv, env)
        lines += ([f"# {comment}"] if comment is not None else []) + [shlex.join(shown_argv)]
        lines += [f"{k}={v}" for k, v in sorted(shown_env.items())]
    return "".join(line + "\n" for line in lines)


def write_command(path: Path, commands: Iterable[Command]) -> Path:
    """Write `command_text(commands)` atomically, secrets redacted."""
    return write_text(path, command_text(commands))


def write_bytes(path: Path, data: bytes) -> Path:
    """Write `data` atomically (a temp file beside `path`, renamed over it): a reader sees the old file or the
    new one, never a part. No redaction: for bytes the harness made itself (`request_samples.bin`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    sync_dir(path.parent)
    return path


def sync_dir(directory: Path) -> None:
    """Make the entries of `directory` durable (a file renamed into it, one moved out): fsync the directory. A
    filesystem that cannot sync a directory (EINVAL on some FUSE and network mounts) is left to its own rules."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def sync_tree(root: Path, skip: Callable[[str], bool] | None = None) -> None:
    """fsync every regular file below `root`, then each directory after what it holds: what another process wrote
    there (AIPerf's outputs, the power samples) or was copied there survives a crash. Entries whose name `skip`
    accepts (streamed logs, earlier attempts) are left as they are; a link is not followed; a file that vanishes
    meanwhile is passed over."""
    root = Path(root)
    if not root.is_dir():
        return
    with os.scandir(root) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        if (skip is not None and skip(entry.name)) or entry.is_symlink():
            continue
        if entry.is_dir():
            sync_tree(Path(entry.path), skip)
        elif entry.is_file():
            try:
                fd = os.open(entry.path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    sync_dir(root)


def write_figure(path: Path, fig: Any, dpi: float | None = None) -> Path:
    """A matplotlib figure as a PNG, written atomically (`write_bytes`): the harness's own drawing."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return write_bytes(path, buffer.getvalue())


def _write(path: Path, body: dict[str, Any]) -> Path:
    return write_bytes(path, (json_text(body) + "\n").encode())


def write_text(path: Path, text: str) -> Path:
    """Write text atomically, secrets redacted."""
    return write_bytes(path, redact_text(text).encode())


def pwrite_text(fd: int, text: str) -> None:
    """Write text at the start of an open file (a lock file held by its descriptor), secrets redacted."""
    os.pwrite(fd, redact_text(text).encode(), 0)


def append_text(path: Path, text: str) -> None:
    """Append to a log file (e.g. `harness.log`), secrets redacted."""
    with open(path, "a") as fh:
        fh.write(redact_text(text))


def move_aside(src: Path, dst: Path) -> Path:
    """Move a file of a run to `dst` (its directory made if needed), by a rename within the run's filesystem: the
    file is at one place or the other, never in both or in part (a row set aside beside a record that cannot be
    read, `harness.point.state.quarantine`)."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.replace(src, dst)
    sync_dir(dst.parent)
    sync_dir(Path(src).parent)
    return dst


class RedactingStream:
    """The console: a text stream that writes whole lines, secrets redacted (a partial line on flush). The CLI
    puts one over stdout and one over stderr, so all that a command prints passes here."""

    def __init__(self, stream: TextIO):
        self._stream, self._buf = stream, ""

    def write(self, text: str) -> int:
        self._buf += text
        if "\n" in self._buf:
            lines, _, self._buf = self._buf.rpartition("\n")
            self._stream.write(redact_text(lines + "\n"))
        return len(text)

    def flush(self) -> None:
        if self._buf:
            self._stream.write(redact_text(self._buf))
            self._buf = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ... of the real stream
        return getattr(self._stream, name)


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
                dst.flush()
                os.fsync(dst.fileno())
        if changed:
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
            sync_dir(path.parent)
    finally:
        Path(tmp).unlink(missing_ok=True)


def read_json(path: Path, what: str = "JSON") -> dict[str, Any]:
    """The JSON object in `path`, through the one bounded reader (`harness.inputs.json_input.read_json_object`):
    a corrupt, foreign, deep, looping or non-regular file is a one-line `UserError`."""

    return read_json_object(path, what)


def write_error(exc: OSError, path: Path, what: str) -> UserError:
    """A failed write as one line naming the path and the cause (a full disk, a read-only or forbidden place)."""
    return UserError(f"{exc.filename or path}: cannot write the {what}: {exc.strerror or exc}")


def _put(item: Path, dst: Path) -> None:
    """Move `item` to `dst`: a file over the earlier one; a directory in place of the earlier one, whole (what it
    held is this build's, and nothing of the earlier one is kept beside it)."""
    if item.is_dir() and dst.is_dir() and not dst.is_symlink():
        aside = Path(tempfile.mkdtemp(prefix=f".{dst.name}.earlier-", dir=dst.parent))
        os.replace(dst, aside / dst.name)
        os.replace(item, dst)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.replace(item, dst)


_STAGING = re.compile(r"\.partial-(?P<pid>\d+)@(?P<host>[A-Za-z0-9-]*)-[a-z0-9_]+$")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True   # another user's process
    return True


def stale_staging(parent: Path, host: str, alive: Callable[[int], bool] = _alive) -> list[Path]:
    """The hidden staging directories in `parent` (`staged_dir`'s names: `.NAME.partial-PID@HOST-XXXX`) that a
    process of this host left behind when it was killed: its pid no longer alive. Another host's (a shared
    filesystem) and a live process's are not stale."""
    stale = []
    for entry in sorted(parent.glob(".*.partial-*")) if parent.is_dir() else []:
        found = _STAGING.search(entry.name)
        if found and entry.is_dir() and not entry.is_symlink() and found["host"] == host \
                and not alive(int(found["pid"])):
            stale.append(entry)
    return stale


def _remove_stale_staging(parent: Path, what: str) -> None:
    stale = stale_staging(parent, _host())
    for entry in stale:
        shutil.rmtree(entry, ignore_errors=True)
    if stale:
        print(f"{what}: removed {len(stale)} partial cop{'y' if len(stale) == 1 else 'ies'} left by a stopped run "
              f"in {parent}: {', '.join(p.name for p in stale)}", file=sys.stderr)


@contextmanager
def staged_dir(out: Path, what: str, *, merge: bool = False) -> Iterator[Path]:
    """A temporary directory beside `out` to build `what` in, put in place only when the build completes: renamed
    to `out` (new or an empty directory), or with `merge` each of its files moved into `out` (a report over an
    earlier one). Whatever fails, the temporary directory is removed, so nothing half-written is left; an OSError
    (ENOSPC, EROFS, EACCES, ...) becomes one line naming the path and the cause. The temporary directory is named
    with this process's pid and host; one that a killed process left in the same parent is removed first
    (`stale_staging`), in one line on stderr."""
    out = Path(out)
    tmp: Path | None = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_staging(out.parent, what)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-{os.getpid()}@{_host()}-", dir=out.parent))
        os.chmod(tmp, 0o755)
        yield tmp
        sync_tree(tmp)   # every file of the build on disk before any of it is in place
        if merge:
            out.mkdir(exist_ok=True)
            for item in sorted(tmp.iterdir()):
                _put(item, out / item.name)
            sync_dir(out)
            tmp.rmdir()
        else:
            if out.is_dir():
                out.rmdir()   # empty: the caller checked
            os.rename(tmp, out)
        sync_dir(out.parent)
        tmp = None
    except OSError as exc:
        name = exc.filename if isinstance(exc.filename, str) else None
        if tmp is not None and name is not None and name.startswith(str(tmp)):
            exc.filename = str(out) + name[len(str(tmp)):]   # the path as it was to be, not the temporary one
        raise write_error(exc, out, what) from None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
