"""The automatic ingest at the end of `run`, `sweep`, `follow` and `report`: the run directory lands in the store in
use (`harness.store.location`), and one line says where; `HARNESS_DB=off` skips it. A store that cannot be written
is a warning line, never the command's failure: the run's own files are its result."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from harness.errors import UserError, one_line
from harness.store.db import open_store
from harness.store.entry import point_dirs
from harness.store.ingest import ingest, summary
from harness.store.location import resolve


def ingest_after(run_dirs: Sequence[Path], option: str | None = None, out: TextIO | None = None) -> str | None:
    """Ingest `run_dirs` (those that hold points) into the store in use and print where (on `out`, default stdout);
    the line, or None when the store is off or there is nothing to store."""
    dirs = [d for d in run_dirs if d.is_dir() and point_dirs(d)]
    try:
        location = resolve(option)
        if location is None or not dirs:
            return None
        with open_store(location) as store:
            line = summary(ingest(store, dirs), location.shown)
    except UserError as exc:
        line = f"warning: not stored: {one_line(str(exc))} (HARNESS_DB=off skips the store)"
        print(line, file=sys.stderr, flush=True)
        return line
    print(line, file=out or sys.stdout, flush=True)
    return line
