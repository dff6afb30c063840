"""Prebuilt SQLAlchemy Core statements of the store's hot writes (a replayed step's ten rows).

A replay hands the store's writer thread about ten rows a step; written
through the ORM's unit of work each cost 1-2 ms of that thread's CPU (a
SELECT to find the row, an object mutated and flushed, statements built
and their cache keys computed anew every call), competing with the browser
on a small machine.  The statements here are built once per process and
run on a :class:`sqlalchemy.engine.Connection` with a parameter mapping:
SQLAlchemy compiles each once (its compiled cache) and a write is then
one ``cursor.execute``.

Upserts (a checkpoint, a step: one row per key, replaced when written
again) are ``INSERT ... ON CONFLICT (key) DO UPDATE`` on SQLite, one
statement on the table's unique constraint; on another database
:func:`upsert` looks the row up and updates or inserts it (two statements
in the caller's transaction).  A replaced row keeps its id and its
``created_at``, as the ORM's select-then-update kept them.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

from sqlalchemy import Connection, Table, bindparam, insert, select, update
from sqlalchemy.dialects import sqlite as _sqlite

from .database import StoreError
from .evidence_models import StepEvidenceRow
from .graph_models import StateEdgeRow, StateNodeRow
from .models import CheckpointRow, ObservationRow, ResolutionRow, RunRow, ScreenBaselineRow, StepRow, VerdictRow
from .resume_models import StepActRow

__all__ = [
    "RUNS", "STEPS", "OBSERVATIONS", "RESOLUTIONS", "VERDICTS", "CHECKPOINTS", "BASELINES", "EVIDENCE", "NODES",
    "EDGES", "ACTS", "TOUCH_RUN", "INSERT_OBSERVATION", "INSERT_RESOLUTION", "INSERT_VERDICT", "INSERT_ACT",
    "SAVEPOINT_NAME", "TransactionLostError", "check_transaction", "savepoint", "upsert", "write", "insert_id",
    "first",
]

RUNS: Table = RunRow.__table__  # type: ignore[assignment]
STEPS: Table = StepRow.__table__  # type: ignore[assignment]
OBSERVATIONS: Table = ObservationRow.__table__  # type: ignore[assignment]
RESOLUTIONS: Table = ResolutionRow.__table__  # type: ignore[assignment]
VERDICTS: Table = VerdictRow.__table__  # type: ignore[assignment]
CHECKPOINTS: Table = CheckpointRow.__table__  # type: ignore[assignment]
BASELINES: Table = ScreenBaselineRow.__table__  # type: ignore[assignment]
EVIDENCE: Table = StepEvidenceRow.__table__  # type: ignore[assignment]
NODES: Table = StateNodeRow.__table__  # type: ignore[assignment]
EDGES: Table = StateEdgeRow.__table__  # type: ignore[assignment]
ACTS: Table = StepActRow.__table__  # type: ignore[assignment]

#: A run's last-write time: parameters ``run_id``, ``now``; its rowcount is 0 for an unknown run.
TOUCH_RUN = update(RUNS).where(RUNS.c.id == bindparam("run_id")).values(updated_at=bindparam("now"))
#: Plain inserts: the parameters are the row's columns.
INSERT_OBSERVATION = insert(OBSERVATIONS)
INSERT_RESOLUTION = insert(RESOLUTIONS)
INSERT_VERDICT = insert(VERDICTS)
INSERT_ACT = insert(ACTS)

#: The name of the savepoint around each write of a batch on SQLite (:func:`savepoint`).
SAVEPOINT_NAME = "steadyhand_write"


class TransactionLostError(StoreError):
    """A write failed and took its batch's whole transaction with it (SQLite rolls a transaction back by itself
    on a full disk or an I/O error): nothing of the batch is stored, and it must not commit."""


@contextmanager
def savepoint(conn: Connection) -> Iterator[Connection]:
    """A savepoint around one write in the caller's transaction: a write that fails is undone alone.

    On SQLite the ``SAVEPOINT``/``RELEASE`` statements go straight to the driver's connection (SQLAlchemy's
    ``begin_nested`` compiles a new statement for each, a fifth of a batch's CPU); on another database it is
    ``conn.begin_nested()``.

    Raises
    ------
    TransactionLostError
        The write failed and SQLite rolled back the whole transaction meanwhile (the batch is lost; going on
        would commit the writes after it one by one).
    """
    if conn.dialect.name != "sqlite":
        with conn.begin_nested():
            yield conn
        return
    raw = conn.connection.driver_connection
    if not raw.in_transaction:  # an earlier write of the batch lost it: a SAVEPOINT now would begin a new one
        raise TransactionLostError("not stored: the database rolled back the batch of records this one was in, "
                                   "after another of them failed")
    raw.execute(f"SAVEPOINT {SAVEPOINT_NAME}")
    try:
        yield conn
    except BaseException as exc:
        if not raw.in_transaction:
            why = getattr(exc, "orig", None) or exc  # the database's own words, without the SQL
            raise TransactionLostError(f"the database rolled back the whole batch of records this one was in: {why}") \
                from exc
        raw.execute(f"ROLLBACK TO {SAVEPOINT_NAME}")
        raw.execute(f"RELEASE {SAVEPOINT_NAME}")
        raise
    raw.execute(f"RELEASE {SAVEPOINT_NAME}")


def check_transaction(conn: Connection) -> None:
    """Raise :class:`TransactionLostError` when SQLite rolled back ``conn``'s transaction by itself (before a
    batch commits: the driver's COMMIT without a transaction would say nothing)."""
    if conn.dialect.name == "sqlite" and not conn.connection.driver_connection.in_transaction:
        raise TransactionLostError("not stored: the database rolled back the batch of records this one was in, "
                                   "after another of them failed")


