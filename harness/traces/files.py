"""Corpora on local disk: a directory of per-trace JSON files, a JSONL file, or one JSON trace.

A directory holds one trace per `*.json` file (the layout AIPerf's `weka_trace` loader reads); other
files in it are ignored, so a directory may carry a README or the generator's `synth.yaml`, but
never another `*.json`. A directory the harness writes carries `.harness-traces`, the list of the files it wrote:
a later write replaces only those, and never touches a file the harness did not write. A JSONL file holds one trace per line (the Hugging Face dataset's layout).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import SCHEMA_VERSION
from harness.artifacts import write_bytes
from harness.errors import UserError
from harness.inputs.yaml_input import decode, read_text
from harness.traces.schema import Corpus, Trace, parse_trace

MAX_CORPUS_BYTES = 4 * 1024 * 1024 * 1024  # a corpus file is read whole; a bound against reading a device


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _parse_json(text: str, where: str) -> Any:
    """JSON as the standard defines it: NaN and Infinity are refused, and so are absurd nesting and integers."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise UserError(f"{where}: invalid JSON: nested too deeply") from None
    except ValueError as exc:  # NaN/Infinity, or an integer longer than Python converts
        raise UserError(f"{where}: invalid JSON: {str(exc).split(';')[0]}") from None


def _unique(traces: Iterable[tuple[Trace, str]], source: str) -> Corpus:
    seen: dict[str, str] = {}
    out: list[Trace] = []
    for trace, where in traces:
        if trace.id in seen:
            raise UserError(f"{where}: trace {trace.id}: id: duplicate of the trace in {seen[trace.id]}")
        seen[trace.id] = where
        out.append(trace)
    if not out:
        raise UserError(f"{source}: no traces found (expected *.json files or JSONL lines)")
    return Corpus(traces=tuple(out), source=source)


def read_jsonl(path: Path) -> Corpus:
    """One trace per non-blank line."""

    def gen() -> Iterable[tuple[Trace, str]]:
        if not path.is_file():
            raise UserError(f"{path}: not a regular file; expected a JSONL trace corpus")
        try:
            fh = open(path, "rb")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise UserError(f"{path}: cannot read the trace corpus: {exc.strerror or exc}") from None
        with fh:
            for n, raw in enumerate(fh, 1):
                where = f"{path}:{n}"
                line = decode(raw, where).strip()
                if line:
                    yield parse_trace(_parse_json(line, where), where), where

    return _unique(gen(), str(path))


def read_json_file(path: Path) -> Trace:
    return parse_trace(_parse_json(read_text(path, "trace", MAX_CORPUS_BYTES), str(path)), str(path))


def read_dir(path: Path) -> Corpus:
    """Every `*.json` file of a directory, in name order (the order AIPerf reads them in)."""
    files = sorted(path.glob("*.json"))
    return _unique(((read_json_file(f), str(f)) for f in files), str(path))


def read_local(path: Path) -> Corpus:
    """A directory, a `.jsonl` file or a single `.json` trace."""
    if path.is_dir():
        return read_dir(path)
    if not path.exists():
        raise UserError(f"{path}: no such file or directory")
    if path.suffix == ".jsonl":
        return read_jsonl(path)
    return _unique([(read_json_file(path), str(path))], str(path))


MAX_NAME_ID_BYTES = 128     # an id longer than this (UTF-8) names its file by a prefix and a hash
_UNSAFE = re.compile(r"[/\\\x00-\x1f\x7f\ud800-\udfff]")   # a lone surrogate (`\\ud800` in JSON) has no file name
HASHED_PREFIX_CHARS = 48


