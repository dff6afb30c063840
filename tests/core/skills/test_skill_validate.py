"""Validation before review (K5): legality, replay on stored states, and failures that do not reproduce."""
from __future__ import annotations

from dataclasses import replace

from core.domain import Action, ElementDescriptor
from core.domain.skill import ElementCondition, Skill, SkillAction, SkillTrigger
from core.skills.attribution import attribute
from core.skills.capture import observation_of
from core.skills.extract import Candidate, extract
from core.skills.learn import cases_for
from core.skills.validate import Case, legality, replay, reproduced, validate
from skill_records import FORM, OWN, POPUP, correction_step, record, snap


def _candidate(rec):  # noqa: ANN001, ANN202
    out = extract(rec, corrected=[correction_step("click", OWN)], failed=list(rec.trajectory), product="P",
                  attribution=attribute(rec), meaning="insert")
    assert isinstance(out, Candidate), out
    return out.skill


def test_a_skill_explained_by_a_page_difference_passes_on_the_failure_and_the_recording() -> None:
    rec = record(passed_from=snap(FORM, sig="after"))
    skill = _candidate(rec)
    cases = cases_for(rec)
    assert [c.expect for c in cases] == [True, False, False]
    result, why = validate(skill, rec, cases)
    assert why == "" and result.reproduced and (result.cases, result.passed) == (3, 3) and result.pass_rate == 1.0


def test_a_failure_a_retry_got_past_never_becomes_a_skill() -> None:
    rec = record(outcome="transient")
    result, why = validate(_candidate(rec), rec, cases_for(rec))
    assert not result.reproduced and why == "did not reproduce: the step passed on a retry by itself (a transient " \
                                            "failure)"


def test_a_server_error_seen_once_with_no_page_difference_did_not_reproduce() -> None:
    rec = record(error_type="verify_mismatch", message="unchanged", before=snap(FORM, sig="s1"),
                 signals={"http": [{"method": "GET", "url": "http://x.test/api", "status": 503, "type": "fetch"}]})
    ok, why = reproduced(rec, explained=False)
    assert not ok and why.startswith("did not reproduce: HTTP 503 seen on one attempt only")
    assert reproduced(replace(rec, page={**rec.page, "attempts": rec.page["attempts"] * 2}), explained=False)[0]
    timeout = record(error_type="page", message="still loading after 15000 ms: spinner", before=snap(FORM))
    assert "a timeout" in reproduced(timeout, explained=False)[1]
    assert not reproduced(replace(timeout, page={**timeout.page, "attempts": timeout.page["attempts"] * 2}),
                          explained=False)[0]  # a timeout on two attempts is still a slow page
    # a page difference explains it even when the server also failed once
    assert reproduced(rec, explained=True)[0]


def test_a_negative_state_where_the_trigger_holds_drops_it_whatever_the_pass_rate() -> None:
    rec = record(attempts=2)  # seen twice: it reproduced; the replay decides
    skill = _candidate(rec)
    # the recording's page had the dialog too: the trigger holds where it must not
    wrong = [Case(observation_of(snap(POPUP, ("Autofill?",), sig="a")), True, "the failure's page"),
             Case(observation_of(snap(POPUP, ("Autofill?",), sig="a2")), True, "a similar failure"),
             Case(observation_of(snap(FORM, sig="c")), False, "a passing page"),
             Case(observation_of(snap(POPUP, ("Autofill?",), sig="b")), False, "the recording's page")]
    result, why = validate(skill, rec, wrong, threshold=0.3)
    assert round(result.pass_rate, 2) == 0.75  # above the threshold, and still dropped
    assert why.startswith("the trigger holds where it must not") and "the recording's page" in why
    assert any(r.startswith("the recording's page: the trigger holds") for r in result.reasons)
    # the negative that fired is counted even when the replay's five did not pick it
    many = [Case(observation_of(snap(POPUP, ("Autofill?",), sig=f"p{i}")), True, f"p{i}") for i in range(5)]
    assert validate(skill, rec, many + wrong[2:], threshold=0.1)[1].startswith("the trigger holds where it must not")
    ok = wrong[:3]
    assert validate(skill, rec, ok)[1] == ""
    only_positive = [Case(observation_of(snap(POPUP, ("Autofill?",))), True, "the failure's page")]
    assert "not validated" in validate(skill, rec, only_positive)[1]