class _Driver:
    """A prebuilt statement compiled for SQLite once: its SQL and, per ``?``, the parameter's name and its type's
    bind processor (the conversion SQLAlchemy would make: a datetime to text, a JSON value to its dump)."""

    __slots__ = ("sql", "binds")

    def __init__(self, sql: str, binds: tuple[tuple[str, Any], ...]) -> None:
        self.sql, self.binds = sql, binds


#: ``(statement id, parameter names)`` -> its :class:`_Driver`, or None when SQLAlchemy must run it (it computes a
#: default or expands a parameter).  Keyed by id: the statements are this package's module constants.
_DRIVER: dict[tuple[int, tuple[str, ...]], _Driver | None] = {}


def _driver(stmt: Any, dialect: Any, names: tuple[str, ...]) -> _Driver | None:
    compiled = stmt.compile(dialect=dialect, column_keys=list(names))
    order = compiled.positiontup
    if (order is None or compiled.insert_prefetch or compiled.update_prefetch or compiled.literal_execute_params
            or compiled.post_compile_params or any(n not in names for n in order)):
        return None
    binds = tuple((n, compiled.binds[n].type.dialect_impl(dialect).bind_processor(dialect)) for n in order)
    return _Driver(compiled.string, binds)


def _run(conn: Connection, stmt: Any, params: Mapping[str, Any]) -> Any:
    """``stmt`` with ``params`` on SQLite's driver connection (a sqlite3 cursor), None when it must go through
    SQLAlchemy.  A write's Core execution costs ten times the driver's own call (50 against 5 us a statement,
    measured); the statement is compiled once, by SQLAlchemy, with the same conversions of values."""
    if conn.dialect.name != "sqlite":
        return None
    key = (id(stmt), tuple(params))
    try:
        d = _DRIVER[key]
    except KeyError:
        d = _DRIVER[key] = _driver(stmt, conn.dialect, key[1])
    if d is None:
        return None
    return conn.connection.driver_connection.execute(
        d.sql, [params[n] if proc is None else proc(params[n]) for n, proc in d.binds])


