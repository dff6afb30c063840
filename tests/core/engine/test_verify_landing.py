"""Post-verification that knows where a step should land, true side effects, rollback and compensation
on a FakeDriver (issue 9 items 3 and 5, failure kinds 13 and 15) - no browser, no Qt."""
from __future__ import annotations

from typing import Any

from core.domain import (
    Action, AfterState, ElementDescriptor, EngineSettings, Escalation, Flow, RunResult, Step, StepEvidence,
    WaitSettings,
)
from core.engine.control import Answer, HeadlessControl
from core.engine.events import EscalationRaised, Recovered, VerdictReached
from core.engine.executor import FlowExecutor
from core.perception.fake import FakeDriver, FakePage, navigate, nothing, open_modal, set_value
from core.perception.pagefacts import HEADING_JS
from event_log import EventLog


def button(element_id: str, text: str) -> dict[str, Any]:
    return {"id": element_id, "role": "button", "text": text}


def click(step_id: str, label: str, **kw: Any) -> Step:
    return Step(id=step_id, action=Action("click"),
                target=ElementDescriptor(tag="button", role="button", name=label, text=label), **kw)


def landing(**after: Any) -> StepEvidence:
    return StepEvidence(after=AfterState(**after))


def execute(fake: FakeDriver, steps: tuple[Step, ...], *, control: Any = None,
            params: dict[str, str] | None = None) -> tuple[RunResult, EventLog]:
    events = EventLog()
    ex = FlowExecutor(fake, emit=events, control=control, screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=2, retry_delay_ms=0)))
    return ex.run_flow(Flow("f", "/", steps), params=params or {}), events


def delete_site() -> FakeDriver:
    """'Delete' on the list leads to a confirmation page, not back to the list."""
    return FakeDriver(pages={"/": FakePage([button("del", "Delete")], title="Requests"),
                             "/confirm": FakePage([button("yes", "Yes, delete")], title="Confirm"),
                             "/list": FakePage([button("new", "New")], title="Requests")},
                      reactions={("/", "del", "click"): navigate("/confirm")})


def test_a_navigation_to_another_page_than_recorded_is_changed_unexpectedly() -> None:
    fake = delete_site()
    result, events = execute(fake, (click("s1", "Delete", expect="navigation", recorded=landing(url_pattern="/list")),))
    assert result.status == "escalated"
    verdict = events.of(VerdictReached)[0].verdict
    assert verdict.kind == "changed_unexpectedly"
    assert verdict.reason == "the step reached /confirm instead of /list"
    # a reversible step: rolled back to its checkpoint (the list page) before each retry
    assert [e.how for e in events.of(Recovered)] == ["rollback", "rollback"]
    assert all(e.ok for e in events.of(Recovered)) and fake.visits.count("/") == 3


def test_the_same_step_passes_where_it_was_recorded_to_land_and_old_flows_verify_as_before() -> None:
    ok, _ = execute(delete_site(), (click("s1", "Delete", expect="navigation", recorded=landing(url_pattern="/confirm")),))
    assert ok.status == "passed"
    old, _ = execute(delete_site(), (click("s1", "Delete", expect="navigation"),))
    assert old.status == "passed"


def test_the_same_url_with_another_main_heading_is_another_page() -> None:
    fake = FakeDriver(pages={"/": [button("go", "Go")], "/x": [button("b", "B")]},
                      reactions={("/", "go", "click"): navigate("/x")}, scripts={HEADING_JS: "Confirm deletion"})
    result, events = execute(fake, (click("s1", "Go", recorded=landing(url_pattern="/x", heading="My requests")),))
    assert result.status == "escalated"
    assert "headed 'Confirm deletion' instead of 'My requests'" in events.of(VerdictReached)[0].verdict.reason


def test_a_fill_that_went_into_a_popup_is_not_as_expected() -> None:
    """Kind 13: a popup opens on focus and takes the typing; the target stays empty."""
    popup = open_modal("Autofill", [{"id": "pf", "role": "textbox", "label": "Search"}])
    fake = FakeDriver(pages={"/": [{"id": "name", "role": "textbox", "label": "Name"}]},
                      reactions={("/", "name", "input"): [popup, set_value(element="pf")]})
    step = Step(id="s1", action=Action("input", "Ada"),
                target=ElementDescriptor(tag="input", role="textbox", name="Name", label="Name"))
    result, events = execute(fake, (step,))
    assert result.status == "escalated"
    verdicts = [e.verdict for e in events.of(VerdictReached)]
    assert verdicts and all(v.kind == "changed_unexpectedly" for v in verdicts)
    assert "the field 'Name' is empty after the fill" in verdicts[0].reason


