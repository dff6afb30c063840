"""Schema versioning and forward migrations of the store, by Alembic.

The revisions live in :mod:`core.store.schema` (``versions/NNNN_*.py``); a
revision's id is the schema version written with four digits, and
:data:`core.store.models.SCHEMA_VERSION` is the head's number.  Two tables
record where a database stands: Alembic's ``alembic_version`` (the revision)
and ``schema_meta`` (one row per schema version applied, with its
description: the store's own log, kept for read-only checks and for stores
written before Alembic kept them).

Opening a store for writing calls :func:`migrate` in one transaction:

* a database without ``schema_meta`` is new: all tables are created from the
  models and stamped with the head (both tables);
* an older database is upgraded by Alembic, revision after revision, each
  logged in ``schema_meta``; a store of schema version 1 written before
  Alembic (no ``alembic_version``) is first stamped with revision ``0001``;
* a newer database (written by a newer Steadyhand) is refused.

DDL is transactional on SQLite (with the BEGIN recipe of
:mod:`core.store.database`) and PostgreSQL, and Alembic runs inside the
caller's transaction, so a failed migration leaves the database at its old
version.
"""
from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection, func, inspect, insert, select

from .models import SCHEMA_VERSION, Base, SchemaMeta, utcnow

__all__ = ["SCHEMA_DIR", "SchemaVersionError", "current_version", "migrate", "check_version", "revision_id"]

#: The Alembic script directory (env.py, versions/).
SCHEMA_DIR = Path(__file__).with_name("schema")


class SchemaVersionError(RuntimeError):
    """The database's schema version cannot be used by this code."""


def revision_id(version: int) -> str:
    """The Alembic revision id of schema ``version``: ``1`` -> ``"0001"``."""
    return f"{version:04d}"


def current_version(conn: Connection) -> int | None:
    """Highest applied schema version, or None when the database is not yet a store."""
    if not inspect(conn).has_table(SchemaMeta.__tablename__):
        return None
    return conn.execute(select(func.max(SchemaMeta.version))).scalar_one_or_none()


def _stamp(conn: Connection, version: int, description: str) -> None:
    conn.execute(insert(SchemaMeta).values(version=version, applied_at=utcnow(),
                                           description=description[:200]))


def _config(conn: Connection, script_location: Path):  # -> alembic.config.Config
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(script_location))
    cfg.attributes["connection"] = conn
    return cfg


def _alembic_revision(conn: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


#: Tables that joined schema version 1 after its first stores were written (no version bump then):
#: a store of version 1 written before Alembic may lack them.
SCHEMA_1_LATE_TABLES = ("screen_baselines", "screen_changes", "checkpoints", "heal_proposals")


def _fill_schema_1(conn: Connection) -> None:
    """Give a pre-Alembic store of schema version 1 the tables version 1 gained later (checkfirst).

    They are created from today's models, which is right while no revision
    after 0001 alters them; a revision that does must replace this by a
    frozen copy of their version-1 definition
    (``tests/core/store/test_store_migrations.py`` checks an old store
    without them).
    """
    tables = [Base.metadata.tables[name] for name in SCHEMA_1_LATE_TABLES]
    Base.metadata.create_all(conn, tables=tables, checkfirst=True)


def migrate(conn: Connection, *, script_location: Path = SCHEMA_DIR) -> int | None:
    """Create or upgrade the schema to the head revision on ``conn`` (inside its transaction).

    Parameters
    ----------
    conn : Connection
        Connection with an open (write) transaction.
    script_location : Path
        The Alembic script directory (tests pass their own).

    Returns
    -------
    int | None
        The schema version found before (None for a new database).

    Raises
    ------
    SchemaVersionError
        When the database is newer than the head, or its revision is unknown.
    Exception
        Whatever a failing revision raises; the caller's transaction then
        rolls back and the database keeps its old version.
    """
    from alembic import command
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    cfg = _config(conn, script_location)
    script = ScriptDirectory.from_config(cfg)
    head = script.get_current_head()
    if head is None or not head.isdigit():
        raise SchemaVersionError(f"{script_location}: expected one head revision named by a number, got {head!r}")
    target = int(head)
    found = current_version(conn)
    if found is None:
        Base.metadata.create_all(conn)
        _stamp(conn, target, "created")
        command.stamp(cfg, head)
        return None
    if found > target:
        raise SchemaVersionError(
            f"store schema version {found} is newer than this Steadyhand supports ({target}); "
            "upgrade Steadyhand to open it")
    current = _alembic_revision(conn)
    if current is None:  # written before Alembic kept the revision: its schema_meta says where it stands
        if found == 1:
            _fill_schema_1(conn)
        command.stamp(cfg, revision_id(found))
    elif current == head:
        return found
    try:
        command.upgrade(cfg, head)
    except CommandError as exc:
        raise SchemaVersionError(f"cannot migrate the store: {exc}") from None
    for rev in reversed(list(script.iterate_revisions(head, revision_id(found)))):
        if rev.revision != revision_id(found):
            _stamp(conn, int(rev.revision), (rev.doc or "").strip().splitlines()[0] if rev.doc else rev.revision)
    return found


def check_version(conn: Connection, target: int = SCHEMA_VERSION) -> int:
    """Version check for a read-only open: the database must be a store at ``target``.

    Raises
    ------
    SchemaVersionError
        When the file is not a store, or is older (it must be opened for
        writing once to migrate) or newer than ``target``.
    """
    found = current_version(conn)
    if found is None:
        raise SchemaVersionError("not a Steadyhand store (no schema_meta table)")
    if found != target:
        hint = "open it for writing once to migrate it" if found < target else "upgrade Steadyhand"
        raise SchemaVersionError(f"store schema version {found}, expected {target}: {hint}")
    return found
