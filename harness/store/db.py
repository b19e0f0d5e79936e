"""Opening a results store and writing to it, the same way for SQLite and PostgreSQL.

SQLite is opened through Python's `sqlite3` in write-ahead-log mode with a long busy timeout, every write in a
`BEGIN IMMEDIATE` transaction, so two writers queue rather than fail (a file on a local disk: WAL needs shared memory,
which network filesystems do not give; a team on shared storage uses PostgreSQL). PostgreSQL is opened through
psycopg 3, imported only when a `postgresql://` store is used. SQL is written once with `?` placeholders.

Every error of either driver (a file that is not a database, a directory without write permission, a server that
refuses or goes away) becomes one `UserError` line naming the store; the transaction it happened in is rolled back,
so nothing of it is left.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from harness.errors import UserError
from harness.store.location import Location
from harness.store.schema import META, SCHEMA_VERSION, statements

BUSY_TIMEOUT_S = 120
_PG_LOCK = 7_261_960_001   # the advisory lock key migrations hold on PostgreSQL


def _pg_errors() -> tuple[type[BaseException], ...]:
    try:
        import psycopg
    except ImportError:
        return ()
    return (psycopg.Error,)


class Store:
    """An open store. `transaction()` around every write; `execute`/`query` inside or outside one."""

    def __init__(self, location: Location, conn: Any) -> None:
        self.location = location
        self.dialect = location.kind
        self._conn = conn
        self._in_tx = False

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.dialect == "postgresql" else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self.errors():
            return self._conn.execute(self._sql(sql), tuple(params))

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.errors():
            return [tuple(r) for r in self._conn.execute(self._sql(sql), tuple(params)).fetchall()]

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.errors():
            if self.dialect == "postgresql":
                with self._conn.cursor() as cur:
                    cur.executemany(self._sql(sql), rows)
            else:
                self._conn.executemany(sql, rows)

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """One transaction: committed when the block ends, rolled back when it raises (or the process dies)."""
        if self._in_tx:
            yield self
            return
        with self.errors():
            if self.dialect == "postgresql":
                with self._conn.transaction():
                    self._in_tx = True
                    try:
                        yield self
                    finally:
                        self._in_tx = False
                return
            self._conn.execute("BEGIN IMMEDIATE")
            self._in_tx = True
            try:
                yield self
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                self._in_tx = False

    @contextmanager
    def errors(self) -> Iterator[None]:
        """A driver error as one line naming the store."""
        caught: tuple[type[BaseException], ...] = (sqlite3.Error, *_pg_errors())
        try:
            yield
        except caught as exc:
            raise store_error(self.location, exc) from exc

    def blob(self, value: Any) -> bytes:
        return bytes(value)

    def close(self) -> None:
        try:
            self._conn.close()
        except Exception:   # closing a connection the server already dropped
            pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def store_error(location: Location, exc: BaseException) -> UserError:
    cause = " ".join(str(exc).split()) or type(exc).__name__
    return UserError(f"results store {location.shown}: {cause}")


def open_store(location: Location) -> Store:
    """The store at `location`, created where it does not exist and upgraded to `SCHEMA_VERSION`; one line when it
    cannot be opened, or is newer than this harness."""
    store = Store(location, _connect(location))
    try:
        migrate(store)
    except BaseException:
        store.close()
        raise
    return store


def _connect(location: Location) -> Any:
    if location.kind == "postgresql":
        try:
            import psycopg
        except ImportError:
            raise UserError(f"results store {location.shown}: PostgreSQL needs psycopg 3 (pip install "
                            "'psycopg[binary]')") from None
        try:
            return psycopg.connect(location.url or "", autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise store_error(location, exc) from None
    path = location.path
    assert path is not None
    if path.is_dir():
        raise UserError(f"results store {path}: a directory, not a SQLite file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"results store {path}: cannot create {path.parent} ({exc.strerror or exc})") from None
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        raise store_error(location, exc) from None
    return conn


def schema_version(store: Store) -> int:
    rows = store.query("SELECT value FROM meta WHERE key = 'schema_version'")
    return int(rows[0][0]) if rows else 0


def migrate(store: Store, target: int = SCHEMA_VERSION) -> int:
    """Bring the store to `target`, in one transaction; its version before. A newer store is refused."""
    with store.transaction():
        if store.dialect == "postgresql":
            store.execute("SELECT pg_advisory_xact_lock(?)", (_PG_LOCK,))
        store.execute(META)
        try:
            version = schema_version(store)
        except ValueError:
            raise UserError(f"results store {store.location.shown}: its schema version is not a number") from None
        if version > SCHEMA_VERSION:
            raise UserError(f"results store {store.location.shown}: schema version {version} is newer than this "
                            f"harness's {SCHEMA_VERSION}; upgrade the harness to use it")
        for migration in range(version, target):
            for sql in statements(migration, store.dialect):
                store.execute(sql)
        if target > version:
            if version == 0:
                store.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(target),))
            else:
                store.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(target),))
    return version
