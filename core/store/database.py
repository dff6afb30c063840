"""Engines for the store: SQLite tuned for one writer and many readers, or any URL.

SQLite settings (applied to every connection):

* ``journal_mode=WAL`` - readers never block the writer and see the last
  committed state; a process killed mid-write leaves the database intact
  (the uncommitted tail of the WAL is ignored on the next open).
* ``synchronous=NORMAL`` - safe with WAL against process crashes; a power
  loss may drop the last commits, never corrupt the file.
* ``foreign_keys=ON`` and ``busy_timeout`` (:data:`BUSY_TIMEOUT_S`).
* pysqlite's own transaction handling is switched off and SQLAlchemy emits
  ``BEGIN`` itself (SQLAlchemy's documented recipe for pysqlite), so a
  transaction really spans all its statements; write transactions start
  with ``BEGIN IMMEDIATE`` (execution option :data:`BEGIN_OPTION`) so two
  writers queue on the busy timeout instead of failing a lock upgrade.

A read-only engine opens the file with ``mode=ro``: it cannot write, it
does not change the journal mode, and it may live in another thread or
process next to the writer.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import QueuePool

__all__ = ["BUSY_TIMEOUT_S", "BEGIN_OPTION", "CONNECT_TIMEOUT_S", "PG_WRITE_LOCK", "StoreError", "StoreDataError", "sqlite_engine", "url_engine", "writer"]

#: How long (s) a connection waits for another one's lock before failing.
BUSY_TIMEOUT_S = 30.0
#: Execution option naming the SQLite BEGIN mode (``"DEFERRED"``/``"IMMEDIATE"``).
BEGIN_OPTION = "steadyhand_sqlite_begin"


class StoreError(RuntimeError):
    """Base class of store errors (re-exported by :mod:`core.store`)."""


class StoreUnavailableError(StoreError):
    """A shared store's server cannot be reached or refuses the connection (down, wrong password, timed out):
    the environment is broken, not the input (exit code 4, ``core.exitcodes.EXIT_ENVIRONMENT``)."""


class StoreDataError(StoreError):
    """A stored JSON value cannot be read (a cell edited or damaged by hand); names the file."""


def _json_loader(path: Path):  # type: ignore[no-untyped-def]
    """``json.loads`` for the JSON columns that names ``path`` when a cell holds no valid JSON."""
    def loads(text: Any) -> Any:
        try:
            return json.loads(text)
        except (ValueError, TypeError):
            shown = str(text)[:30]
            raise StoreDataError(f"{path}: a damaged Steadyhand store: a stored value is not valid JSON "
                                 f"({shown!r}); move the file away to start a new store") from None
    return loads


def sqlite_engine(path: Path, *, read_only: bool = False) -> Engine:
    """Engine over the SQLite file ``path`` (created when writable and missing).

    Parameters
    ----------
    path : Path
        Database file.
    read_only : bool
        Open with ``mode=ro``; the file must exist.

    Returns
    -------
    Engine
        Connections may be used from any thread (``check_same_thread=False``);
        use one session per call.
    """
    path = Path(path).resolve()
    uri = path.as_uri() + ("?mode=ro" if read_only else "?mode=rwc")

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)

    engine = create_engine("sqlite+pysqlite://", creator=connect, poolclass=QueuePool,
                           pool_size=5, max_overflow=10, json_deserializer=_json_loader(path))

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: sqlite3.Connection, _record: object) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves, see below
        cur = dbapi_conn.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if not read_only:
                cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
            cur.execute("PRAGMA foreign_keys = ON")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        mode = "DEFERRED" if read_only else conn.get_execution_options().get(BEGIN_OPTION, "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")

    return engine


#: Longest wait (s) for a database server to accept a connection (psycopg's ``connect_timeout``).
CONNECT_TIMEOUT_S = 10
#: The PostgreSQL advisory lock every write transaction takes first (a fixed key, "SH" + "STORE" in ASCII
#: hex): writers queue as SQLite's ``BEGIN IMMEDIATE`` makes them, bounded by ``lock_timeout``
#: (:data:`BUSY_TIMEOUT_S`).
PG_WRITE_LOCK = 0x5348_53544F5245


def url_engine(url: str) -> Engine:
    """Engine for a server database's SQLAlchemy URL (``postgresql+psycopg://...``, :mod:`core.store.shared`).

    PostgreSQL: connections time out after :data:`CONNECT_TIMEOUT_S` s, wait at most :data:`BUSY_TIMEOUT_S` s
    for a lock, and a write transaction (:func:`writer`) starts with ``pg_advisory_xact_lock``
    (:data:`PG_WRITE_LOCK`), so two writers serialise as on SQLite.
    """
    if url.startswith("sqlite"):
        raise ValueError("open SQLite stores by path (Store.open), not by URL")
    if not url.startswith("postgresql"):
        return create_engine(url, pool_pre_ping=True)
    engine = create_engine(url, pool_pre_ping=True, connect_args={
        "connect_timeout": CONNECT_TIMEOUT_S, "options": f"-c lock_timeout={int(BUSY_TIMEOUT_S * 1000)}"})

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        if conn.get_execution_options().get(BEGIN_OPTION) == "IMMEDIATE":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_WRITE_LOCK})")

    return engine


def writer(engine: Engine) -> Engine:
    """The engine variant used for write transactions (``BEGIN IMMEDIATE`` on SQLite)."""
    return engine.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
