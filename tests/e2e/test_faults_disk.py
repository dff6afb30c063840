"""A full disk while a real run subprocess writes screenshots (ENOSPC raised half-way by the media writer's file):
one warning, the run passes and records every step, no row names a missing or half-written file."""
from __future__ import annotations

import pytest

from core.bench.faults import FaultBench, disk_case


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    b = FaultBench(tmp_path_factory.mktemp("faults-disk"), latency_ms=200, log=lambda s: None)
    yield b
    b.close()


def test_enospc_on_screenshots_loses_no_step(bench):
    out = disk_case(bench, "export_report")
    assert out.status == "passed" and out.detail["exit"] == 0
    assert "No space left on device" in out.message and "steps are recorded" in out.message
    assert out.detail["steps_recorded"] == 5 and out.detail["observations_without_screenshot"] > 0
    store = out.detail["store"]
    assert store["integrity"] == "ok" and store["missing"] == 0 and store["broken"] == 0 and store["temp_files"] == 0
    assert out.detail["effects"] == 1 and out.double_writes == 0 and out.survived
