"""The resume plan (pure): what is done again, replayed, or judged in flight - on the demo project's real flows."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.engine.resume import ResumeError, plan_resume
from core.project import load_project
from core.store.resumes import RunState

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def flows():
    return load_project(ROOT / "projects" / "demo").flows


def state(flow: str, steps: dict[int, str], *, status: str = "interrupted", checkpoints=None, acts=None,
          verdicts=None) -> RunState:
    verdicts = verdicts or {}
    return RunState("r1", flow, status, "", steps, checkpoints or {}, frozenset(steps), frozenset(verdicts),
                    acts or {}, verdicts)


def test_killed_before_acting_runs_the_step_again_and_replays_what_wrote_nothing(flows):
    flow = flows["leave_request"]
    plan = plan_resume(flow, state("leave_request", {0: "passed", 1: "passed", 2: "passed", 3: "passed"}),
                       secrets=("password",))
    assert plan.start == 4 and plan.done == (0, 1, 2, 3)
    assert plan.replay == (0, 1, 2, 3) and plan.in_flight is None


def test_a_sign_in_found_writing_is_replayed_as_a_re_login_but_any_other_write_never(flows):
    flow = flows["leave_request"]
    cps = {2: {"step_state": "success", "reversible": False,
               "side_effects": ["step 3 'Sign in' wrote data (POST /api/login 200)"]},
           3: {"step_state": "success", "reversible": False, "side_effects": []}}
    plan = plan_resume(flow, state("leave_request", {i: "passed" for i in range(5)}, checkpoints=cps),
                       secrets=("password",))
    assert 2 in plan.replay and 3 not in plan.replay
    assert any("re-login" in n for n in plan.notes) and any("step 4" in n and "not done again" in n
                                                             for n in plan.notes)


def test_declared_irreversible_steps_that_passed_are_never_replayed(flows):
    flow = flows["login_lockout"]
    irreversible = [i for i, s in enumerate(flow.steps) if not s.reversible]
    done = {i: "passed" for i in range(irreversible[1] + 1)}
    plan = plan_resume(flow, state("login_lockout", done), secrets=("password",))
    assert plan.start == irreversible[1] + 1
    assert not set(irreversible) & set(plan.replay)
    # each password fill is filled again by the next one replayed or run (the skipped sign-in between them
    # emptied the field in the earlier run): it is left out
    assert set(plan.replay) == set(done) - set(irreversible) - {1, 3} == {0}


def test_a_write_under_way_without_a_verdict_is_in_flight_and_a_judged_one_is_not(flows):
    flow = flows["leave_request"]
    last = len(flow.steps) - 1
    steps = {i: "passed" for i in range(last)}
    cps = {last: {"step_state": "pending", "reversible": False, "side_effects": []}}
    plan = plan_resume(flow, state("leave_request", steps, checkpoints=cps, acts={last: 1}))
    assert plan.in_flight == last and plan.start == last
    judged = plan_resume(flow, state("leave_request", {**steps, last: "escalated"}, checkpoints=cps,
                                     acts={last: 1}, verdicts={last: 1}))
    assert judged.in_flight is None
    retried = plan_resume(flow, state("leave_request", steps, checkpoints=cps, acts={last: 2}, verdicts={last: 1}))
    assert retried.in_flight == last  # the second attempt acted and was never judged


def test_checkpoint_without_an_action_under_way_is_not_in_flight(flows):
    flow = flows["export_report"]
    cps = {4: {"step_state": "pending", "reversible": True, "side_effects": []}}
    plan = plan_resume(flow, state("export_report", {i: "passed" for i in range(4)}, checkpoints=cps))
    assert plan.in_flight is None and plan.start == 4


@pytest.mark.parametrize("status, words", [("passed", "nothing to resume"), ("running", "still running")])
def test_runs_that_passed_or_still_run_are_refused(flows, status, words):
    with pytest.raises(ResumeError, match=words):
        plan_resume(flows["sort_table"], state("sort_table", {}, status=status))


def test_a_run_of_another_flow_is_refused(flows):
    with pytest.raises(ResumeError, match="is of flow 'sort_table'"):
        plan_resume(flows["export_report"], state("sort_table", {}))


def test_plan_mapping_is_json_ready(flows):
    import json

    plan = plan_resume(flows["sort_table"], state("sort_table", {0: "passed"}))
    doc = json.loads(json.dumps(plan.to_mapping()))
    assert doc["resumed_from"] == "r1" and doc["start"] == 1 and doc["replay"] == [0]


def test_an_episode_is_never_resumed():
    from core.domain.flow import EpisodeSpec

    flow = load_project(ROOT / "projects" / "demo").flows["sort_table"]
    from dataclasses import replace

    episodic = replace(flow, episode=EpisodeSpec(task="click-button"))
    with pytest.raises(ResumeError, match="new episode"):
        plan_resume(episodic, state("sort_table", {0: "passed"}))


def test_a_fill_that_the_next_step_fills_again_is_not_replayed(flows):
    flow = flows["login_lockout"]
    first_irreversible = next(i for i, s in enumerate(flow.steps) if not s.reversible)
    plan = plan_resume(flow, state("login_lockout", {i: "passed" for i in range(first_irreversible + 1)}),
                       secrets=("password",))
    assert plan.start == first_irreversible + 1 and flow.steps[plan.start].action.kind == "input"
    assert plan.replay == (0,)  # the user name; the password is typed again by the step run next


# --- repeated resumes (issue 21 item 1) -----------------------------------------------------------------------


class Links:
    """A store's resume links: run -> the runs that resumed it, oldest first."""

    def __init__(self, links: dict[str, list[str]]) -> None:
        self.links = links

    def resumed_by(self, run_id: str) -> list[str]:
        return self.links.get(run_id, [])


