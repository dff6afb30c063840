"""Write-behind (core.store.writer, Store.defer): deferred writes are committed in order, before any later
synchronous read or write, their errors reported, the queue bounded, and a kill never corrupts the store."""
from __future__ import annotations

import queue
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from core.domain import StepOutcome, Verdict
from core.store import Store, store_path
from core.store import writer as writer_mod
from core.store.resumes import ResumeTable
from core.store.writer import BackgroundWriter

ROOT = Path(__file__).resolve().parents[3]


def _outcome(i: int, status: str = "passed") -> StepOutcome:
    return StepOutcome(i, f"s{i}", f"step {i}", status, None, None, 1, 1.0)


def test_deferred_writes_are_committed_in_order_off_the_calling_thread(tmp_path) -> None:
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("p", "f")
        threads: list[str] = []
        store.defer(lambda: threads.append(threading.current_thread().name))
        for i in range(20):
            store.defer("record_verdict", run_id, i, Verdict("as_expected", "any", (), f"verdict {i}"))
        store.flush()
        assert store.deferred == 0
        assert threads == ["steadyhand-store-writer"]
        raw = sqlite3.connect(store_path(tmp_path))
        try:
            rows = raw.execute("SELECT step_index, reason FROM verdicts WHERE run_id = ? ORDER BY id",
                               (run_id,)).fetchall()
        finally:
            raw.close()
        assert rows == [(i, f"verdict {i}") for i in range(20)]


def test_a_synchronous_read_or_write_waits_for_the_writes_deferred_before_it(tmp_path) -> None:
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("p", "f")
        gate = threading.Event()
        store.defer(gate.wait, 5.0)  # the writer is busy: what follows stays queued
        store.defer("record_step", run_id, _outcome(0))
        store.defer("record_step", run_id, _outcome(1))
        assert store.deferred == 3
        threading.Timer(0.2, gate.set).start()
        # the "step under way" row (a synchronous write) comes after the steps deferred before it
        ResumeTable(store).acting(run_id, 2, 1)
        assert store.deferred == 0
        state = ResumeTable(store).state(run_id)  # a synchronous read sees them all
        assert state is not None and state.steps == {0: "passed", 1: "passed"} and state.acts == {2: 1}


def test_a_failed_deferred_write_is_reported_and_the_writer_goes_on(tmp_path) -> None:
    errors: list[str] = []
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("p", "f")
        store.defer("record_step", "no-such-run", _outcome(0), on_error=lambda exc: errors.append(str(exc)))
        store.defer("record_step", run_id, _outcome(1), on_error=lambda exc: errors.append(str(exc)))
        store.flush()
        assert len(errors) == 1 and "no-such-run" in errors[0]
        assert [s.index for s in store.run_detail(run_id).steps] == [1]


def _busy(store: Store) -> threading.Event:
    """Keep the store's writer busy (until the returned event is set) with nothing else queued yet."""
    busy, gate = threading.Event(), threading.Event()
    store.defer(lambda: (busy.set(), gate.wait(5.0)))
    assert busy.wait(5.0)
    return gate


def _updated_at(folder: Path, run_id: str) -> str:
    return _raw(folder, "SELECT updated_at FROM runs WHERE id = ?", run_id)[0][0]


def _raw(folder: Path, sql: str, *args: object) -> list[tuple]:
    raw = sqlite3.connect(store_path(folder))
    try:
        return raw.execute(sql, args).fetchall()
    finally:
        raw.close()


def test_writes_queued_while_the_writer_is_busy_commit_in_one_transaction_each_undone_alone(tmp_path) -> None:
    errors: list[str] = []
    with Store.open(tmp_path) as store:
        run_id = store.begin_run("p", "f")
        gate = _busy(store)  # the writer is busy: the step's records queue behind it
        store.defer("record_step", run_id, _outcome(0))
        store.defer("record_verdict", run_id, 0, Verdict("as_expected", "any", (), "verdict 0"))
        store.defer("record_step", "no-such-run", _outcome(7), on_error=lambda exc: errors.append(str(exc)))
        store.defer("record_step", run_id, _outcome(0, "failed"))  # replaces its step: reads the batch's row
        store.defer("record_step", run_id, _outcome(1))
        before = store._writer.batches
        gate.set()
        store.flush()
        assert store._writer.batches == before + 1  # the five queued writes: one commit
        assert len(errors) == 1 and "no-such-run" in errors[0]  # the failed one alone was undone
        detail = store.run_detail(run_id)
        assert [(s.index, s.status) for s in detail.steps] == [(0, "failed"), (1, "passed")]
        assert [v.reason for v in detail.verdicts] == ["verdict 0"]


