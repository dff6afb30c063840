"""The fault bench's ground-truth counts (pure): which server log entries are a flow's writes, and how many a
run that stopped at a step owes."""
from __future__ import annotations

from pathlib import Path

from core.bench.faults import effects, effects_upto, expected_effects
from core.project import load_project

ROOT = Path(__file__).resolve().parents[3]


def test_effects_count_each_flows_own_writes():
    report = {"writes_by_op": {"create_request": 2}, "exports": 1, "writes": 2, "duplicate_writes": 1}
    logins = [{"gt": "api.login", "outcome": o} for o in ("ok", "bad_password", "bad_password", "locked")]
    assert effects(report, logins, "leave_request") == (2, 1)
    assert effects(report, logins, "export_report") == (1, 1)
    assert effects(report, logins, "login_lockout") == (3, 1)  # the successful sign-in is no failed attempt
    assert effects(report, [], "sort_table") == (2, 1)


def test_writes_owed_up_to_a_step_match_the_flows_writing_steps():
    flows = load_project(ROOT / "projects" / "demo").flows
    for name in ("leave_request", "export_report", "login_lockout", "sort_table"):
        n = len(flows[name].steps)
        assert effects_upto(name, n - 1) == expected_effects(name)
    lockout = flows["login_lockout"]
    irreversible = [i for i, s in enumerate(lockout.steps) if not s.reversible]
    assert [effects_upto("login_lockout", i) for i in irreversible] == [1, 2, 3]
    assert effects_upto("login_lockout", irreversible[0] - 1) == 0