def test_a_chain_of_resumes_is_followed_to_its_latest_run() -> None:
    from core.engine.resume import MAX_CHAIN, resume_chain

    assert resume_chain(Links({}), "r1") == ["r1"]
    assert resume_chain(Links({"r1": ["r2"], "r2": ["r3", "r4"]}), "r1") == ["r1", "r2", "r4"]
    assert resume_chain(Links({"r1": ["r2"], "r2": ["r1"]}), "r1") == ["r1", "r2"]  # never loops
    many = {f"r{i}": [f"r{i + 1}"] for i in range(500)}
    assert len(resume_chain(Links(many), "r0")) == MAX_CHAIN


def test_a_merged_chain_keeps_done_steps_done_with_the_checkpoint_of_the_run_that_did_them(flows):
    from core.engine.resume import merge_chain

    wrote = {4: {"step_state": "success", "reversible": False, "side_effects": ["step 5 'x' wrote data"]}}
    first = state("leave_request", {i: "passed" for i in range(6)}, checkpoints=wrote)
    # the resume was killed while replaying: it had mirrored steps 0-2 as done and nothing more
    second = RunState("r2", "leave_request", "interrupted", "", {0: "passed", 1: "passed", 2: "skipped"}, {},
                      frozenset({0, 1}), frozenset(), {}, {})
    merged = merge_chain([first, second])
    assert merged.run_id == "r2" and merged.status == "interrupted"
    assert {i: merged.steps[i] for i in range(6)} == {i: "passed" for i in range(6)}
    plan = plan_resume(flows["leave_request"], merged, secrets=("password",))
    assert plan.start == 6 and 4 not in plan.replay  # step 5 wrote in the first run: never done again


def test_a_step_in_flight_stays_in_flight_in_the_resume_of_a_resume(flows):
    flow = flows["export_report"]
    i = next(k for k, s in enumerate(flow.steps) if not s.reversible or s.action.kind == "click")
    steps = {k: "passed" for k in range(i)} | {i: "escalated"}  # the first resume escalated it, unacted
    resumed = RunState("r2", "export_report", "escalated", "", steps, {}, frozenset(steps), frozenset(), {}, {})
    assert plan_resume(flow, resumed).in_flight is None  # today's evidence alone would run it again
    plan = plan_resume(flow, resumed, carried_in_flight=i)
    assert plan.start == i and plan.in_flight == i
    # once a run counted it done (its assertions held, or a person skipped it), it is no longer carried
    done = RunState("r3", "export_report", "escalated", "", steps | {i: "skipped"}, {}, frozenset(steps),
                    frozenset(), {}, {})
    assert plan_resume(flow, done, carried_in_flight=i).in_flight is None


def test_a_step_whose_effect_was_seen_but_not_verified_is_in_flight_for_the_resume(flows):
    """The step acted, its effect was seen (its checkpoint turned irreversible) and its verification failed:
    the run escalated it; a resume must not do it again blindly (issue 19 with issue 21 item 1)."""
    flow = flows["leave_request"]
    i = 4
    cps = {i: {"step_state": "failed", "reversible": False, "side_effects": []}}
    steps = {k: "passed" for k in range(i)} | {i: "escalated"}
    plan = plan_resume(flow, state("leave_request", steps, checkpoints=cps, acts={i: 1}, verdicts={i: 1}),
                       secrets=("password",))
    assert plan.start == i and plan.in_flight == i
    assert any("effect that was not verified" in n for n in plan.notes)
    # a step that failed before it acted (no act, declared irreversible) is simply run again
    cps2 = {i: {"step_state": "failed", "reversible": True, "side_effects": []}}
    assert plan_resume(flow, state("leave_request", steps, checkpoints=cps2), secrets=("password",)).in_flight is None


def test_a_step_verified_then_killed_before_its_record_is_done_never_done_again(flows):
    """Killed in the submit's ``record`` phase: its verdict passed, its outcome was never stored; the resume
    counts it done (issue 21 item 9 found the submit sent again, three times over two resumes)."""
    flow = flows["leave_request"]
    submit = len(flow.steps) - 1
    steps = {i: "passed" for i in range(submit)}
    cps = {submit: {"step_state": "pending", "reversible": True, "side_effects": []}}
    st = RunState("r1", "leave_request", "interrupted", "", steps, cps, frozenset(range(submit + 1)),
                  frozenset({submit}), {submit: 1}, {submit: 1}, {submit: "as_expected"})
    plan = plan_resume(flow, st, secrets=("password",))
    assert plan.start == len(flow.steps) and submit in plan.done and submit not in plan.replay
    assert plan.in_flight is None and any("verified" in n and "counted done" in n for n in plan.notes)
    # the same kill on a click that may write (undeclared) and comes before the end: done, and not replayed
    new = 3  # 'New request'
    st2 = RunState("r1", "leave_request", "interrupted", "", {i: "passed" for i in range(new)}, {},
                   frozenset(range(new + 1)), frozenset({new}), {new: 1}, {new: 1}, {new: "as_expected"})
    plan2 = plan_resume(flow, st2, secrets=("password",))
    assert plan2.start == new + 1 and new in plan2.done and new not in plan2.replay
    # a verdict that did not pass settles nothing: the step is run again (its attempt had no effect)
    st3 = RunState("r1", "leave_request", "interrupted", "", {i: "passed" for i in range(new)}, {},
                   frozenset(range(new + 1)), frozenset({new}), {new: 1}, {new: 1}, {new: "unchanged"})
    assert plan_resume(flow, st3, secrets=("password",)).start == new