def test_a_batch_updates_its_run_row_once_and_leaves_its_last_write_time(tmp_path) -> None:
    from sqlalchemy import event

    with Store.open(tmp_path) as store:
        run_id = store.begin_run("p", "f")
        started = _updated_at(tmp_path, run_id)
        updates: list[str] = []
        event.listen(store._wengine, "before_cursor_execute",
                     lambda conn, cur, sql, *a: updates.append(sql) if sql.startswith("UPDATE runs") else None)
        gate = _busy(store)
        for i in range(6):  # a step's records queued behind a busy writer
            store.defer("record_verdict", run_id, i, Verdict("as_expected", "any", (), f"verdict {i}"))
        gate.set()
        store.flush()
        assert len(updates) == 1  # begun by this store: nothing looked up, its last-write time set at the commit
        assert _updated_at(tmp_path, run_id) > started
        assert [v.reason for v in store.run_detail(run_id).verdicts] == [f"verdict {i}" for i in range(6)]


def test_a_batch_whose_commit_fails_reports_every_write_of_it() -> None:
    errors: list[str] = []

    class Refused(Exception):
        pass

    from contextlib import contextmanager

    @contextmanager
    def batch():
        yield
        raise Refused("database is locked")

    w = BackgroundWriter(batch=batch)
    gate = threading.Event()
    ran: list[int] = []
    try:
        w.submit(gate.wait, (5.0,))
        for i in range(3):
            w.submit(ran.append, (i,), lambda exc, i=i: errors.append(f"{i}: {exc}"))
        gate.set()
        assert w.flush(5.0)
        assert ran == [0, 1, 2] and errors == [f"{i}: database is locked" for i in range(3)]
    finally:
        w.close()


def test_close_commits_what_was_deferred_and_a_closed_store_refuses_more(tmp_path) -> None:
    store = Store.open(tmp_path)
    run_id = store.begin_run("p", "f")
    for i in range(10):
        store.defer("record_step", run_id, _outcome(i))
    store.close()
    with pytest.raises(Exception, match="closed"):
        store.defer("record_step", run_id, _outcome(11))
    with Store.open(tmp_path) as again:
        assert [s.index for s in again.run_detail(run_id).steps] == list(range(10))


def test_a_read_only_store_defers_nothing(tmp_path) -> None:
    Store.open(tmp_path).close()
    with Store.open(tmp_path, read_only=True) as ro:
        with pytest.raises(Exception, match="read-only"):
            ro.defer("record_step", "x", _outcome(0))


def test_the_queue_is_bounded_and_a_full_queue_raises_after_its_limit(monkeypatch) -> None:
    monkeypatch.setattr(writer_mod, "PUT_LIMIT_S", 0.2)
    w = BackgroundWriter(maxsize=2)
    gate = threading.Event()
    try:
        w.submit(gate.wait, (5.0,))  # taken by the thread, blocks it
        deadline = time.monotonic() + 5
        while w._queue.qsize() and time.monotonic() < deadline:  # noqa: SLF001 - until the thread took it
            time.sleep(0.01)
        w.submit(lambda: None)
        w.submit(lambda: None)  # the queue holds two: full
        t = time.monotonic()
        with pytest.raises(queue.Full):
            w.submit(lambda: None)
        assert 0.15 <= time.monotonic() - t < 3.0
        assert w.pending == 3  # the refused write is not counted
        assert not w.flush(0.1)  # a flush has a limit too, and says when it was reached
    finally:
        gate.set()
        assert w.close(5.0)
    assert w.pending == 0


def test_a_write_deferred_from_the_writer_thread_runs_at_once() -> None:
    w = BackgroundWriter()
    seen: list[str] = []

    def outer() -> None:
        w.submit(seen.append, ("inner",))  # never waits for itself
        seen.append("outer")

    try:
        w.submit(outer)
        assert w.flush(5.0)
        assert seen == ["inner", "outer"]
    finally:
        w.close()


CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[2])
    from core.domain import StepOutcome, Verdict
    from core.store import Store

    store = Store.open(sys.argv[1])
    run_id = store.begin_run("demo", "endless")
    print(run_id, flush=True)
    i = 0
    while True:  # hand writes over until killed; a flush now and then, as at a step's checkpoint
        store.defer("record_verdict", run_id, i, Verdict("as_expected", "any", (), f"verdict {i}"))
        store.defer("record_step", run_id, StepOutcome(i, f"s{i}", f"step {i}", "passed", None, None, 1, 1.0))
        if i % 5 == 4:
            store.flush()
        i += 1
""")


def test_a_killed_process_with_deferred_writes_leaves_an_intact_store_of_whole_records(tmp_path) -> None:
    Store.open(tmp_path).close()
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
        proc.kill()  # SIGKILL with writes queued and one being committed
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    raw = sqlite3.connect(store_path(tmp_path))
    try:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        steps = [r[0] for r in raw.execute("SELECT step_index FROM steps WHERE run_id = ? ORDER BY step_index",
                                           (run_id,))]
        verdicts = [r[0] for r in raw.execute("SELECT reason FROM verdicts WHERE run_id = ? ORDER BY id",
                                              (run_id,))]
    finally:
        raw.close()
    n = len(steps)
    assert n >= 25 and steps == list(range(n))  # whole records, in the order handed over, no gap
    assert verdicts[:n] == [f"verdict {i}" for i in range(n)] and len(verdicts) in (n, n + 1)
