"""The results store: every point a run leaves, kept in one database so runs can be tracked over time.

SQLite (Python's own module) by default, at a per-user path; PostgreSQL (psycopg 3) by `postgresql://` URL for a
team. `location` says which store is in use, `schema` how its tables are laid out and upgraded, `db` how it is
opened and written, `entry` what one point's entry holds (read from its directory), `ingest` how a run directory
lands in it, `select` how entries are chosen back out of it (or read straight from a run directory).
"""