def test_a_failure_a_wait_would_have_cured_did_not_reproduce_however_many_attempts_saw_it() -> None:
    from core.skills.validate import waited_out

    slow = [{"tag": "button", "role": "button", "name": "Reload page", "text": "Reload page"}]
    target = {"tag": "input", "role": "textbox", "name": "Full name", "label": "Full name"}
    # a timeout on three attempts
    timeout = record(error_type="action_error", message="Timeout 5000ms exceeded", before=snap(slow), attempts=3)
    ok, why = reproduced(timeout, explained=False)
    assert not ok and "a timeout" in why and "a wait would have cured it" in why and "3 attempts" in why
    # a spinner on the page at the failure
    loading = record(error_type="locator", message="locator abstained", attempts=2,
                     before={**snap(slow), "loading": ['role=progressbar (indeterminate) on div#spin']})
    assert "still loading (role=progressbar" in reproduced(loading, explained=False)[1]
    # the target showed up on a later attempt
    late = record(error_type="locator", message="locator abstained", before=snap(slow), attempts=2)
    attempts = [dict(late.page["attempts"][0]), {**late.page["attempts"][1], "before": snap(slow + [target],
                                                                                             sig="s2")}]
    late = replace(late, page={**late.page, "attempts": attempts})
    assert waited_out(late) == "the target appeared on a later attempt" and not reproduced(late, explained=False)[0]
    # the page moved between attempts with nobody acting
    moving = record(error_type="locator", message="locator abstained", before=snap(slow), attempts=2)
    moved = [dict(moving.page["attempts"][0]), {**moving.page["attempts"][1], "state": "s-other"}]
    moving = replace(moving, page={**moving.page, "attempts": moved})
    assert "changed between attempts" in waited_out(moving) and not reproduced(moving, explained=False)[0]
    # a target that stays missing on a still page, seen twice: it reproduced; a new dialog explains a slow one
    still = record(error_type="locator", message="locator abstained", before=snap(slow), attempts=2)
    assert waited_out(still) == "" and reproduced(still, explained=False)[0]
    assert reproduced(timeout, explained=True)[0]


def test_replay_needs_the_first_target_exactly_once_and_uses_at_most_five_states() -> None:
    rec = record()
    skill = _candidate(rec)
    twice = observation_of(snap(POPUP + [{**OWN}], ("Autofill?",)))
    n, passed, reasons = replay(skill, [Case(twice, True, "a similar failure")])
    assert (n, passed) == (1, 0) and "trigger does not hold" in reasons[0]  # two such buttons: ambiguous
    many = [Case(observation_of(snap(POPUP, ("Autofill?",), sig=str(i))), i % 2 == 0, f"c{i}") for i in range(8)]
    assert replay(skill, many)[0] == 5


def _skill(*actions: SkillAction, required=()) -> Skill:  # noqa: ANN001
    return Skill("sk-x", "does a thing", SkillTrigger(required=required, dialog_name="Autofill?"), actions)


def test_legality_refuses_paths_coordinates_navigation_and_unnamed_confirming_controls() -> None:
    xpath = SkillAction(Action("click"), ElementDescriptor(role="button", name="Type", xpath="/html/body/button"))
    assert any("xpath" in r for r in legality(_skill(xpath)))
    go = SkillAction(Action("navigate", "http://elsewhere.test"))
    assert any("may not navigate" in r for r in legality(_skill(go)))
    nameless = SkillAction(Action("click"), ElementDescriptor(bbox=None))
    assert any("without a target named by meaning" in r for r in legality(_skill(nameless)))
    accept = SkillAction(Action("click"), ElementDescriptor(role="button", name="Accept all"))
    assert any("may confirm, delete or submit" in r for r in legality(_skill(accept)))
    named = ElementCondition(role="button", name="Accept all")
    assert legality(_skill(accept, required=(named,))) == []
    assert legality(Skill("sk-y", "", SkillTrigger(), ())) == ["no description", "the trigger names nothing",
                                                                "no action"]
