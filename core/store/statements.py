"""Prebuilt SQLAlchemy Core statements of the store's hot writes (a replayed step's ten rows).

A replay hands the store's writer thread about ten rows a step; written
through the ORM's unit of work each cost 1-2 ms of that thread's CPU (a
SELECT to find the row, an object mutated and flushed, statements built
and their cache keys computed anew every call), competing with the browser
on a small machine.  The statements here are built once per process and
run on a :class:`sqlalchemy.engine.Connection` with a parameter mapping:
SQLAlchemy compiles each once (its compiled cache) and a write is then
one ``cursor.execute``.

Upserts (a checkpoint, a step, a baseline: one row per key, replaced when
written again) are ``INSERT ... ON CONFLICT (key) DO UPDATE`` on SQLite
and PostgreSQL, in one statement on the table's unique constraint; on
another database :func:`upsert` looks the row up and updates or inserts
it (two statements in the caller's transaction).  A replaced row keeps its
id and its ``created_at``, as the ORM's select-then-update kept them.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from sqlalchemy import Connection, Table, bindparam, insert, select, update
from sqlalchemy.dialects import postgresql as _pg
from sqlalchemy.dialects import sqlite as _sqlite

from .evidence_models import StepEvidenceRow
from .graph_models import StateEdgeRow, StateNodeRow
from .models import CheckpointRow, ObservationRow, ResolutionRow, RunRow, ScreenBaselineRow, StepRow, VerdictRow
from .resume_models import StepActRow

__all__ = [
    "RUNS", "STEPS", "OBSERVATIONS", "RESOLUTIONS", "VERDICTS", "CHECKPOINTS", "BASELINES", "EVIDENCE", "NODES",
    "EDGES", "ACTS", "TOUCH_RUN", "INSERT_OBSERVATION", "INSERT_RESOLUTION", "INSERT_VERDICT", "INSERT_ACT",
    "upsert",
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

#: ``(dialect, table, key columns, columns set, column incremented)`` -> the prebuilt upsert (None: none on
#: that database).
_UPSERTS: dict[tuple[str, str, tuple[str, ...], tuple[str, ...], str], Any] = {}


def _native_upsert(dialect: str, table: Table, keys: tuple[str, ...], columns: tuple[str, ...],
                   extra: Mapping[str, Any]) -> Any:
    """``INSERT ... ON CONFLICT (keys) DO UPDATE SET`` each of ``columns`` to the value offered (``excluded``),
    and each of ``extra`` to its SQL expression; None on a database without one."""
    module = {"sqlite": _sqlite, "postgresql": _pg}.get(dialect)
    if module is None:
        return None
    ins = module.insert(table)
    set_: dict[str, Any] = {c: ins.excluded[c] for c in columns}
    set_.update(extra)
    return ins.on_conflict_do_update(index_elements=[table.c[k] for k in keys], set_=set_)


def upsert(conn: Connection, table: Table, keys: Sequence[str], values: Mapping[str, Any], *,
           insert_only: Mapping[str, Any] | None = None, increment: str | None = None) -> None:
    """Insert the row of ``values`` or, when a row with the same ``keys`` exists, update it in place.

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
        Columns written only when the row is new (e.g. ``created_at``, a counter's 0).
    increment : str | None
        An integer column incremented by 1 when the row exists (left as ``insert_only`` says when new).
    """
    keys = tuple(keys)
    columns = tuple(c for c in values if c not in keys)
    extra = {increment: table.c[increment] + 1} if increment else {}
    dialect = conn.dialect.name
    cache_key = (dialect, table.name, keys, columns, increment or "")
    try:
        stmt = _UPSERTS[cache_key]
    except KeyError:
        stmt = _UPSERTS[cache_key] = _native_upsert(dialect, table, keys, columns, extra)
    row = dict(values)
    if insert_only:
        row.update(insert_only)
    if stmt is not None:
        conn.execute(stmt, row)
        return
    # another database: look the row up, then update or insert it (in the caller's transaction)
    where = [table.c[k] == values[k] for k in keys]
    found = conn.execute(select(table.c.id).where(*where)).first()
    if found is None:
        conn.execute(insert(table), row)
        return
    changes: dict[str, Any] = {c: values[c] for c in columns}
    changes.update(extra)
    conn.execute(update(table).where(table.c.id == found[0]).values(changes))
