"""Choosing entries: a selection in the store, or a run directory read as it is.

A selection is `KEY=VALUE` terms joined by commas (all must hold):

- `run=ID[+ID...]`: these store runs (`harness ingest` prints their ids);
- `last=N`: the newest N runs that hold a matching entry; `skip=K` passes over the newest K of them first (the
  nights before the last: `last=3,skip=1`);
- `tag=NAME`, `config=KEY`, `point=cN` (or `conc=N`), `host=NAME`, `variant=NAME`: entries with that value;
- `since=DATE`, `until=DATE` (`YYYY-MM-DD`, UTC, `until` inclusive): entries whose window started then.

A side of `regress` is a run directory when the path exists, else a selection. A baseline holds completed points with
a valid verdict only; failed and invalid entries stay in the store (and in `history`) with their state.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.store.db import Store
from harness.store.entry import Entry, read_run_dir, unpack
from harness.store.schema import ENTRY_COLUMNS

TEXT_KEYS = {"tag": "tag", "config": "config_key", "point": "point", "host": "host", "variant": "variant"}
KEYS = (*TEXT_KEYS, "run", "last", "skip", "conc", "since", "until")
_JSON = ("record", "row_json", "settings", "fingerprints")
_CHUNK = 500


def parse_selection(text: str) -> dict[str, str]:
    terms: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or not value:
            raise UserError(f"selection {text!r}: {part.strip()!r} is not KEY=VALUE (keys: {', '.join(KEYS)})")
        if key not in KEYS:
            raise UserError(f"selection {text!r}: unknown key {key!r} (keys: {', '.join(KEYS)})")
        terms[key] = value
    return terms


def _int(text: str, what: str) -> int:
    if not text.isdigit():
        raise UserError(f"selection: {what}={text!r} is not a whole number")
    return int(text)


def _date_ns(text: str, what: str, end: bool = False) -> int:
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise UserError(f"selection: {what}={text!r} is not a date YYYY-MM-DD") from None
    return int(((day + timedelta(days=1)) if end else day).timestamp()) * 10**9


def where(terms: dict[str, str]) -> tuple[list[str], list[Any]]:
    """The conditions on `entries` (alias e) of every term but `last`/`skip`/`run`."""
    clauses: list[str] = []
    params: list[Any] = []
    for key, column in TEXT_KEYS.items():
        if key in terms:
            clauses.append(f"e.{column} = ?")
            params.append(terms[key])
    if "conc" in terms:
        clauses.append("e.conc = ?")
        params.append(_int(terms["conc"], "conc"))
    if "since" in terms:
        clauses.append("e.started_at_ns >= ?")
        params.append(_date_ns(terms["since"], "since"))
    if "until" in terms:
        clauses.append("e.started_at_ns < ?")
        params.append(_date_ns(terms["until"], "until", end=True))
    return clauses, params


LIGHT = ("record", "row_json", "fingerprints")   # what `light` leaves out (history needs neither)


def select_entries(store: Store, selection: str | dict[str, str], *, baseline: bool = False,
                   samples: bool = True, light: bool = False) -> list[Entry]:
    """The entries a selection names, oldest run first; with `baseline`, only those a baseline may hold; `light`
    leaves the record, row and fingerprints out."""
    terms = parse_selection(selection) if isinstance(selection, str) else selection
    clauses, params = where(terms)
    if "run" in terms:
        ids = [_int(r, "run") for r in terms["run"].split("+")]
        clauses.append(f"e.run_id IN ({', '.join('?' * len(ids))})")
        params += ids
    if "last" in terms or "skip" in terms:
        last, skip = _int(terms.get("last", "1000000000"), "last"), _int(terms.get("skip", "0"), "skip")
        cond = " AND ".join(clauses) or "1 = 1"
        runs = [r[0] for r in store.query(f"SELECT DISTINCT e.run_id FROM entries e WHERE {cond} "
                                          "ORDER BY e.run_id DESC LIMIT ? OFFSET ?", (*params, last, skip))]
        if not runs:
            return []
        clauses.append(f"e.run_id IN ({', '.join('?' * len(runs))})")
        params += runs
    if baseline:
        clauses.append("e.state = 'completed' AND e.valid = 1")
    cond = " AND ".join(clauses) or "1 = 1"
    cols = ", ".join("NULL" if light and c in LIGHT else f"e.{c}" for c in ENTRY_COLUMNS)
    rows = store.query(f"SELECT e.id, e.run_id, r.source, {cols} FROM entries e JOIN runs r ON r.id = e.run_id "
                       f"WHERE {cond} ORDER BY e.run_id, e.started_at_ns, e.id", params)
    entries = [_entry(row) for row in rows]
    if samples:
        _attach_samples(store, entries)
    return entries


def _entry(row: Sequence[Any]) -> Entry:
    values = dict(zip(ENTRY_COLUMNS, row[3:]))
    for name in _JSON:
        values[name] = json.loads(values[name]) if values[name] is not None else None
    values["row"] = values.pop("row_json")
    values["reasons"] = json.loads(values["reasons"]) if values["reasons"] else []
    values["valid"] = None if values["valid"] is None else bool(values["valid"])
    return Entry(**values, id=int(row[0]), run_id=int(row[1]), run_label=f"run {row[1]} ({row[2]})")


def _attach_samples(store: Store, entries: Sequence[Entry]) -> None:
    by_id = {e.id: e for e in entries}
    ids = list(by_id)
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i:i + _CHUNK]
        for entry_id, e2el, ttft in store.query(
                f"SELECT entry_id, e2el, ttft FROM samples WHERE entry_id IN ({', '.join('?' * len(chunk))})", chunk):
            entry = by_id[entry_id]
            entry.e2el, entry.ttft = unpack(e2el), unpack(ttft)


def side(text: str, store: Store | None, *, baseline: bool) -> tuple[str, list[Entry]]:
    """A side of a comparison: (how it is named, its entries). A path that exists is a run directory; anything else
    a selection in the store."""
    path = Path(text)
    if path.exists():
        entries = read_run_dir(path)
        for e in entries:
            e.run_label = str(path)
        return str(path), [e for e in entries if e.in_baseline or not baseline]
    if "=" not in text:
        raise UserError(f"{text}: no such run directory, and not a store selection such as last=3,tag=nightly")
    if store is None:
        raise UserError(f"{text}: a store selection, but the results store is off (HARNESS_DB=off); pass --db")
    return text, select_entries(store, text, baseline=baseline)
