"""A killed writer leaves an intact store; its running run is marked interrupted."""
from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

from PIL import Image

from core.store import INTERRUPTED, Store, recover_interrupted, store_path

ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent("""
    import io, sys
    sys.path.insert(0, sys.argv[2])
    from PIL import Image
    from core.domain import StateSignature, Observation, StepOutcome
    from core.store import Store

    buf = io.BytesIO()
    Image.new("RGB", (32, 24), (10, 200, 30)).save(buf, format="PNG")
    sig = StateSignature("u", "t", 0, 0, "", "", "", False, 0, "", "digest")
    obs = Observation("http://127.0.0.1/x", "X", (800, 600), 1.0, (0.0, 0.0), (), "", sig,
                      screenshot_png=buf.getvalue())
    store = Store.open(sys.argv[1])
    run_id = store.begin_run("demo", "endless")
    print(run_id, flush=True)
    i = 0
    while True:  # write until killed
        store.record_observation(run_id, i, "before", obs)
        store.record_step(run_id, StepOutcome(i, f"s{i}", f"step {i}", "passed", None, None, 1, 1.0))
        i += 1
""")


def _set_owner(db: Path, run_id: str, owner: str, updated_at: str | None = None) -> None:
    raw = sqlite3.connect(db)
    try:
        raw.execute("UPDATE runs SET owner = ? WHERE id = ?", (owner, run_id))
        if updated_at:
            raw.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (updated_at, run_id))
        raw.commit()
    finally:
        raw.close()


def test_killed_writer_leaves_whole_records_and_run_becomes_interrupted(tmp_path):
    Store.open(tmp_path).close()  # create the schema first, so the reader can open
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), str(ROOT)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        run_id = proc.stdout.readline().strip()
        assert run_id, proc.stderr.read()
        with Store.open(tmp_path, read_only=True) as reader:
            deadline = time.monotonic() + 120
            while len(reader.run_detail(run_id).steps) < 25:
                assert proc.poll() is None, proc.stderr.read()
                assert time.monotonic() < deadline, "writer made no progress"
                time.sleep(0.01)
            proc.kill()  # SIGKILL: no cleanup, mid-write
            proc.wait()
            assert reader.get_run(run_id).status == "running"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()

    db = store_path(tmp_path)
    raw = sqlite3.connect(db)
    try:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        raw.close()

    with Store.open(tmp_path) as store:  # a writable open recovers
        detail = store.run_detail(run_id)
        run = detail.run
        assert run.status == INTERRUPTED
        assert f"process {proc.pid}" in run.error and "interrupted" in run.error
        assert run.finished_at is not None and run.seconds is not None and run.seconds >= 0
        # Every committed record is whole: steps 0..n-1, each with its screenshot row + file.
        n = len(detail.steps)
        assert n >= 25
        assert [s.index for s in detail.steps] == list(range(n))
        assert all(s.title == f"step {s.index}" and s.status == "passed" for s in detail.steps)
        shots = [o for o in detail.observations if o.screenshot]
        assert {o.index for o in shots} >= set(range(n))
        for o in shots:
            with Image.open(store.media_path(o.screenshot)) as img:
                assert img.size == (32, 24)
        # Recovering again finds nothing more.
        assert store.recover_interrupted() == []


def test_runs_of_live_processes_are_left_running(tmp_path):
    with Store.open(tmp_path) as engine_store:
        run_id = engine_store.begin_run("demo", "f")
        with Store.open(tmp_path) as other:  # e.g. a second writer opening the same file
            assert other.get_run(run_id).status == "running"
            assert other.recover_interrupted() == []
            assert recover_interrupted(other, older_than=timedelta(0)) == []  # alive: never
        assert engine_store.get_run(run_id).status == "running"


def test_run_of_a_dead_pid_is_marked_by_the_module_function(tmp_path):
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("demo", "f")
        done = store.begin_run("demo", "g")
        store.finish_run(done, _result(done))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    # The start token "1" cannot match even if the pid were reused meanwhile.
    _set_owner(store_path(tmp_path), run_id, f"{socket.gethostname()}|{dead_pid}|1")

    assert recover_interrupted(store_path(tmp_path)) == [run_id]
    with Store.open(tmp_path, read_only=True) as ro:
        assert ro.get_run(run_id).status == INTERRUPTED
        assert ro.get_run(done).status == "passed"  # finished runs are untouched


def test_runs_of_other_hosts_need_older_than(tmp_path):
    with Store.open(tmp_path) as store:
        recent = store.begin_run("demo", "recent")
        idle = store.begin_run("demo", "idle")
    db = store_path(tmp_path)
    _set_owner(db, recent, "some-other-host|1234|")
    _set_owner(db, idle, "some-other-host|1235|", updated_at="2000-01-01 00:00:00.000000")

    with Store.open(tmp_path) as store:  # recover on open: unknown owners are kept
        assert store.get_run(recent).status == "running"
        assert store.get_run(idle).status == "running"
        assert store.recover_interrupted(older_than=timedelta(hours=1)) == [idle]
        assert store.get_run(recent).status == "running"
        run = store.get_run(idle)
        assert run.status == INTERRUPTED and run.finished_at.year == 2000


def _result(run_id: str):
    from core.domain import RunResult

    return RunResult(run_id=run_id, flow="g", status="passed", steps=(), heals=0,
                     invalid_actions=0, seconds=0.1)
