"""A skill's safety bar at run time in real Chromium, on pages that bait it into a wrong click (K6).

``fixtures/skill_guard`` holds hostile pages: a cookie banner whose flow step
is "Reject all" while a skill knows "Accept all cookies"; an "Autofill?"
dialog whose autofocused button is "Yes, delete all", with a ``<span
role=button>Help</span>`` that cannot take focus, a ``<label for>`` giving
that very button the accessible name "Tips", a checkbox "Also delete all
saved addresses", a select offering "Delete all saved addresses", a button
whose only destructive words are in its ``aria-description``; and a dialog
that closes on Escape.  Every page logs what was activated in
``window.activations``; an entry starting ``WRONG-`` is a wrong click.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pytest

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings
from core.domain.skill import ElementCondition, Skill, SkillAction, SkillScope, SkillTrigger
from core.engine.events import SkillConsidered, SkillFinished, SkillFired
from core.engine.executor import FlowExecutor
from core.engine.skilled import skill_decider
from core.store import Store
from core.store.skills import SkillTable
from browser_fixtures import driver_on

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).parent / "fixtures" / "skill_guard"
PRODUCT = "shipping"
DIALOG = SkillTrigger(required=(ElementCondition(role="button", name="Type them myself", in_dialog=True),),
                      dialog=True, dialog_name="Autofill?")
NAME = Step("s1", Action("input", "Robin"), name="Type the full name",
            target=ElementDescriptor(tag="input", role="textbox", name="Full name", label="Full name", id="name"))


@pytest.fixture(scope="module")
def driver():
    with driver_on(FIXTURES) as d:
        yield d


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "store.sqlite")
    yield s
    s.close()


def a_skill(sid: str, actions: Sequence[SkillAction], trigger: SkillTrigger = DIALOG, **kw: Any) -> Skill:
    return Skill(id=sid, description=kw.pop("description", f"skill {sid}"), trigger=trigger, actions=tuple(actions),
                 scope=SkillScope(product=PRODUCT), state="approved", quality=1.0, **kw)


def do(kind: str, role: str = "", value: str = "", **target: str) -> SkillAction:
    return SkillAction(Action(kind, value), ElementDescriptor(role=role, **target))


def run(driver: Any, store: Store, flow: Flow, params: dict[str, str] | None = None
        ) -> tuple[Any, list[Any], list[str]]:
    events: list[Any] = []
    dec = skill_decider(store, PRODUCT, events.append)
    ex = FlowExecutor(driver, emit=events.append, store=store, screenshots=False, project_name=PRODUCT,
                      settings=EngineSettings(waits=WaitSettings(retries=1, retry_delay_ms=0)),
                      deciders=(dec,) if dec is not None else ())
    result = ex.run_flow(flow, params=params or {})
    ex.finish(result)
    return result, events, list(driver.page.evaluate("window.activations"))


def of(events: list[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def wrong(pressed: list[str]) -> list[str]:
    return [p for p in pressed if p.startswith("WRONG-")]


# --- the flow step's own target goes first --------------------------------------------------------

ACCEPT = a_skill("sk-00000000c001", [do("click", "button", name="Accept all cookies")],
                 trigger=SkillTrigger(required=(ElementCondition(role="button", name="Accept all cookies"),)),
                 description="accept the cookie banner")


def ticket(step_name: str) -> Flow:
    return Flow("ticket", "/consent.html", (
        Step("s1", Action("click"), name=f"Click {step_name}",
             target=ElementDescriptor(tag="button", role="button", name=step_name, text=step_name, type="button",
                                      container="Cookies")),))


def test_a_skill_does_not_fire_while_the_flow_steps_own_target_is_there_and_usable(driver, store) -> None:
    SkillTable(store).put(ACCEPT)
    result, events, pressed = run(driver, store, ticket("Reject all"))
    assert result.status == "passed", result.error
    assert pressed == ["rejected"] and not of(events, SkillFired)
    assert [(o.source, o.status) for o in result.steps] == [("flow", "passed")]
    (seen,) = [e for e in of(events, SkillConsidered) if e.skill_id == ACCEPT.id]
    assert "'Reject all' is present and usable" in seen.reason and "flow step goes first" in seen.reason


def test_a_skill_never_acts_in_the_flow_steps_own_container(driver, store) -> None:
    """The step's target is gone (renamed): the skill's trigger holds, but its button is in the step's banner."""
    table = SkillTable(store)
    table.put(ACCEPT)
    result, events, pressed = run(driver, store, ticket("Decline optional cookies"))
    assert "WRONG-accepted-all-cookies" not in pressed and result.status != "passed"
    (done,) = [e for e in of(events, SkillFinished) if e.skill_id == ACCEPT.id]
    assert done.outcome == "precondition" and "the flow step's own container" in done.reason


