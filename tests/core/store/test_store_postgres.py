"""The store on PostgreSQL (issue 24 item 2), on a real server this test starts (Debian's binaries, 127.0.0.1,
a free port, a password): created at the head and stamped once, a schema-1 store upgraded by the Alembic
revisions that exist with its rows kept, several writer processes at once (the first of them migrating a new
database) losing no row and doubling none, ``STEADYHAND_STORE_URL`` taking over ``Store.open``, and errors as
one line with the password hidden.  A machine without the server fails here (tests/pgcluster.py)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import MetaData, Table, create_engine, insert, text

from core.domain import RunResult
from core.store import SCHEMA_VERSION, STORE_URL_ENV, Store, StoreError, store_path
from core.store.migrations import revision_id
from core.store.models import Base, utcnow

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))
from pgcluster import PASSWORD, PgCluster  # noqa: E402


@pytest.fixture(scope="module")
def pg():
    with PgCluster() as cluster:
        yield cluster


_N = [0]


@pytest.fixture
def db_url(pg: PgCluster) -> str:
    _N[0] += 1
    return pg.create_db(f"store{_N[0]}")


def _sa(url: str):
    return create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


def _rows(url: str, sql: str) -> list[tuple]:
    engine = _sa(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql))]
    finally:
        engine.dispose()


def test_a_new_store_on_postgres_is_created_at_the_head_and_stamped_once(db_url: str, tmp_path: Path,
                                                                         make_outcome) -> None:
    with Store.from_url(db_url, media_root=tmp_path) as store:
        run_id = store.begin_run("demo", "f")
        store.record_step(run_id, make_outcome(0))
        store.finish_run(run_id, RunResult(run_id=run_id, flow="f", status="passed", steps=(make_outcome(0),),
                                           heals=0, invalid_actions=0, seconds=0.5))
    assert _rows(db_url, "SELECT version, description FROM schema_meta") == [(SCHEMA_VERSION, "created")]
    assert _rows(db_url, "SELECT version_num FROM alembic_version") == [(revision_id(SCHEMA_VERSION),)]
    with Store.from_url(db_url, media_root=tmp_path, read_only=True) as store:
        assert [(r.flow, r.status) for r in store.list_runs()] == [("f", "passed")]
    assert _rows(db_url, "SELECT count(*) FROM schema_meta") == [(1,)]


#: Columns revision 0003 added to a table that schema 1 had.
_ADDED_LATER = {"escalations": {"kind", "plain"}, "runs": {"steps_total"}}
_SCHEMA_1 = ("runs", "steps", "observations", "resolutions", "verdicts", "escalations", "screen_baselines",
             "screen_changes", "checkpoints", "heal_proposals", "schema_meta")


def test_a_schema_1_store_is_upgraded_by_the_revisions_on_postgres(db_url: str, tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    v1 = MetaData()
    for name in _SCHEMA_1:
        src = Base.metadata.tables[name]
        Table(name, v1, *[c._copy() for c in src.columns if c.name not in _ADDED_LATER.get(name, ())])
    engine = _sa(db_url)
    try:
        with engine.begin() as conn:
            v1.create_all(conn)
            conn.execute(insert(v1.tables["schema_meta"]).values(version=1, applied_at=utcnow(), description="v1"))
            conn.execute(insert(v1.tables["runs"]).values(id="r1", project="Demo", flow="f", status="passed",
                                                          started_at=utcnow(), schema_version=1))
            conn.execute(insert(v1.tables["escalations"]).values(run_id="r1", flow="f", step_index=0,
                                                                 step_title="t", reason="why", created_at=utcnow()))
    finally:
        engine.dispose()
    with Store.from_url(db_url, media_root=tmp_path) as store:
        assert [r.id for r in store.list_runs()] == ["r1"]
    assert [v for (v,) in _rows(db_url, "SELECT version FROM schema_meta ORDER BY version")] == list(
        range(1, SCHEMA_VERSION + 1))
    assert _rows(db_url, "SELECT version_num FROM alembic_version") == [(revision_id(SCHEMA_VERSION),)]
    assert _rows(db_url, "SELECT reason, kind, plain FROM escalations") == [("why", "", "")]
    engine = _sa(db_url)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()
    assert [d for d in diff if d[0] in ("add_table", "remove_table", "add_column", "remove_column")] == []


_WRITER = r"""
import sys
from pathlib import Path
from core.domain import RunResult, StepOutcome
from core.store import Store
url, media, worker, runs, steps = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
with Store.from_url(url, media_root=media) as store:
    for r in range(runs):
        rid = store.begin_run("Demo", f"flow_{worker}")
        outs = []
        for i in range(steps):
            o = StepOutcome(index=i, step_id=f"s{i + 1}", title=f"Step {i + 1}", status="passed", resolution=None,
                            verdict=None, attempts=1, ms=10.0, error="")
            store.record_step(rid, o)
            outs.append(o)
        store.finish_run(rid, RunResult(run_id=rid, flow=f"flow_{worker}", status="passed", steps=tuple(outs),
                                        heals=0, invalid_actions=0, seconds=0.1))
