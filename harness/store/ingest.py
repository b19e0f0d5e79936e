"""`harness ingest RUN_DIR...` and the automatic ingest at the end of `run`, `sweep`, `follow` and `report`.

Every run directory is read whole before anything is written (a corrupt record stops the ingest with one line and
nothing stored); then each run directory is written in one transaction: a `runs` row and the entries the store does
not hold yet with their samples. An entry already there (the same point run, by its entry key) is skipped, so
ingesting a directory twice stores it once; a writer killed mid-way leaves nothing of its transaction. Two writers at
once queue on SQLite's lock or PostgreSQL's unique key, and neither loses an entry.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.store.db import Store
from harness.store.entry import Entry, pack, read_run_dir
from harness.store.schema import ENTRY_COLUMNS

_INSERT = (f"INSERT INTO entries (run_id, {', '.join(ENTRY_COLUMNS)}) VALUES (?, {', '.join('?' * len(ENTRY_COLUMNS))}) "
           "ON CONFLICT (entry_key) DO NOTHING RETURNING id")
_SAMPLES = "INSERT INTO samples (entry_id, n_e2el, n_ttft, e2el, ttft) VALUES (?, ?, ?, ?, ?)"
_CHUNK = 500


@dataclass(frozen=True)
class Ingested:
    source: str
    new: int        # entries stored now
    known: int      # entries the store already held
    run_id: int | None


def known_keys(store: Store, keys: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for i in range(0, len(keys), _CHUNK):
        chunk = keys[i:i + _CHUNK]
        found |= {r[0] for r in store.query(
            f"SELECT entry_key FROM entries WHERE entry_key IN ({', '.join('?' * len(chunk))})", chunk)}
    return found


def write_entries(store: Store, source: str, entries: Sequence[Entry], *,
                  after_each: Callable[[int], None] | None = None) -> Ingested:
    """Store `entries` as one run from `source`, in one transaction; those already stored are skipped."""
    with store.transaction():
        known = known_keys(store, [e.entry_key for e in entries])
        new = [e for e in entries if e.entry_key not in known]
        if not new:
            return Ingested(source, 0, len(entries), None)
        run_id = store.query("INSERT INTO runs (ingested_at_ns, source, host) VALUES (?, ?, ?) RETURNING id",
                             (time.time_ns(), source, socket.gethostname()))[0][0]
        stored = 0
        for i, entry in enumerate(new):
            rows = store.query(_INSERT, (run_id, *entry.columns()))
            if not rows:
                continue   # another writer stored it meanwhile
            stored += 1
            if len(entry.e2el) or len(entry.ttft):
                store.execute(_SAMPLES, (rows[0][0], len(entry.e2el), len(entry.ttft), pack(entry.e2el),
                                         pack(entry.ttft)))
            if after_each is not None:
                after_each(i)
        if stored == 0:
            store.execute("DELETE FROM runs WHERE id = ?", (run_id,))
            return Ingested(source, 0, len(entries), None)
        return Ingested(source, stored, len(entries) - stored, int(run_id))


def ingest(store: Store, run_dirs: Sequence[Path]) -> list[Ingested]:
    """Read every run directory, then store each as one run."""
    read = [(str(d.resolve()), read_run_dir(d)) for d in run_dirs]
    return [write_entries(store, source, entries) for source, entries in read]


def summary(results: Sequence[Ingested], shown: str) -> str:
    """One line: how many entries were stored where."""
    new, known = sum(r.new for r in results), sum(r.known for r in results)
    runs = [str(r.run_id) for r in results if r.run_id is not None]
    where = f" as run {', '.join(runs)}" if runs else ""
    return f"results store: {new} new entr{'y' if new == 1 else 'ies'}{where}, {known} already there -> {shown}"
