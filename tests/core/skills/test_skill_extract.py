"""Extraction by contrast (K4): only the differing actions, semantic targets, a trigger of what the page
showed and the recording did not, placeholders, deny rules, and the cases that make no skill."""
from __future__ import annotations

from dataclasses import replace

from core.skills.attribution import attribute
from core.skills.extract import Candidate, NoSkill, differing, extract, generalise
from core.skills.trigger import check_trigger
from core.skills.extract import failure_observation, recording_observation, step_of
from skill_records import BASELINE, CONTINUE, EMAIL, FORM, NAME, OWN, correction_step, entry, record, snap


def _failed(rec):  # noqa: ANN001, ANN202
    return [dict(e) for e in rec.trajectory] + [entry(1, "s2", "input", EMAIL, status="ahead", value="a@b.c"),
                                                entry(2, "s3", "click", CONTINUE, status="ahead")]


def test_a_dialog_the_recording_lacked_and_the_button_pressed_become_the_trigger_and_the_action() -> None:
    rec = record()
    corrected = [correction_step("click", OWN, name="Click Type them myself")]
    out = extract(rec, corrected=corrected, failed=_failed(rec), product="Shipping", attribution=attribute(rec),
                  meaning="insert", correction_id=7)
    assert isinstance(out, Candidate), out
    s = out.skill
    assert s.kind == "do" and s.state == "proposed" and s.id.startswith("sk-") and len(s.id) == 15
    assert s.trigger.dialog_name == "Autofill?" and s.trigger.dialog is True
    (req,) = s.trigger.required
    assert (req.role, req.name, req.in_dialog) == ("button", "Type them myself", True)
    (a,) = s.actions
    t = a.target
    assert (a.action.kind, t.role, t.name, t.text) == ("click", "button", "Type them myself", "Type them myself")
    assert not (t.id or t.css_path or t.xpath or t.bbox) and t.anchor is not None and t.anchor.text == "Autofill?"
    assert s.provenance.correction_id == 7 and s.provenance.cause == "unexpected_state"
    assert s.scope.product == "Shipping" and s.verify and s.verify[0].kind == "absent"
    # the trigger holds on the failure's page and not on the recording's
    step = step_of(rec.trajectory[0])
    assert check_trigger(s.trigger, failure_observation(rec), step=step).holds
    assert not check_trigger(s.trigger, recording_observation(rec.page["recorded"]), step=step).holds
    # the same lesson learnt twice is the same skill
    again = extract(rec, corrected=corrected, failed=_failed(rec), product="Shipping", attribution=attribute(rec))
    assert isinstance(again, Candidate) and again.skill.id == s.id


def test_a_correction_that_does_what_the_flow_does_makes_no_skill() -> None:
    rec = record(error_type="verify_mismatch", message="unchanged", before=snap(FORM, sig="s1"))
    same = [{"id": "x", "name": "Fill Full name", "action": "input", "value": "Ada", "target": {**NAME, "id": "n"}},
            {"id": "y", "name": "Click Continue", "action": "click", "target": CONTINUE}]
    out = extract(rec, corrected=same, failed=_failed(rec), product="Shipping", meaning="replace")
    assert isinstance(out, NoSkill) and "nothing differs" in out.reason
    assert isinstance(extract(rec, corrected=[], failed=_failed(rec), product="P"), NoSkill)


def test_a_click_on_a_field_that_is_then_filled_is_part_of_filling_it() -> None:
    fill = {"id": "a", "action": "input", "value": "Ada", "target": NAME}
    click = {"id": "b", "action": "click", "target": NAME}
    other = {"id": "c", "action": "click", "target": CONTINUE}
    assert differing([click, fill, other], [entry(0, "s1", "input", NAME, value="Ada")]) == [other]


