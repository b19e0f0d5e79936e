"""Corpora on local disk: a directory of per-trace JSON files, a JSONL file, or one JSON trace.

A directory holds one trace per `*.json` file (the layout AIPerf's `weka_trace` loader reads); other
files in it are ignored, so a directory may carry a README or the generator's `synth.yaml`, but
never another `*.json`. A JSONL file holds one trace per line (the Hugging Face dataset's layout).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

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


def trace_text(trace: Trace) -> str:
    """The file form of a trace: compact JSON on one line."""
    return json.dumps(trace.to_json_dict(), separators=(",", ":"))


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_dir(corpus: Corpus, out: Path) -> list[Path]:
    """Write one `<id>.json` per trace into `out`; stale `*.json` files there are removed first.

    Trace files are the Weka format itself (no `schema_version`: AIPerf's schema forbids extra keys).
    """
    out.mkdir(parents=True, exist_ok=True)
    names = {f"{t.id}.json" for t in corpus.traces}
    for stale in out.glob("*.json"):
        if stale.name not in names:
            stale.unlink()
    paths = []
    for trace in corpus.traces:
        if "/" in trace.id or trace.id.startswith("."):
            raise UserError(f"trace {trace.id}: id: cannot be used as a file name")
        p = out / f"{trace.id}.json"
        _atomic_write(p, trace_text(trace) + "\n")
        paths.append(p)
    return paths


def write_jsonl(corpus: Corpus, out: Path) -> Path:
    """Write the corpus as one trace per line."""
    out.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(out, "".join(trace_text(t) + "\n" for t in corpus.traces))
    return out


def write_corpus(corpus: Corpus, out: Path) -> Path:
    """A `.jsonl` path gets a JSONL file; anything else becomes a directory of per-trace files."""
    if out.suffix == ".jsonl":
        return write_jsonl(corpus, out)
    write_dir(corpus, out)
    return out
