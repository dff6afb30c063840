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
    assert "{target." not in s.description and "the step's field's label" in s.description, s.description
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


def test_a_model_may_only_keep_some_of_the_differing_actions() -> None:
    import json

    from core.plan.model import ModelClient, ModelConfig
    from core.plan.scripted_server import Reply, ScriptedModelServer
    from core.skills.extract import choose_actions

    rec = record()
    stray = {"tag": "a", "role": "link", "name": "Help", "text": "Help"}
    corrected = [correction_step("click", stray, name="Click Help"), correction_step("click", OWN)]
    with ScriptedModelServer() as srv:
        client = ModelClient(ModelConfig(srv.base_url, "scripted", retries=0))
        try:
            srv.queue(Reply(json.dumps({"keep": [1], "why": "Help was a stray click"})))
            kept = choose_actions(corrected, _failed(rec), rec, client)
            assert kept is not None and [k["target"]["name"] for k in kept] == ["Type them myself"]
            assert "1: click button 'Type them myself' in the dialog 'Autofill?'" in json.dumps(srv.requests)
            out = extract(rec, corrected=kept, failed=_failed(rec), product="P", attribution=attribute(rec),
                          meaning="insert", extractor="contrast+model")
            assert isinstance(out, Candidate) and len(out.skill.actions) == 1
            assert out.skill.provenance.extractor == "contrast+model"
            srv.queue(Reply(json.dumps({"keep": [0, 7]})))  # names an action that is not there: not trusted
            assert choose_actions(corrected, _failed(rec), rec, client) is None
            srv.queue(Reply("", status=500))
            assert choose_actions(corrected, _failed(rec), rec, client) is None
            assert choose_actions(corrected[1:], _failed(rec), rec, client) is None  # one action: nothing to choose
        finally:
            client.close()


# The slow server: the form renders late, only "Reload page" is on the page, and the person pressed it.
SLOW_RELOAD = {"tag": "button", "role": "button", "name": "Reload page", "text": "Reload page"}
SLOW_BASELINE = [{"role": "button", "text": "Reload page"}, {"role": "textbox", "text": "Full name"},
                 {"role": "button", "text": "Continue"}, {"role": "heading", "text": "Shipping details"}]


def _slow_record(**kw):  # noqa: ANN003, ANN202
    return record(error_type="locator", message="locator abstained: exact: no candidate with the same role/tag and "
                  "label 'Full name'", before=snap([dict(SLOW_RELOAD)], sig="s-slow"), state="s-slow",
                  recorded={"baseline": SLOW_BASELINE, "screen": "/form | Shipping | Shipping details | "}, **kw)


def test_a_missing_target_next_to_elements_the_recording_also_had_is_no_skill() -> None:
    rec = _slow_record()
    out = extract(rec, corrected=[correction_step("click", SLOW_RELOAD, name="Click Reload page")],
                  failed=_failed(rec), product="Shipping", attribution=attribute(rec), meaning="insert")
    assert isinstance(out, NoSkill), out
    assert "only the step's own target is missing" in out.reason and "slow or half-loaded" in out.reason


def test_the_recording_side_carries_the_step_target_fields_and_unknown_is_no_difference() -> None:
    from core.domain.skill import ElementCondition
    from core.skills.extract import known_on_recording

    recorded = {"baseline": SLOW_BASELINE, "screen": ""}
    rec_obs = recording_observation(recorded, NAME)
    # the baseline's textbox 'Full name' is the step's target: it carries the label now
    (box,) = [c for c in rec_obs.candidates if c.descriptor.role == "textbox"]
    assert box.descriptor.label == "Full name" and box.descriptor.tag == "input"
    labelled = ElementCondition(role="textbox", label="Full name")
    assert known_on_recording(labelled, None, rec_obs, True) is True
    # a baseline element of the same role without the field asked for: unknown, never "absent on the recording"
    bare = recording_observation(recorded)
    assert known_on_recording(labelled, None, bare, True) is None
    # an element of a role the recording had none of, with a complete baseline: a real difference
    tag_label = ElementCondition(label="Reason")
    from core.domain import ElementDescriptor
    assert known_on_recording(tag_label, ElementDescriptor(tag="label", label="Reason", text="Reason"), rec_obs,
                              True) is False
    assert known_on_recording(tag_label, ElementDescriptor(tag="label", label="Reason"), rec_obs, False) is None
    assert known_on_recording(ElementCondition(role="button", name="Reload page"), None, rec_obs, True) is True


def test_an_inline_editor_opened_on_a_label_the_recording_did_not_have_as_an_element_is_a_skill() -> None:
    reason = {"tag": "textarea", "role": "textbox", "name": "Reason", "label": "Reason"}
    label = {"tag": "label", "label": "Reason", "text": "Reason"}
    base = [{"role": "textbox", "text": "Reason"}, {"role": "button", "text": "Submit"}]
    rec = record(error_type="precondition", message="precondition not met: target is not an editable field",
                 before=snap([dict(label), dict(CONTINUE)], sig="s-inline"), state="s-inline", attempts=3,
                 recorded={"baseline": base, "screen": ""},
                 trajectory=[entry(0, "s1", "input", reason, status="failed", value="{reason}", before="s-inline")],
                 passed_from=snap([dict(reason), dict(CONTINUE)], sig="s-open"))
    out = extract(rec, corrected=[correction_step("dblclick", label, name="Double-click Reason")],
                  failed=[dict(e) for e in rec.trajectory], product="LeaveDesk", attribution=attribute(rec),
                  meaning="insert")
    assert isinstance(out, Candidate), out
    assert "was on the page and not on the recording" in out.skill.description
    step = step_of(rec.trajectory[0])
    rec_obs = recording_observation(rec.page["recorded"], reason)
    assert not check_trigger(out.skill.trigger, rec_obs, step=step).holds


def test_a_description_names_the_steps_field_in_words_not_by_its_placeholder() -> None:
    from core.skills.extract import _plain_placeholders

    said = _plain_placeholders("When x, dblclick an element with text '{target.label}' before 'Type the e-mail'")
    assert said == "When x, dblclick an element with text the step's field's label before 'Type the e-mail'"
    assert "{" not in _plain_placeholders("press '{target.name}' and '{target.text}'")
