"""A really full disk and a read-only store under a real `steadyhand run` subprocess (issue 21 item 9): the
project's data folder is a small tmpfs the bench mounts (full during the run, or before it), or a read-only
bind mount; the demo app's own log is the ground truth of what was written."""
from __future__ import annotations

import pytest

from core.bench.faults import FaultBench
from core.bench.faults_disk import FULL_AT_START_KB, can_mount, disk_full_case, read_only_case

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    b = FaultBench(tmp_path_factory.mktemp("faults-disk"), latency_ms=200, log=lambda s: None)
    yield b
    b.close()


@pytest.fixture(scope="module")
def mountable(tmp_path_factory):
    ok, why = can_mount(tmp_path_factory.mktemp("probe"))
    assert ok, f"this test needs the right to mount a tmpfs (root or CAP_SYS_ADMIN): {why}"
    return ok


def test_a_disk_that_fills_during_the_run_loses_no_write(bench, mountable):
    out = disk_full_case(bench, "export_report")
    assert out.detail["disk"].startswith("tmpfs")
    assert out.detail["enospc_seen"], out.detail  # the disk really filled up
    assert out.survived, out
    assert out.detail["effects"] == 1 and out.double_writes == 0  # the app's log: exported once
    store = out.detail["store"]
    assert store["integrity"] == "ok" and store["missing"] == 0 and store["broken"] == 0


def test_a_disk_full_before_the_run_is_one_clear_line_then_a_run_with_room_passes(bench, mountable):
    out = disk_full_case(bench, "leave_request", disk_kb=FULL_AT_START_KB, name="disk-full-at-start")
    assert out.detail["exit"] != 0 and "disk is full" in out.detail["first_message"], out.detail
    assert "Traceback" not in out.detail["stderr"] and "move the file away" not in out.detail["stderr"]
    assert out.detail["run_again"]["status"] == "passed"
    assert out.survived and out.detail["effects"] == 1, out


def test_a_read_only_store_is_refused_before_anything_is_done(bench, mountable):
    out = read_only_case(bench, "leave_request")
    assert out.detail["read_only"] == "read-only bind mount"
    assert out.detail["exit"] == 2 and "read-only" in out.message and "Traceback" not in out.detail["stderr"]
    assert out.detail["effects"] == 0 and out.detail["new_runs"] == 0
    assert out.survived, out
