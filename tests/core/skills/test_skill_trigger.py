"""The trigger check of a skill against one observation (K6) - pure, no browser."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.domain import Action, Candidate, ElementDescriptor, Observation, StateSignature, Step
from core.domain.skill import ElementCondition, SkillTrigger
from core.skills.trigger import bind_text, check_trigger, condition_matches, find, UnboundPlaceholder


def sig(url: str, modals: int) -> StateSignature:
    return StateSignature(url, "t", 0, modals, "", "", "", False, 0, "", "d")


def button(name: str, *, container: str = "", enabled: bool = True, covered: bool = False, ref: str = "") -> Candidate:
    return Candidate(ref or f"0:{name}", ElementDescriptor(tag="button", role="button", name=name, text=name,
                                                           container=container), enabled=enabled, covered=covered)


def textbox(label: str) -> Candidate:
    return Candidate(f"0:{label}", ElementDescriptor(tag="input", role="textbox", name=label, label=label),
                     editable=True)


def obs(*cands: Candidate, url: str = "http://127.0.0.1:8000/requests/new", title: str = "New request",
        modals: tuple[str, ...] = ()) -> Observation:
    return Observation(url, title, (1280, 800), 1.0, (0, 0), cands, "", sig(url, len(modals)), modal_titles=modals)


CANCEL_AUTOFILL = SkillTrigger(required=(ElementCondition(role="button", name="Cancel", in_dialog=True),),
                               dialog_name="Fill from your last request")


def test_a_trigger_holds_when_every_part_holds() -> None:
    page = obs(button("Cancel", container="Fill from your last request?"), button("Confirm",
               container="Fill from your last request?"), modals=("Fill from your last request?",))
    check = check_trigger(CANCEL_AUTOFILL, page)
    assert check.holds and not check.half
    assert "button 'Cancel' (in a dialog) present" in check.reason


def test_half_a_trigger_is_not_a_trigger() -> None:
    page = obs(button("Cancel", container="Delete request?"), modals=("Delete request?",))
    check = check_trigger(CANCEL_AUTOFILL, page)
    assert not check.holds and check.half
    assert any("Fill from your last request" in m for m in check.missed)


def test_a_button_outside_the_dialog_does_not_count_as_in_it() -> None:
    page = obs(button("Cancel"), modals=("Fill from your last request?",))
    assert not check_trigger(CANCEL_AUTOFILL, page).holds


def test_two_matching_elements_make_the_trigger_ambiguous_and_false() -> None:
    t = SkillTrigger(required=(ElementCondition(role="button", name="Accept"),))
    page = obs(button("Accept", ref="0:a"), button("accept!", ref="0:b"))
    check = check_trigger(t, page)
    assert not check.holds and check.ambiguous


def test_covered_or_disabled_elements_are_not_present_but_still_not_absent() -> None:
    t = SkillTrigger(required=(ElementCondition(role="button", name="Accept"),))
    assert not check_trigger(t, obs(button("Accept", enabled=False))).holds
    gone = SkillTrigger(required=(ElementCondition(role="textbox", label="Reason"),),
                        absent=(ElementCondition(role="button", name="Accept"),))
    assert not check_trigger(gone, obs(textbox("Reason"), button("Accept", covered=True))).holds
    assert check_trigger(gone, obs(textbox("Reason"))).holds


def test_placeholders_bind_from_the_current_steps_target() -> None:
    t = SkillTrigger(required=(ElementCondition(text="{target.label}"),), step_action="input",
                     absent=(ElementCondition(role="textbox", label="{target.label}"),))
    step = Step("s1", Action("input", "x"), target=ElementDescriptor(role="textbox", label="Department"))
    label = Candidate("0:l", ElementDescriptor(tag="span", text="Department"))
    assert check_trigger(t, obs(label), step=step).holds
    assert not check_trigger(t, obs(label, textbox("Department")), step=step).holds
    other = Step("s2", Action("click"), target=ElementDescriptor(role="button", name="Save"))
    assert not check_trigger(t, obs(label), step=other).holds  # no label to bind, and not an input step


def test_an_empty_trigger_never_holds() -> None:
    check = check_trigger(SkillTrigger(), obs(button("Cancel")))
    assert not check.holds and not check.half


def test_an_unbound_placeholder_is_no_match_not_an_error() -> None:
    t = SkillTrigger(required=(ElementCondition(name="{missing}"),))
    check = check_trigger(t, obs(button("Cancel")))
    assert not check.holds and not check.half and "{missing}" in check.reason
    try:
        bind_text("{missing}", {})
    except UnboundPlaceholder as exc:
        assert exc.args == ("missing",)
    else:
        raise AssertionError("an unbound placeholder must raise")


def test_url_title_and_dialog_parts() -> None:
    t = SkillTrigger(url_pattern="*/requests/new*", title="new request", dialog=False)
    assert check_trigger(t, obs()).holds
    assert not check_trigger(t, obs(modals=("Cookies",))).holds
    assert not check_trigger(t, obs(url="http://127.0.0.1:8000/requests")).holds


def test_matching_is_normalised_and_exact_never_fuzzy() -> None:
    c = ElementCondition(role="button", name="Accept all")
    assert condition_matches(c, button("ACCEPT  ALL!"))
    assert not condition_matches(c, button("Accept al"))
    assert not condition_matches(c, button("Accept all cookies"))
    assert not condition_matches(ElementCondition(), button("Accept all"))


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=20), st.text(max_size=20))
def test_a_required_name_matches_only_elements_with_that_normalised_name(want: str, have: str) -> None:
    from core.locate.textsim import normalize
    c = ElementCondition(role="button", name=want)
    found = find(c, obs(button(have)))
    if found and want:
        assert normalize(want) == normalize(have) if normalize(want) else " ".join(want.split()) == " ".join(have.split())
