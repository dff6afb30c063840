"""The target server answering 500 or hanging on the submit: a real run subprocess ends with one clear message
and the right status, and nothing is written or done twice."""
from __future__ import annotations

import pytest

from core.bench.faults import FaultBench, server_case
from core.sites.faults import ServerFault


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    b = FaultBench(tmp_path_factory.mktemp("faults-server"), latency_ms=200, log=lambda s: None)
    yield b
    b.close()


@pytest.mark.parametrize("kind", ["error", "hang"])
def test_a_broken_submit_fails_the_run_clearly_and_writes_nothing(bench, kind):
    fault = ServerFault(kind, "/api/requests", "POST")
    out = server_case(bench, f"server-{kind}", fault, want=("failed", "escalated"), effects_after=0)
    assert fault.hits == 1  # the submit was sent once: never again after it may have written
    assert out.status in ("failed", "escalated") and out.detail["exit"] in (1, 3)
    assert out.message and "\n" not in out.message and "irreversible step" in out.message
    said = {"error": "the server answered POST /api/requests 500", "hang": "no answer to POST /api/requests"}[kind]
    assert said in out.message
    assert out.detail["effects"] == 0 and out.double_writes == 0 and out.store_corruption == 0
    steps = out.detail["steps"]
    assert all(v == "passed" for k, v in steps.items() if int(k) < len(steps) - 1)  # recorded up to the submit
    assert out.survived
