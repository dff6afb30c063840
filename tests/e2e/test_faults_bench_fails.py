"""`steadyhand bench faults` can fail (issue 21 item 9): on a deliberately broken engine - one that no longer
commits that an action is under way - a kill right after the submit's action makes the resume submit again,
the demo app's log shows the request twice, and the bench exits 1; on the engine as it is, the same case is
survived and the bench exits 0.  Each run is the real command line (a subprocess), with kill -9 at the
``settle`` phase of the submit, a second kill during the resume and a last resume.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.bench.faults_child import BREAK_ENV

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CASE = "kill@leave_request:11:settle"


def _bench(tmp_path: Path, **env: str) -> tuple[int, dict, str]:
    out = tmp_path / "faults.json"
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    if not env:
        full.pop(BREAK_ENV, None)
    r = subprocess.run([sys.executable, "-m", "core.cli", "bench", "faults", "--only", CASE, "--json", str(out)],
                       cwd=ROOT, env=full, capture_output=True, text=True, timeout=600)
    doc = json.loads(out.read_text()) if out.is_file() else {}
    return r.returncode, doc, r.stdout + r.stderr


def test_a_broken_engine_makes_the_bench_fail(tmp_path):
    code, doc, text = _bench(tmp_path, **{BREAK_ENV: "no-in-flight-marker"})
    assert code == 1, text
    assert doc["faults"] == 1 and doc["not_survived"] == [CASE], text
    (case,) = doc["details"]
    assert case["double_writes"] >= 1 and case["detail"]["effects"] >= 2, case  # the app's own log: twice
    assert "NOT SURVIVED" in text and "faults not survived" in text


def test_the_engine_as_it_is_survives_the_same_kill(tmp_path):
    code, doc, text = _bench(tmp_path)
    assert code == 0, text
    (case,) = doc["details"]
    assert case["survived"] and case["double_writes"] == 0 and case["lost_steps"] == 0, case
    assert case["detail"]["effects"] <= 1 and case["detail"]["exit"] == -9  # killed, written at most once
    assert case["status"] in ("passed", "escalated")
    if case["status"] == "escalated":  # the submit stays in flight across every later resume
        assert "in flight" in case["message"] and "not done again" in case["message"]
