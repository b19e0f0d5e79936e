"""AIPerf's resolution of a client command, kept per command and client version so it is paid once.

Importing the client's resolver takes about a second, more on a loaded node; `plan`, `check`, `preflight`,
`submit` and `run` ask it the same question for the same commands again and again. A resolution depends only on
the client's version, the command's arguments and what the command names on disk (a local corpus), so it is
kept in `HARNESS_CACHE_DIR` (default `$XDG_CACHE_HOME/harness`, else `~/.cache/harness`) under
`aiperf-resolutions/`, keyed by a hash of those three. A cache that cannot be read or written is simply not
used.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.artifacts import write_json
from harness.recipe.scenario import Resolution, Violation
from harness.user_cache import user_cache

CLIENT_DISTRIBUTIONS = ("agentx-harness", "aiperf")   # the fork replaces upstream's aiperf package


def cache_dir() -> Path:
    return user_cache("aiperf-resolutions")


def client_version() -> str | None:
    """The installed client distribution and version the resolver is imported from ('agentx-harness 1.0.12')."""
    for name in CLIENT_DISTRIBUTIONS:
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return None


def _on_disk(token: str) -> list[Any] | None:
    """What a path argument names, as far as a resolution can read it: a file's size and mtime, a directory's
    entries with theirs (one level); None for an argument that is not an existing path."""
    if "/" not in token:
        return None
    path = Path(token)
    try:
        if path.is_dir():
            return sorted([e.name, e.stat().st_size, e.stat().st_mtime_ns] for e in os.scandir(path))
        if path.is_file():
            st = path.stat()
            return [st.st_size, st.st_mtime_ns]
    except OSError:
        return None
    return None


def cache_key(argv: list[str], scratch: str, version: str) -> str:
    """The hash of the client version, the arguments (the scratch directory written as a placeholder, as it
    differs between calls) and what the arguments name on disk."""
    args = [tok.replace(scratch, "<scratch>") for tok in argv]
    disk = [_on_disk(tok) for tok in argv if not tok.startswith(scratch)]
    text = json.dumps([version, args, disk], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def from_json(doc: dict[str, Any]) -> Resolution:
    return Resolution(bool(doc["accepted"]), doc["submission_valid"],
                      [Violation(str(v["flag"]), str(v["current"]), str(v["required"])) for v in doc["violations"]],
                      doc["error"])


def kept_resolve(argv: list[str], scratch: str, resolve: Callable[[list[str]], Resolution]) -> Resolution:
    """`resolve(argv)`, read from the cache when this command was resolved before by the same client version."""
    version = client_version()
    if version is None:
        return resolve(argv)
    path = cache_dir() / f"{cache_key(argv, scratch, version)}.json"
    try:
        return from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    res = resolve(argv)
    with contextlib.suppress(OSError):
        write_json(path, res.to_json())   # atomic, secrets redacted
    return res