# --- keys go where they land -----------------------------------------------------------------------


def test_enter_on_a_control_that_takes_no_text_is_never_pressed(driver, store) -> None:
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c002", [do("press", "button", "Enter", name="Help")],
                      trigger=SkillTrigger(required=(ElementCondition(role="button", name="Help", in_dialog=True),),
                                           dialog=True, dialog_name="Autofill?")))
    result, events, pressed = run(driver, store, Flow("ship", "/space.html", (NAME,)))
    assert wrong(pressed) == [] and not of(events, SkillFired)
    (use,) = table.uses(skill_id="sk-00000000c002")
    assert use.outcome == "failed" and "takes no text" in use.reason


def test_a_key_whose_target_cannot_take_focus_is_not_pressed(driver, store) -> None:
    """Escape onto the span: focus stays on 'Yes, delete all', so the key would land there - not pressed (the
    engine's own popup handling may press Escape afterwards, as a recovery: that is no skill's action)."""
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c003", [do("press", "button", "Escape", name="Help")],
                      trigger=SkillTrigger(required=(ElementCondition(role="button", name="Help", in_dialog=True),),
                                           dialog=True, dialog_name="Autofill?")))
    result, events, pressed = run(driver, store, Flow("ship", "/escape.html", (NAME,)))
    assert wrong(pressed) == []
    assert [o.status for o in result.steps if o.source == "skill"] == ["skipped"]
    (done,) = [e for e in of(events, SkillFinished) if e.skill_id == "sk-00000000c003"]
    assert done.outcome == "precondition" and "does not take focus" in done.reason


def test_a_targetless_escape_runs_and_the_flow_step_follows(driver, store) -> None:
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c004", [SkillAction(Action("press", "Escape"), ElementDescriptor())]))
    result, events, pressed = run(driver, store, Flow("ship", "/escape.html", (NAME,)))
    assert result.status == "passed", result.error
    assert pressed == ["escaped"] and wrong(pressed) == []
    assert [(o.source, o.status) for o in result.steps] == [("skill", "passed"), ("flow", "passed")]
    assert driver.page.input_value("#name") == "Robin"


def test_a_targetless_key_other_than_escape_tab_or_an_arrow_is_refused(driver, store) -> None:
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c005", [SkillAction(Action("press", "Enter"), ElementDescriptor())]))
    result, events, pressed = run(driver, store, Flow("ship", "/space.html", (NAME,)))
    assert wrong(pressed) == [] and not of(events, SkillFired)
    (use,) = table.uses(skill_id="sk-00000000c005")
    assert use.outcome == "failed" and "no target named" in use.reason


# --- one guard for every kind, over every text --------------------------------------------------


@pytest.mark.parametrize("page, action", [
    ("/space2.html", do("check", "checkbox", label="Also delete all saved addresses")),
    ("/space4.html", do("select", "combobox", "Delete all saved addresses", label="Saved addresses")),
    ("/space.html", do("hover", "button", text="Yes, delete all")),
])
def test_check_select_and_hover_go_through_the_guard_too(driver, store, page, action) -> None:
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c006", [action, do("click", "button", name="Type them myself")]))
    result, events, pressed = run(driver, store, Flow("ship", page, (NAME,)))
    assert wrong(pressed) == [] and not of(events, SkillFired)
    (use,) = table.uses(skill_id="sk-00000000c006")
    assert use.outcome == "failed" and "refused" in use.reason and "trigger does not name" in use.reason


def test_a_skill_never_goes_back(driver, store) -> None:
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c007", [do("click", "button", name="Type them myself"), SkillAction(Action("back"))]))
    result, events, pressed = run(driver, store, Flow("ship", "/space.html", (NAME,)))
    assert pressed == [] and not of(events, SkillFired)
    (use,) = table.uses(skill_id="sk-00000000c007")
    assert use.outcome == "failed" and "back, which a skill does not do" in use.reason


def test_a_trigger_naming_a_destructive_button_by_another_name_does_not_let_it_be_pressed(driver, store) -> None:
    """'Yes, delete all' is named 'Tips' by a <label for>: the trigger names 'Tips', not the words that delete."""
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c008", [do("click", "button", name="Tips")],
                      trigger=SkillTrigger(required=(ElementCondition(role="button", name="Tips", in_dialog=True),),
                                           dialog=True, dialog_name="Autofill?")))
    result, events, pressed = run(driver, store, Flow("ship", "/space.html", (NAME,)))
    assert "WRONG-delete-all" not in pressed
    (done,) = [e for e in of(events, SkillFinished) if e.skill_id == "sk-00000000c008"]
    assert done.outcome == "failed" and "'Yes, delete all'" in done.reason and "by those words" in done.reason