def test_a_label_equal_to_the_step_target_becomes_a_placeholder_and_the_missing_control_an_absent_part() -> None:
    label = {"tag": "span", "role": "", "text": "Email"}
    fields, used = generalise(label, EMAIL)
    assert fields == {"tag": "span", "text": "{target.label}"} and used == ("target.label",)
    # on the new version the Email field is gone until its label is double-clicked
    page = snap([{"tag": "span", "text": "Email"}, {"tag": "input", "role": "textbox", "name": "Full name",
                                                     "label": "Full name"}], sig="v2")
    rec = record(error_type="locator", message="locator abstained: no element like 'Email'", before=page,
                 trajectory=[entry(1, "s2", "input", EMAIL, status="failed", value="a@b.c", before="v2")],
                 step_index=1, step_id="s2", recorded={"baseline": BASELINE, "screen": "/form | Shipping | x | "})
    corrected = [correction_step("dblclick", label, name="Double-click Email"),
                 {"id": "z", "action": "input", "value": "a@b.c", "target": EMAIL}]
    out = extract(rec, corrected=corrected, failed=list(rec.trajectory), product="P", attribution=attribute(rec),
                  meaning="replace")
    assert isinstance(out, Candidate), out
    s = out.skill
    assert [a.action.kind for a in s.actions] == ["dblclick"] and s.actions[0].target.text == "{target.label}"
    assert s.params == ("target.label", "target.name") and s.trigger.step_action == "input"
    (gone,) = s.trigger.absent
    assert gone.name == "{target.name}" and gone.role == "textbox"
    step = step_of(rec.trajectory[0])
    assert check_trigger(s.trigger, failure_observation(rec), step=step).holds
    # another field with the same trouble: the same skill applies, bound to that field's label
    phone = step_of(entry(3, "s4", "input", {"role": "textbox", "name": "Phone", "label": "Phone"}))
    other_page = failure_observation(record(before=snap([{"tag": "span", "text": "Phone"}], sig="v3")))
    assert check_trigger(s.trigger, other_page, step=phone).holds
    assert not check_trigger(s.trigger, other_page, step=step).holds  # no 'Email' label on that page


def test_actions_that_say_never_become_a_deny_rule() -> None:
    rec = record()
    use = {"tag": "button", "role": "button", "name": "Use saved details", "text": "Use saved details",
           "container": "Autofill?"}
    out = extract(rec, corrected=[correction_step("click", use, name="Never press Use saved details")],
                  failed=_failed(rec), product="P", attribution=attribute(rec), meaning="insert")
    assert isinstance(out, Candidate) and out.skill.kind == "deny"
    assert out.skill.description.startswith("When the dialog 'Autofill?' is open, never click")


def test_what_makes_no_skill_says_why() -> None:
    # only another element for the same action: a heal of the step, not a new action
    rec = record(error_type="locator", message="locator abstained", before=snap(FORM, sig="s1"))
    swap = [{"id": "a", "action": "input", "value": "Ada", "target": {"role": "textbox", "name": "Your name"}}]
    out = extract(rec, corrected=swap, failed=_failed(rec), product="P", attribution=attribute(rec),
                  meaning="replace")
    assert isinstance(out, NoSkill) and "heal" in out.reason
    # nothing known of the recording's page: the failure is not explained by the page
    unknown = record(recorded={})
    out = extract(unknown, corrected=[correction_step("click", OWN)], failed=_failed(unknown), product="P",
                  attribution=attribute(unknown), meaning="insert")
    assert isinstance(out, NoSkill) and "not explained by the page" in out.reason
    # the element acted on is not unique on the failure's page
    twice = record(before=snap([*snap([])["candidates"], {**OWN}, {**OWN}], ("Autofill?",)))
    out = extract(twice, corrected=[correction_step("click", OWN)], failed=_failed(twice), product="P",
                  attribution=attribute(twice), meaning="insert")
    assert isinstance(out, NoSkill) and "not unique" in out.reason


def test_a_popup_the_failed_action_opened_is_the_page_the_trigger_is_made_of() -> None:
    from core.skills.learn import cases_for
    from core.skills.validate import validate

    cancel = {"tag": "button", "role": "button", "name": "Cancel", "text": "Cancel", "container": "Autofill?"}
    popup = snap([*snap(FORM)["candidates"], cancel], ("Autofill?",), sig="popup")
    rec = record(error_type="verify_mismatch", message="changed unexpectedly: a dialog opened", attempts=2,
                 before=snap(FORM, sig="form"), passed_from=snap(FORM, sig="done"))
    rec = replace(rec, page={**rec.page, "after": popup})
    att = attribute(rec)
    assert att.cause == "unexpected_state" and att.unexpected == ("Autofill?",)
    out = extract(rec, corrected=[correction_step("click", cancel, name="Click Cancel")], failed=_failed(rec),
                  product="P", attribution=att, meaning="insert")
    assert isinstance(out, Candidate), out
    (req,) = out.skill.trigger.required
    assert (req.name, req.in_dialog, out.skill.trigger.dialog_name) == ("Cancel", True, "Autofill?")
    result, why = validate(out.skill, rec, cases_for(rec))
    # the popup page must trigger; the form before the action (both attempts: one state), the recording's page
    # and the page the step passed from must not
    assert why == "" and result.passed == result.cases == 4