def test_a_fill_that_went_into_another_field_is_not_as_expected() -> None:
    """Kind 13: focus stolen by a search box always on the page - its value changed, the target's did not."""
    fake = FakeDriver(pages={"/": [{"id": "name", "role": "textbox", "label": "Name"},
                                   {"id": "q", "role": "textbox", "label": "Quick search"}]},
                      reactions={("/", "name", "input"): set_value(element="q")})
    step = Step(id="s1", action=Action("input", "Ada"),
                target=ElementDescriptor(tag="input", role="textbox", name="Name", label="Name"))
    result, events = execute(fake, (step,))
    assert result.status == "escalated" and len(fake.actions) == 3
    verdict = events.of(VerdictReached)[0].verdict
    assert verdict.kind == "changed_unexpectedly" and verdict.observed[:1] == ("value",)
    assert verdict.reason == "the field 'Name' is empty after the fill: the page undid it"


def test_a_double_click_that_changed_the_page_but_opened_no_editor_fails() -> None:
    """Kind 15 (verification half): "the page changed" is not evidence of the recorded edit."""
    fake = FakeDriver(pages={"/": [button("t", "Dune"), button("a", "Herbert")]},
                      reactions={("/", "t", "dblclick"): open_modal("Author", [{"id": "ae", "role": "textbox",
                                                                                  "label": "Author"}])})
    step = Step(id="s1", action=Action("dblclick"), target=ElementDescriptor(tag="button", role="button",
                                                                            name="Dune", text="Dune"),
                recorded=landing(field_appeared="Title"))
    result, events = execute(fake, (step,))
    assert result.status == "escalated"
    assert "the editor 'Title' did not appear (appeared: Author)" in events.of(VerdictReached)[0].verdict.reason


def irreversible_site() -> FakeDriver:
    return FakeDriver(pages={"/": [button("save", "Save"), button("submit", "Submit"), button("undo", "Undo")]},
                      reactions={("/", "save", "click"): set_value(element="undo", value="saved"),
                                 ("/", "submit", "click"): nothing(), ("/", "undo", "click"): nothing()})


UNDO = (Step(id="c1", action=Action("click"), selector="#undo"),)


def test_side_effects_list_only_irreversible_steps_whose_effect_was_verified() -> None:
    fake = irreversible_site()
    result, events = execute(fake, (click("s1", "Save", reversible=False, reversible_declared=True),
                                    click("s2", "Submit", reversible=False, reversible_declared=True,
                                          compensations=UNDO)))
    (esc,) = events.of(EscalationRaised)
    assert esc.side_effects == ("step 1 'click Save' wrote data",)  # Submit acted but was not verified
    assert esc.answers == ("compensate", "skip", "stop", "take_over")
    assert [a.element for a in fake.actions] == ["save", "submit"]  # never retried, compensation not run
    assert result.status == "escalated"


def test_an_irreversible_steps_compensation_runs_only_when_a_person_approves() -> None:
    class Approve(HeadlessControl):
        def escalate(self, event: Escalation) -> Answer:
            return Answer("compensate")

    fake = irreversible_site()
    result, events = execute(fake, (click("s2", "Submit", reversible=False, compensations=UNDO),), control=Approve())
    assert [a.element for a in fake.actions] == ["submit", "undo"]
    (rec,) = events.of(Recovered)
    assert (rec.how, rec.ok) == ("compensate", True)
    assert result.status == "escalated" and "compensated by approval" in result.error


def test_a_reversible_steps_compensation_runs_on_rollback_before_the_retry() -> None:
    fake = irreversible_site()
    result, events = execute(fake, (click("s2", "Submit", compensations=UNDO),))
    assert [a.element for a in fake.actions] == ["submit", "undo", "submit", "undo", "submit"]
    assert [e.how for e in events.of(Recovered)] == ["rollback", "rollback"]
    assert result.status == "escalated"
