"""A second, read-only Store reads the same file while the first one writes."""
from __future__ import annotations

import sqlite3
import threading

from core.domain import RunResult
from core.store import Store, store_path


def test_reader_sees_each_committed_write(tmp_path, make_outcome, make_observation, make_png):
    with Store.open(tmp_path) as writer, Store.open(tmp_path, read_only=True) as reader:
        assert reader.list_runs() == []
        run_id = writer.begin_run("demo", "f")
        assert [r.status for r in reader.list_runs()] == ["running"]
        writer.record_step(run_id, make_outcome(0))
        assert len(reader.run_detail(run_id).steps) == 1
        writer.record_observation(run_id, 1, "before", make_observation(png=make_png()))
        obs = reader.run_detail(run_id).observations[0]
        assert reader.media_path(obs.screenshot).read_bytes() == make_png()
        writer.finish_run(run_id, RunResult(run_id=run_id, flow="f", status="passed",
                                            steps=(make_outcome(0),), heals=0,
                                            invalid_actions=0, seconds=0.5))
        assert reader.get_run(run_id).status == "passed"


def test_reader_is_not_blocked_by_an_open_write_transaction(tmp_path):
    with Store.open(tmp_path) as writer:
        run_id = writer.begin_run("demo", "f")
    raw = sqlite3.connect(store_path(tmp_path), isolation_level=None)
    try:
        raw.execute("BEGIN IMMEDIATE")
        raw.execute("UPDATE runs SET status = 'half-written' WHERE id = ?", (run_id,))
        # The write lock is held and the change uncommitted: the reader neither
        # waits nor sees it (WAL).
        with Store.open(tmp_path, read_only=True) as reader:
            assert reader.get_run(run_id).status == "running"
        raw.execute("ROLLBACK")
    finally:
        raw.close()


def test_reader_in_another_thread_reads_consistent_snapshots(tmp_path, make_outcome,
                                                              make_observation):
    steps = 150
    with Store.open(tmp_path) as writer:
        run_id = writer.begin_run("demo", "busy")
        errors: list[BaseException] = []

        def write() -> None:  # the engine thread
            try:
                for i in range(steps):
                    writer.record_observation(run_id, i, "before", make_observation())
                    writer.record_step(run_id, make_outcome(i))
                writer.finish_run(run_id, RunResult(run_id=run_id, flow="busy", status="passed",
                                                    steps=(), heals=0, invalid_actions=0,
                                                    seconds=1.0))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        thread = threading.Thread(target=write)
        seen: list[int] = []
        with Store.open(tmp_path, read_only=True) as reader:
            thread.start()
            while True:
                detail = reader.run_detail(run_id)
                n = len(detail.steps)
                # One snapshot: steps are contiguous, each step's observation is there.
                assert [s.index for s in detail.steps] == list(range(n))
                assert len(detail.observations) in (n, n + 1)
                seen.append(n)
                if detail.run.status != "running":
                    break
                assert thread.is_alive() or not errors, errors
            thread.join()
        assert not errors, errors
        assert seen == sorted(seen) and seen[-1] == steps
