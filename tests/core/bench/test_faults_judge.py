"""The fault bench's plan and verdict (pure): kill points at each phase a step goes through, the kill point's
syntax, and the verdict from the app's write count against what the last run says."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.act.space import needs_target
from core.bench.faults import FaultOutcome
from core.bench.faults_child import KILL_PHASES, parse_kill
from core.bench.faults_phases import escalated_step, judge_by_app, kill_points
from core.project import load_project

ROOT = Path(__file__).resolve().parents[3]


def test_each_step_is_killed_at_each_phase_it_goes_through():
    flow = load_project(ROOT / "projects" / "demo").flows["leave_request"]
    points = kill_points(flow)
    assert KILL_PHASES == ("observe", "resolve", "act", "settle", "verify", "record")
    for i, step in enumerate(flow.steps):
        phases = [p for k, p in points if k == i]
        assert phases[0] == "observe" and phases[-1] == "record"
        assert set(phases) >= {"observe", "act", "settle", "verify", "record"}
        assert ("resolve" in phases) == needs_target(step)  # a step without a target skips that phase
    assert kill_points(flow, {10}) == [(10, p) for p in KILL_PHASES]  # the submit has a target


def test_a_kill_point_names_flow_step_and_phase():
    assert parse_kill("leave_request:10:settle") == ("leave_request", 10, "settle")
    for bad in ("leave_request:10", "leave_request:x:act", "leave_request:1:fingerprint", ""):
        with pytest.raises(ValueError):
            parse_kill(bad)


def test_the_step_an_escalation_names():
    assert escalated_step("step 11 'Submit the request' was in flight when run r ended") == 11
    assert escalated_step("the step is not done again: a write was seen") is None


def _judge(n, dup, status, message="", corruptions=0, flow="leave_request"):
    return judge_by_app(FaultOutcome("f", flow, False), flow=flow, n=n, dup=dup, status=status, message=message,
                        corruptions=corruptions)


def test_a_passed_run_must_show_each_write_once_in_the_app():
    assert _judge(1, 0, "passed").survived
    twice = _judge(2, 0, "passed")
    assert not twice.survived and twice.double_writes == 1
    lost = _judge(0, 0, "passed")
    assert not lost.survived and lost.lost_steps == 1
    assert not _judge(1, 1, "passed").survived  # the app flagged a duplicate
    assert not _judge(1, 0, "passed", corruptions=1).survived


def test_an_escalation_owes_the_writes_before_its_step_and_at_most_its_own():
    msg = "step 11 'Submit the request' was in flight when run r ended and may have written data; not done again"
    assert _judge(0, 0, "escalated", msg).survived and _judge(1, 0, "escalated", msg).survived
    assert not _judge(2, 0, "escalated", msg).survived
    lockout = "step 5 'Sign in again' was in flight when run r ended; not done again"
    assert _judge(1, 0, "escalated", lockout, flow="login_lockout").survived  # step 3 wrote once, step 5 unsure
    assert _judge(2, 0, "escalated", lockout, flow="login_lockout").survived
    assert not _judge(0, 0, "escalated", lockout, flow="login_lockout").survived  # step 3's write lost
    assert not _judge(0, 0, "escalated", "line one\nTraceback (most recent call last):").survived


def test_any_other_end_is_not_survived():
    for status in ("failed", "error", "interrupted", "running", ""):
        assert not _judge(1, 0, status, "some line").survived