def test_destructive_words_in_an_aria_description_are_read_live_and_refused(driver, store) -> None:
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c009", [do("click", "button", name="Type them myself")]))
    result, events, pressed = run(driver, store, Flow("ship", "/described.html", (NAME,)))
    assert wrong(pressed) == []
    (done,) = [e for e in of(events, SkillFinished) if e.skill_id == "sk-00000000c009"]
    assert done.outcome == "failed" and "aria-description" in done.reason


def test_a_skill_never_types_a_declared_secret(driver, store) -> None:
    secret = "hors" + "e-battery-7"  # a made-up value, never a real credential
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c00a", [do("click", "button", name="Type them myself"),
                                          do("input", "textbox", "{password}", label="Full name")],
                      params=("password",)))
    flow = Flow("ship", "/space3.html", (NAME,), secrets=("password",))
    result, events, pressed = run(driver, store, flow, params={"password": secret})
    assert not [p for p in pressed if p.startswith("typed:") and secret in p] and not of(events, SkillFired)
    (use,) = table.uses(skill_id="sk-00000000c00a")
    assert use.outcome == "failed" and "never types a secret" in use.reason and secret not in use.reason


def test_a_look_alike_outside_the_dialog_is_told_apart_by_the_dialogs_title(driver, store) -> None:
    """'Type them myself' twice: in the "Autofill?" dialog and on the page behind it. The trigger names the one
    in the dialog, so the skill's target carries the dialog's title: the locator finds that one."""
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c00b", [do("click", "button", name="Type them myself")]))
    result, events, pressed = run(driver, store, Flow("ship", "/lookalike.html", (NAME,)))
    assert result.status == "passed", result.error
    assert pressed == ["own"] and wrong(pressed) == []
    assert [(o.source, o.status) for o in result.steps] == [("skill", "passed"), ("flow", "passed")]


def test_a_targetless_arrow_never_changes_the_focused_select(driver, store) -> None:
    """The select holding 'Delete all saved addresses' has focus: ArrowDown would choose it - not pressed."""
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c00c", [SkillAction(Action("press", "ArrowDown"), ElementDescriptor())]))
    result, events, pressed = run(driver, store, Flow("ship", "/arrow.html", (NAME,)))
    assert wrong(pressed) == [] and driver.page.input_value("#act") == "keep"
    (done,) = [e for e in of(events, SkillFinished) if e.skill_id == "sk-00000000c00c"]
    # the page focuses the select on a 50 ms timer: when the guard reads the focus after it, the key is refused;
    # when the key comes first it lands on the name field and changes nothing there (the skill's use fails).
    # Either way the select keeps its value; the race made certain is the next test's
    assert done.outcome != "passed"
    if done.outcome == "precondition":
        assert "would change the focused" in done.reason


@pytest.mark.parametrize("by", ["microtask", "timer"])
def test_focus_moving_to_a_select_between_the_check_and_the_arrow_does_not_change_it(driver, store, by) -> None:
    """The race of a load-time focus timer, made certain: the page moves focus to the select right after the
    guard reads what has focus (at the end of that very read's task, or on a 0 ms timer it sets) - after the
    check passed, before the key arrives.  The key is checked again as it arrives and held back."""
    table = SkillTable(store)
    table.put(a_skill("sk-00000000c00d", [SkillAction(Action("press", "ArrowDown"), ElementDescriptor())]))
    result, events, pressed = run(driver, store, Flow("ship", f"/arrow_race.html?by={by}", (NAME,)))
    assert "focus-moved" in pressed  # the window was there: focus moved after the check
    assert wrong(pressed) == [] and driver.page.input_value("#act") == "keep"
    (done,) = [e for e in of(events, SkillFinished) if e.skill_id == "sk-00000000c00d"]
    assert done.outcome == "precondition" and "would change the focused" in done.reason
    assert "held back" in done.reason


def test_a_key_whose_target_hands_focus_on_after_the_check_is_held_back(driver, store) -> None:
    """The note field passes focus to the select at the end of the task that focused it: the check (focus
    it, read where focus is) sees the note focused; the key, pressed after, would land on the select."""
    table = SkillTable(store)
    note = ElementCondition(role="textbox", name="Note", in_dialog=True)
    table.put(a_skill("sk-00000000c00e", [do("press", "textbox", "ArrowDown", label="Note")],
                      trigger=SkillTrigger(required=(*DIALOG.required, note), dialog=True, dialog_name="Autofill?")))
    result, events, pressed = run(driver, store, Flow("ship", "/key_race.html", (NAME,)))
    assert "focus-moved" in pressed
    assert wrong(pressed) == [] and driver.page.input_value("#act") == "keep"
    (done,) = [e for e in of(events, SkillFinished) if e.skill_id == "sk-00000000c00e"]
    assert done.outcome == "precondition" and "lost focus just before the key arrived" in done.reason
