"""kill -9 of a real `steadyhand run` subprocess mid-flow, then `run --resume`: the demo server's log shows every
write exactly once, the store passes SQLite's integrity check and names only whole screenshots."""
from __future__ import annotations

import sqlite3

import pytest

from core.bench.faults import FaultBench, kill_case


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    b = FaultBench(tmp_path_factory.mktemp("faults-kill"), latency_ms=200, log=lambda s: None)
    yield b
    b.close()


def _resume_row(bench: FaultBench, run_id: str) -> tuple[str, str]:
    conn = sqlite3.connect(f"file:{bench.data_dir / 'store.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT run_id, resumed_from FROM run_resumes WHERE run_id = ?", (run_id,)).fetchone()
    finally:
        conn.close()


def test_kill_before_a_step_then_resume_does_the_rest_once(bench):
    out = kill_case(bench, "leave_request", 6)
    first, resumed = out.detail["first"], out.detail["resume"]
    assert out.detail["killed"] and first["exit"] == -9 and first["status"] == "running"  # as the kill left it
    assert resumed["status"] == "passed" and out.status == "passed"
    assert out.detail["effects"] == 1 and out.double_writes == 0 and out.lost_steps == 0
    assert out.detail["store"]["integrity"] == "ok" and out.store_corruption == 0
    assert out.survived
    first_passed = {int(k) for k, v in first["steps"].items() if v == "passed"}
    assert first_passed == set(range(6))  # the kill came when step 7 started
    assert _resume_row(bench, resumed["run_id"])[1] == out.detail["run_id"]
    assert bench.run_row(out.detail["run_id"])["status"] == "interrupted"  # marked so by the resume's store


def test_kill_while_the_write_is_under_way_is_never_done_twice(bench):
    out = kill_case(bench, "export_report", None)
    resumed = out.detail["resume"]
    assert out.detail["killed"] and out.resumed
    assert out.detail["effects"] == 1 and out.double_writes == 0 and out.lost_steps == 0
    # the page cannot show an export done by a dead browser: the resume escalates instead of exporting again
    assert resumed["status"] == "escalated" and "in flight" in out.message and "not done again" in out.message
    assert out.store_corruption == 0 and out.survived
