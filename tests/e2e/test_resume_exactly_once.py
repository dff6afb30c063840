"""A repeated ``run --resume`` never does a write twice (issue 21 item 1), with the demo app's database as the
only ground truth: kill -9 of a real ``steadyhand run`` subprocess, resume, then resume again.

- killed before Submit: the resume passes with one request; resuming the same run again is refused (it was
  resumed already, by a run that passed), and no second request is written;
- killed right after the export's write reached the server: the resume escalates ("in flight, not done
  again"); resuming that escalated resume - or the first run again - keeps the step in flight: escalated
  again, never exported a second time.
"""
from __future__ import annotations

import pytest

from core.bench.faults import FaultBench, kill_case

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    b = FaultBench(tmp_path_factory.mktemp("resume-once"), latency_ms=200, log=lambda s: None)
    yield b
    b.close()


def test_a_run_already_resumed_is_not_resumed_twice(bench):
    out = kill_case(bench, "leave_request", 6)
    assert out.detail["killed"] and out.detail["resume"]["status"] == "passed"
    assert bench.ground("leave_request")[0] == 1
    code, err, res = bench.resume(out.detail["run_id"])  # the same run, again
    assert code != 0 and res["run_id"] is None, (code, err, res)
    assert "already resumed" in err and out.detail["resume"]["run_id"] in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    n, dup, _ = bench.ground("leave_request")
    assert (n, dup) == (1, 0)  # the demo app's database: one leave request, never two


def test_an_in_flight_write_stays_in_flight_across_every_later_resume(bench):
    out = kill_case(bench, "export_report", None)
    first, resumed = out.detail["run_id"], out.detail["resume"]
    assert resumed["status"] == "escalated" and "in flight" in out.message
    for again in (resumed["run_id"], first):  # the escalated resume, then the first run once more
        code, err, res = bench.resume(again)
        assert res["status"] == "escalated", (code, err, res)
        assert "in flight" in res["error"] and "not done again" in res["error"]
        n, dup, _ = bench.ground("export_report")
        assert (n, dup) == (1, 0), f"resuming {again}: {n} exports in the app's log"