def write(conn: Connection, stmt: Any, params: Mapping[str, Any]) -> int:
    """Run one prebuilt INSERT/UPDATE of this package with ``params`` (column values and named parameters) in the
    caller's transaction; returns the rows it changed.  SQLite: on the driver's connection (:func:`_run`)."""
    cur = _run(conn, stmt, params)
    if cur is None:
        return int(conn.execute(stmt, params).rowcount)
    return int(cur.rowcount)


def insert_id(conn: Connection, stmt: Any, params: Mapping[str, Any]) -> int:
    """Run one prebuilt INSERT of this package; returns the new row's id."""
    cur = _run(conn, stmt, params)
    if cur is None:
        return int(conn.execute(stmt, params).inserted_primary_key[0])
    return int(cur.lastrowid)


def first(conn: Connection, stmt: Any, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The first row of a prebuilt SELECT of integer columns (ids, counts: values SQLite returns as they are)."""
    cur = _run(conn, stmt, params)
    if cur is None:
        row = conn.execute(stmt, params).first()
        return None if row is None else tuple(row)
    try:
        return cur.fetchone()
    finally:
        cur.close()


#: ``(dialect, table, key columns, columns written)`` -> the prebuilt statements of :func:`upsert`.
_UPSERTS: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], tuple[Any, ...]] = {}


def _upsert_statements(dialect: str, table: Table, keys: tuple[str, ...], columns: tuple[str, ...]) -> tuple[Any, ...]:
    """SQLite: ``(INSERT ... ON CONFLICT (keys) DO UPDATE SET`` each of ``columns`` to the value offered``,)``;
    another database: ``(look the id up, insert, update by id)`` (parameters: the columns, and ``row_id``)."""
    if dialect == "sqlite":
        ins = _sqlite.insert(table)
        return (ins.on_conflict_do_update(index_elements=[table.c[k] for k in keys],
                                          set_={c: ins.excluded[c] for c in columns}),)
    find = select(table.c.id).where(*(table.c[k] == bindparam(k) for k in keys)).order_by(table.c.id).limit(1)
    return find, insert(table), update(table).where(table.c.id == bindparam("row_id"))


def upsert(conn: Connection, table: Table, keys: Sequence[str], values: Mapping[str, Any], *,
           insert_only: Mapping[str, Any] | None = None) -> None:
    """Insert the row of ``values`` or, when a row with the same ``keys`` exists, update it in place.

    SQLite: one ``INSERT ... ON CONFLICT DO UPDATE`` (the row keeps its id).  Another database: the row's id
    looked up, then an UPDATE or an INSERT (PostgreSQL's own ``ON CONFLICT`` would draw a new id from the
    table's sequence for every update: ids with gaps, which the ORM's select-then-update never left).

    Parameters
    ----------
    conn : Connection
        In the write transaction (and savepoint) of the caller.
    table : Table
        With a unique constraint on exactly ``keys``.
    keys : Sequence[str]
        Column names identifying the row; their values are in ``values``.
    values : Mapping[str, Any]
        The columns written on insert and on update.
    insert_only : Mapping[str, Any] | None
        Columns written only when the row is new (e.g. ``created_at``).
    """
    keys = tuple(keys)
    columns = tuple(c for c in values if c not in keys)
    dialect = conn.dialect.name
    cache_key = (dialect, table.name, keys, columns)
    try:
        stmts = _UPSERTS[cache_key]
    except KeyError:
        stmts = _UPSERTS[cache_key] = _upsert_statements(dialect, table, keys, columns)
    row = dict(values)
    if insert_only:
        row.update(insert_only)
    if len(stmts) == 1:
        write(conn, stmts[0], row)
        return
    find, ins, upd = stmts
    found = first(conn, find, {k: values[k] for k in keys})
    if found is None:
        write(conn, ins, row)
    else:
        write(conn, upd, dict({c: values[c] for c in columns}, row_id=found[0]))
