"""Schema versions and forward migrations, by Alembic: a store written by the schema before Alembic (a real
demo run's store, in tests/fixtures/store) is upgraded and keeps its data; the models and the revisions agree;
a failed revision leaves the old version; a newer store is refused."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from core.store import SCHEMA_VERSION, SchemaVersionError, Store, current_version, migrate, store_path
from core.store import database
from core.store.migrations import SCHEMA_DIR, revision_id

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "store" / "schema1_demo.sqlite"


def _raw(db: Path, sql: str) -> list[tuple]:
    raw = sqlite3.connect(db)
    try:
        return raw.execute(sql).fetchall()
    finally:
        raw.close()


def _old_store(tmp_path: Path) -> Path:
    db = store_path(tmp_path)
    db.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE, db)
    return db


def test_a_new_store_is_created_at_the_head_and_stamped_once(tmp_path):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "f")
        assert store.get_run(run_id).schema_version == SCHEMA_VERSION
    db = store_path(tmp_path)
    assert _raw(db, "SELECT version, description FROM schema_meta") == [(SCHEMA_VERSION, "created")]
    assert _raw(db, "SELECT version_num FROM alembic_version") == [(revision_id(SCHEMA_VERSION),)]
    Store.open(tmp_path).close()  # reopening does not stamp again
    assert _raw(db, "SELECT version, description FROM schema_meta") == [(SCHEMA_VERSION, "created")]


def test_the_head_revision_is_the_schema_version():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(SCHEMA_DIR))
    assert ScriptDirectory.from_config(cfg).get_current_head() == revision_id(SCHEMA_VERSION)


def test_a_store_written_before_alembic_is_upgraded_and_keeps_its_data(tmp_path):
    db = _old_store(tmp_path)
    runs_before = _raw(db, "SELECT id, flow, status FROM runs ORDER BY id")
    steps_before = _raw(db, "SELECT run_id, step_index, status FROM steps ORDER BY run_id, step_index")
    assert runs_before and _raw(db, "SELECT name FROM sqlite_master WHERE name = 'alembic_version'") == []
    with Store.open(tmp_path) as store:
        assert [r.flow for r in store.list_runs()]  # readable through the repository
        assert sorted((r.id, r.flow, r.status) for r in store.list_runs()) == sorted(runs_before)
    assert _raw(db, "SELECT run_id, step_index, status FROM steps ORDER BY run_id, step_index") == steps_before
    assert _raw(db, "SELECT version_num FROM alembic_version") == [(revision_id(SCHEMA_VERSION),)]
    assert [v for (v,) in _raw(db, "SELECT version FROM schema_meta ORDER BY version")] == list(
        range(1, SCHEMA_VERSION + 1))
    assert _raw(db, "PRAGMA integrity_check") == [("ok",)]


def test_the_models_and_the_revisions_agree(tmp_path):
    """An upgraded old store has exactly the tables and columns a new store has (a missing revision fails)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from core.store.models import Base

    _old_store(tmp_path)
    Store.open(tmp_path).close()
    engine = database.sqlite_engine(store_path(tmp_path))
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()
    tables = [d for d in diff if d[0] in ("add_table", "remove_table", "add_column", "remove_column")]
    assert tables == []


def _scripts_with(tmp_path: Path, body: str) -> Path:
    scripts = tmp_path / "schema"
    shutil.copytree(SCHEMA_DIR, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    head = revision_id(SCHEMA_VERSION)
    nxt = revision_id(SCHEMA_VERSION + 1)
    (scripts / "versions" / f"{nxt}_note.py").write_text(
        f'"""Add runs.note."""\nfrom alembic import op\nimport sqlalchemy as sa\n'
        f'revision = "{nxt}"\ndown_revision = "{head}"\nbranch_labels = None\ndepends_on = None\n\n'
        f"def upgrade():\n{body}\n\ndef downgrade():\n    pass\n")
    return scripts


def test_a_new_revision_runs_once_and_a_newer_store_is_refused(tmp_path):
    Store.open(tmp_path).close()
    scripts = _scripts_with(tmp_path, "    with op.batch_alter_table('runs') as b:\n"
                                      "        b.add_column(sa.Column('note', sa.String(200), nullable=False,"
                                      " server_default=''))\n")
    engine = database.sqlite_engine(store_path(tmp_path))
    try:
        with database.writer(engine).begin() as conn:
            assert migrate(conn, script_location=scripts) == SCHEMA_VERSION
        with engine.connect() as conn:
            assert current_version(conn) == SCHEMA_VERSION + 1
            assert conn.execute(text("SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'note'")
                                ).scalar_one() == 1
    finally:
        engine.dispose()
    assert _raw(store_path(tmp_path), "SELECT version, description FROM schema_meta ORDER BY version") == [
        (SCHEMA_VERSION, "created"), (SCHEMA_VERSION + 1, "Add runs.note.")]
    with pytest.raises(SchemaVersionError, match="newer"):  # this code's head is SCHEMA_VERSION
        Store.open(tmp_path)
    with pytest.raises(SchemaVersionError):
        Store.open(tmp_path, read_only=True)


def test_a_failed_revision_leaves_the_old_version(tmp_path):
    Store.open(tmp_path).close()
    scripts = _scripts_with(tmp_path, "    op.execute('CREATE TABLE half_done (x INTEGER)')\n"
                                      "    raise RuntimeError('boom')\n")
    engine = database.sqlite_engine(store_path(tmp_path))
    try:
        with pytest.raises(RuntimeError, match="boom"):
            with database.writer(engine).begin() as conn:
                migrate(conn, script_location=scripts)
        with engine.connect() as conn:
            assert current_version(conn) == SCHEMA_VERSION
    finally:
        engine.dispose()
    db = store_path(tmp_path)
    assert _raw(db, "SELECT name FROM sqlite_master WHERE name = 'half_done'") == []
    assert _raw(db, "SELECT version_num FROM alembic_version") == [(revision_id(SCHEMA_VERSION),)]
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


def test_an_old_store_without_the_tables_schema_1_gained_later_gets_them(tmp_path):
    from core.store.migrations import SCHEMA_1_LATE_TABLES

    db = _old_store(tmp_path)
    raw = sqlite3.connect(db)
    for name in SCHEMA_1_LATE_TABLES:
        raw.execute(f"DROP TABLE {name}")
    raw.commit()
    raw.close()
    Store.open(tmp_path).close()
    names = {n for (n,) in _raw(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert set(SCHEMA_1_LATE_TABLES) <= names
