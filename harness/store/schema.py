"""The store's tables and their versions. One schema for SQLite and PostgreSQL; the few words the two spell
differently are filled in per dialect (`TYPES`).

`MIGRATIONS[i]` takes a store from version i to i + 1; `meta.schema_version` says where a store is. Opening a store
applies the missing migrations in one transaction (an older store upgrades itself); a store whose version is newer
than `SCHEMA_VERSION` is refused, since this harness cannot know what its tables mean.

- `runs`: one per run directory an ingest stored anything new from (where it came from, on which host, when);
- `entries`: one per run of a point (an attempt): its identity (`entry_key`), state and verdict, what it ran
  (versions, settings, fingerprints, the recipe's revision, host and hardware), the headline metrics, and the
  record, row, settings and fingerprints as JSON text;
- `samples`: per entry, the per-request E2EL and TTFT in seconds (little-endian float64), as `compare` keeps them.
"""

from __future__ import annotations

TYPES = {
    "sqlite": {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "real": "REAL", "blob": "BLOB"},
    "postgresql": {"id": "BIGSERIAL PRIMARY KEY", "real": "DOUBLE PRECISION", "blob": "BYTEA"},
}

META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"

# The entry columns that are plain values, in the order `entry.Entry.columns` gives them.
ENTRY_COLUMNS = (
    "entry_key", "config_key", "point", "conc", "variant", "tag", "attempt", "state", "valid", "reasons",
    "started_at_ns", "engine", "image", "sglang_version", "client_name", "client_version", "scenario",
    "harness_version", "recipe_revision", "host", "hardware", "recipe_fingerprint", "settings_hash",
    "tput_per_gpu", "e2el_p50", "e2el_p90", "ttft_p90", "intvty_p90", "j_per_token", "n_requests", "source",
    "record", "row_json", "settings", "fingerprints",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (   # 0 -> 1: the tables
        "CREATE TABLE runs (id {id}, ingested_at_ns BIGINT NOT NULL, source TEXT NOT NULL, host TEXT, "
        "label TEXT)",
        "CREATE TABLE entries (id {id}, run_id BIGINT NOT NULL REFERENCES runs(id), "
        "entry_key TEXT NOT NULL UNIQUE, config_key TEXT NOT NULL, point TEXT NOT NULL, conc INTEGER NOT NULL, "
        "variant TEXT, tag TEXT, attempt TEXT, state TEXT NOT NULL, valid INTEGER, reasons TEXT, "
        "started_at_ns BIGINT, engine TEXT, image TEXT, sglang_version TEXT, client_name TEXT, "
        "client_version TEXT, scenario TEXT, harness_version TEXT, recipe_revision TEXT, host TEXT, hardware TEXT, "
        "recipe_fingerprint TEXT, settings_hash TEXT, tput_per_gpu {real}, e2el_p50 {real}, e2el_p90 {real}, "
        "ttft_p90 {real}, intvty_p90 {real}, j_per_token {real}, n_requests INTEGER, source TEXT, record TEXT, "
        "row_json TEXT, settings TEXT, fingerprints TEXT)",
        "CREATE TABLE samples (entry_id BIGINT PRIMARY KEY REFERENCES entries(id), n_e2el INTEGER NOT NULL, "
        "n_ttft INTEGER NOT NULL, e2el {blob} NOT NULL, ttft {blob} NOT NULL)",
    ),
    (   # 1 -> 2: what history and selections look up
        "CREATE INDEX entries_point ON entries (config_key, conc, started_at_ns)",
        "CREATE INDEX entries_run ON entries (run_id)",
    ),
    (   # 2 -> 3: a point's history by its name
        "CREATE INDEX entries_config_point ON entries (config_key, point, started_at_ns)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


def statements(migration: int, dialect: str) -> list[str]:
    """The SQL of migration `migration` (0-based) for `dialect`."""
    return [s.format(**TYPES[dialect]) for s in MIGRATIONS[migration]]
