"""The harness's cache on this machine, shared by every run of its user: `HARNESS_CACHE_DIR`, else
`$XDG_CACHE_HOME/harness`, else `~/.cache/harness`. What it keeps is keyed by content, so any run may reuse it and
deleting it only costs time."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache(name: str) -> Path:
    """The directory `name` of the harness's cache (not created here)."""
    root = os.environ.get("HARNESS_CACHE_DIR")
    if root:
        return Path(root) / name
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "harness" / name


def user_cache_or(name: str, fallback: Path) -> Path:
    """The directory `name` of the harness's cache, created; `fallback` where it cannot be written (a read-only
    home on a compute node)."""
    path = user_cache(name)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return fallback
    return path if os.access(path, os.W_OK) else fallback