print("done", worker)
"""


def test_several_writers_at_once_on_a_new_database_lose_no_row(db_url: str, tmp_path: Path) -> None:
    workers, runs, steps = 4, 15, 6
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, db_url, str(tmp_path), str(w), str(runs), str(steps)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(workers)]  # all four open (and so migrate) the new database at the same time
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    assert _rows(db_url, "SELECT count(*) FROM runs WHERE status = 'passed'") == [(workers * runs,)]
    assert _rows(db_url, "SELECT count(*) FROM steps") == [(workers * runs * steps,)]
    assert _rows(db_url, "SELECT count(*) FROM (SELECT run_id, step_index FROM steps GROUP BY run_id, step_index "
                         "HAVING count(*) > 1) d") == [(0,)]
    assert _rows(db_url, "SELECT flow, count(*) FROM runs GROUP BY flow ORDER BY flow") == [
        (f"flow_{w}", runs) for w in range(workers)]
    assert _rows(db_url, "SELECT count(*) FROM schema_meta") == [(1,)]


def test_the_url_in_the_environment_takes_over_store_open(db_url: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(STORE_URL_ENV, db_url)
    with Store.open(tmp_path) as store:
        assert store.path is None and store.media_root == store_path(tmp_path).parent
        store.begin_run("Demo", "via_env")
    assert not store_path(tmp_path).exists()  # no SQLite file beside the project
    assert _rows(db_url, "SELECT flow FROM runs") == [("via_env",)]


def test_errors_are_one_line_and_never_show_the_password(pg: PgCluster, tmp_path: Path, monkeypatch) -> None:
    wrong = pg.url("postgres", password="not-the-pass-9Z")
    with pytest.raises(StoreError) as exc:
        Store.from_url(wrong, media_root=tmp_path)
    assert "not-the-pass-9Z" not in str(exc.value) and "***" in str(exc.value) and "\n" not in str(exc.value)

    down = pg.url("postgres").replace(f":{pg.port}/", ":1/")  # nothing listens on port 1
    started = time.monotonic()
    with pytest.raises(StoreError) as exc:
        Store.from_url(down, media_root=tmp_path)
    assert time.monotonic() - started < 30 and PASSWORD not in str(exc.value)

    monkeypatch.setenv(STORE_URL_ENV, "mysql://u:pw-sekrit@127.0.0.1/db")
    with pytest.raises(StoreError) as exc:
        Store.open(tmp_path)
    assert "PostgreSQL" in str(exc.value) and "pw-sekrit" not in str(exc.value)


def test_a_run_whose_shared_store_server_is_down_is_a_broken_environment(pg: PgCluster, tmp_path: Path) -> None:
    """``steadyhand run`` with ``STEADYHAND_STORE_URL`` naming a server that is down: one line, exit code 4 (the
    environment, as for a missing Chromium; not 2, which tells a CI user to fix the input), no password."""
    from core.exitcodes import EXIT_ENVIRONMENT

    project = tmp_path / "p"
    (project / "flows").mkdir(parents=True)
    (project / "steadyhand.yaml").write_text("name: P\nbase_url: http://127.0.0.1:9/\n", encoding="utf-8")
    (project / "flows" / "f.yaml").write_text(
        "name: f\nstart_url: /\nsteps:\n  - id: s1\n    action: click\n    target: {role: button, name: Go}\n",
        encoding="utf-8")
    down = pg.url("postgres").replace(f":{pg.port}/", ":1/")  # nothing listens on port 1
    env = {**os.environ, "PYTHONPATH": str(ROOT), STORE_URL_ENV: down}
    p = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--headless"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == EXIT_ENVIRONMENT, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and PASSWORD not in p.stdout + p.stderr
    assert "the shared store" in p.stderr and "cannot be used" in p.stderr
