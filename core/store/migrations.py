"""Schema versioning and forward migrations of the store.

The table ``schema_meta`` logs every schema version applied to a database
(one row per version); the current version is the highest.  Opening a store
for writing calls :func:`migrate` in one transaction:

* a database without ``schema_meta`` is new: all tables are created from the
  models and stamped with the target version;
* an older database runs the migration functions of every version above its
  own, in order, each stamped when done; then ``create_all`` adds tables that
  are new in the models (a brand-new table needs no migration function);
* a newer database (written by a newer Steadyhand) is refused.

To change the schema: bump :data:`core.store.models.SCHEMA_VERSION` to N,
change the models, and add ``MIGRATIONS[N] = ("what changed", fn)`` where
``fn(connection)`` alters existing tables with portable DDL (``ALTER TABLE
... ADD COLUMN``; SQLAlchemy ``Table.create(conn, checkfirst=True)`` for a
table it needs to fill).  DDL is transactional on SQLite (with the BEGIN
recipe of :mod:`core.store.database`) and PostgreSQL, so a failed migration
leaves the database at its old version.
"""
from __future__ import annotations

from typing import Callable, Mapping

from sqlalchemy import Connection, func, inspect, insert, select

from .models import SCHEMA_VERSION, Base, SchemaMeta, utcnow

__all__ = [
    "Migration", "MIGRATIONS", "SchemaVersionError", "current_version", "migrate",
    "check_version",
]

#: A migration step: alters the schema from version N-1 to N on a connection
#: inside an open transaction.
Migration = Callable[[Connection], None]

#: Target version -> (description, migration from the version below).
#: Version 1 is the initial schema and has no migration.
MIGRATIONS: dict[int, tuple[str, Migration]] = {}


class SchemaVersionError(RuntimeError):
    """The database's schema version cannot be used by this code."""


def current_version(conn: Connection) -> int | None:
    """Highest applied schema version, or None when the database is not yet a store."""
    if not inspect(conn).has_table(SchemaMeta.__tablename__):
        return None
    return conn.execute(select(func.max(SchemaMeta.version))).scalar_one_or_none()


def _stamp(conn: Connection, version: int, description: str) -> None:
    conn.execute(insert(SchemaMeta).values(version=version, applied_at=utcnow(),
                                           description=description[:200]))


def migrate(
    conn: Connection,
    *,
    target: int = SCHEMA_VERSION,
    migrations: Mapping[int, tuple[str, Migration]] = MIGRATIONS,
) -> int | None:
    """Create or upgrade the schema to ``target`` on ``conn`` (inside its transaction).

    Parameters
    ----------
    conn : Connection
        Connection with an open (write) transaction.
    target : int
        Schema version to reach.
    migrations : Mapping[int, tuple[str, Migration]]
        Migration functions by the version they produce.

    Returns
    -------
    int | None
        The version found before (None for a new database).

    Raises
    ------
    SchemaVersionError
        When the database is newer than ``target`` or a migration is missing.
    """
    found = current_version(conn)
    if found is None:
        Base.metadata.create_all(conn)
        _stamp(conn, target, "created")
        return None
    if found > target:
        raise SchemaVersionError(
            f"store schema version {found} is newer than this Steadyhand supports ({target}); "
            "upgrade Steadyhand to open it")
    for version in range(found + 1, target + 1):
        if version not in migrations:
            raise SchemaVersionError(f"no migration to store schema version {version}")
        description, fn = migrations[version]
        fn(conn)
        _stamp(conn, version, description)
    Base.metadata.create_all(conn)  # tables new in the models; existing ones untouched
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