def trace_file_name(trace_id: str) -> str:
    """The file a trace is written to: `<id>.json` for an id that is a safe file name (at most
    `MAX_NAME_ID_BYTES` bytes of UTF-8, no `/`, `\\`, control character or lone surrogate, not starting with
    `.`); any other id gets a readable prefix (unsafe characters as `_`) and the first 16 hex digits of its
    SHA-256, so the name stays well under every filesystem's name limit, with the temporary name of an atomic
    write. The id itself is kept in the file; AIPerf and `read_dir` read it from there."""
    if len(trace_id.encode("utf-8", "surrogatepass")) <= MAX_NAME_ID_BYTES and not _UNSAFE.search(trace_id) \
            and not trace_id.startswith("."):
        return f"{trace_id}.json"
    prefix = _UNSAFE.sub("_", trace_id[:HASHED_PREFIX_CHARS]).lstrip(".")
    while len(prefix.encode("utf-8", "surrogatepass")) > HASHED_PREFIX_CHARS:   # multi-byte characters
        prefix = prefix[:-1]
    digest = hashlib.sha256(trace_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{prefix or 'trace'}-{digest}.json"


def trace_text(trace: Trace) -> str:
    """The file form of a trace: compact JSON on one line."""
    return json.dumps(trace.to_json_dict(), separators=(",", ":"))


def _atomic_write(path: Path, text: str) -> None:
    """A trace file as converted, byte for byte: a prompt is replayed as recorded, never redacted."""
    write_bytes(path, text.encode("utf-8"))


# The list of files the harness wrote into a corpus directory. Not `*.json`: AIPerf's loader and `read_dir`
# read every `*.json` of the directory (hidden ones too) as a trace.
MANIFEST = ".harness-traces"


def _write_error(path: Path, exc: OSError) -> UserError:
    return UserError(f"{exc.filename or path}: cannot write the trace corpus: {exc.strerror or exc}")


def _owned(out: Path) -> set[str] | None:
    """The file names the manifest of `out` lists (files the harness wrote there), or None without a manifest."""
    manifest = out / MANIFEST
    if not manifest.exists():
        return None
    raw = _parse_json(read_text(manifest, "trace corpus manifest", 64 * 1024 * 1024), str(manifest))
    files = raw.get("files") if isinstance(raw, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) and "/" not in f for f in files):
        raise UserError(f"{manifest}: files: expected a list of file names (the files the harness wrote here)")
    return set(files)


def _claim(out: Path) -> set[str]:
    """The files of `out` the harness may replace or remove: `out` is the harness's when it creates it, when it
    is empty, or when it holds the harness's manifest (and then only the files the manifest names)."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: not a directory (a corpus directory, or a path ending in .jsonl)")
    if not out.exists():
        out.mkdir(parents=True)
        return set()
    owned = _owned(out)
    if owned is not None:
        return owned
    foreign = sorted(p.name for p in out.iterdir())
    if foreign:
        unnamed = f", {len(foreign) - 10} unnamed" if len(foreign) > 10 else ""
        raise UserError(f"--out {out}: holds files the harness did not write ({', '.join(foreign[:10])}{unnamed}); "
                        "nothing was changed: write the corpus to a new or empty directory")
    return set()


def _write_manifest(out: Path, files: Iterable[str]) -> None:
    _atomic_write(out / MANIFEST, json.dumps({"schema_version": SCHEMA_VERSION, "files": sorted(files)}) + "\n")


def write_dir(corpus: Corpus, out: Path) -> list[Path]:
    """Write one `<id>.json` per trace (a long or unsafe id: a prefix and a hash, `trace_file_name`) into `out`, a
    directory the harness creates, an empty one or one it wrote before; any other directory is refused. The
    manifest (`.harness-traces`) names the files the harness wrote: those a new corpus no longer has are removed;
    a file it does not name (a user's `results.json`) is never removed nor overwritten.

    Trace files are the Weka format itself (no `schema_version`: AIPerf's schema forbids extra keys).
    """
    names = [trace_file_name(t.id) for t in corpus.traces]
    first: dict[str, str] = {}
    for trace, name in zip(corpus.traces, names, strict=True):
        if first.setdefault(name, trace.id) != trace.id:
            raise UserError(f"trace {trace.id}: id: its file name {name} is also the file name of trace {first[name]}")
    try:
        owned = _claim(out)
        for name in names:
            if name not in owned and (out / name).exists():
                raise UserError(f"--out {out}: {name} is a file the harness did not write; nothing was changed: "
                                "write the corpus to a new or empty directory")
        _write_manifest(out, owned | set(names))  # before any write: a crash leaves every file named
        paths = []
        for trace, name in zip(corpus.traces, names, strict=True):
            p = out / name
            _atomic_write(p, trace_text(trace) + "\n")
            paths.append(p)
        for stale in sorted(owned - set(names)):
            (out / stale).unlink(missing_ok=True)
        _write_manifest(out, names)
    except OSError as exc:
        raise _write_error(out, exc) from None
    return paths


def write_jsonl(corpus: Corpus, out: Path) -> Path:
    """Write the corpus as one trace per line."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(out, "".join(trace_text(t) + "\n" for t in corpus.traces))
    except OSError as exc:
        raise _write_error(out, exc) from None
    return out


def write_corpus(corpus: Corpus, out: Path) -> Path:
    """A `.jsonl` path gets a JSONL file; anything else becomes a directory of per-trace files."""
    if out.suffix == ".jsonl":
        return write_jsonl(corpus, out)
    write_dir(corpus, out)
    return out
