"""Schema version table and forward migrations."""
from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import inspect, text

from core.store import (
    SCHEMA_VERSION, SchemaVersionError, Store, current_version, migrate, store_path,
)
from core.store import database


def _versions(db) -> list[tuple[int, str]]:
    raw = sqlite3.connect(db)
    try:
        return raw.execute("SELECT version, description FROM schema_meta ORDER BY version").fetchall()
    finally:
        raw.close()


def _add_note(conn) -> None:
    conn.execute(text("ALTER TABLE runs ADD COLUMN note VARCHAR(200) NOT NULL DEFAULT ''"))
    conn.execute(text("UPDATE runs SET note = 'migrated'"))


def test_new_store_is_stamped_with_the_current_version(tmp_path):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "f")
        assert store.get_run(run_id).schema_version == SCHEMA_VERSION
    assert _versions(store_path(tmp_path)) == [(SCHEMA_VERSION, "created")]
    Store.open(tmp_path).close()  # reopening does not stamp again
    assert _versions(store_path(tmp_path)) == [(SCHEMA_VERSION, "created")]


def test_old_store_is_migrated_forward_and_keeps_its_data(tmp_path):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "f")
    db = store_path(tmp_path)
    engine = database.sqlite_engine(db)
    try:
        with database.writer(engine).begin() as conn:
            found = migrate(conn, target=SCHEMA_VERSION + 1,
                            migrations={SCHEMA_VERSION + 1: ("add runs.note", _add_note)})
        assert found == SCHEMA_VERSION
        with engine.connect() as conn:
            assert current_version(conn) == SCHEMA_VERSION + 1
            assert "note" in {c["name"] for c in inspect(conn).get_columns("runs")}
            assert conn.execute(text("SELECT note FROM runs WHERE id = :i"), {"i": run_id}
                                ).scalar_one() == "migrated"
    finally:
        engine.dispose()
    assert _versions(db) == [(SCHEMA_VERSION, "created"), (SCHEMA_VERSION + 1, "add runs.note")]

    # This code only knows SCHEMA_VERSION: a newer store is refused, read-only too.
    with pytest.raises(SchemaVersionError, match="newer"):
        Store.open(tmp_path)
    with pytest.raises(SchemaVersionError):
        Store.open(tmp_path, read_only=True)


def test_failed_migration_leaves_the_old_version(tmp_path):
    Store.open(tmp_path).close()

    def broken(conn) -> None:
        _add_note(conn)
        raise RuntimeError("boom")

    engine = database.sqlite_engine(store_path(tmp_path))
    try:
        with pytest.raises(RuntimeError, match="boom"):
            with database.writer(engine).begin() as conn:
                migrate(conn, target=SCHEMA_VERSION + 1,
                        migrations={SCHEMA_VERSION + 1: ("broken", broken)})
        with engine.connect() as conn:
            assert current_version(conn) == SCHEMA_VERSION
            assert "note" not in {c["name"] for c in inspect(conn).get_columns("runs")}
        with pytest.raises(SchemaVersionError, match="no migration"):
            with database.writer(engine).begin() as conn:
                migrate(conn, target=SCHEMA_VERSION + 1, migrations={})
    finally:
        engine.dispose()
    with Store.open(tmp_path) as store:  # still a usable store
        assert store.list_runs() == []


def test_read_only_open_of_a_non_store_file_is_refused(tmp_path):
    db = tmp_path / "other.sqlite"
    raw = sqlite3.connect(db)
    raw.execute("CREATE TABLE t (x INTEGER)")
    raw.commit()
    raw.close()
    with pytest.raises(SchemaVersionError, match="not a Steadyhand store"):
        Store.open(db, read_only=True)
