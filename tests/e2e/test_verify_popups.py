"""Fills the page undoes (failure kind 13) and popups in the way (failure kind 14), in real Chromium.

Pages imitate real markup: an address-book popup that takes the focus
when a field is first focused, a validator that clears a field, a
Bootstrap 5 modal that opens on focus and disables the form behind it
(with its own "Save" button - the disabled twin of the form's), a native
``<dialog>`` asking for a rating, and a cookie consent wall without a
dialog role.  Recovery closes each by a control whose meaning is close (or
the dialog's own declared cancel) or Escape, never by one of the options it
offers, and goes on - the consent wall, a choice, escalates; the server's count of writes
is the ground truth.
"""
from __future__ import annotations

from typing import Any

import pytest

from core.domain import (
    Action, AfterState, ElementDescriptor, EngineSettings, Flow, Step, StepEvidence, WaitSettings,
)
from core.engine.events import Recovered, VerdictReached
from core.engine.executor import FlowExecutor
from core.perception.driver import PlaywrightDriver
from verify_site import Events, VerifySite
from browser_fixtures import open_driver

pytestmark = pytest.mark.browser


@pytest.fixture
def site():
    s = VerifySite().start()
    yield s
    s.stop()


@pytest.fixture
def driver(site):
    with open_driver(site.base_url) as d:
        yield d


def run(driver: PlaywrightDriver, start: str, steps: tuple[Step, ...]) -> tuple[Any, Events]:
    events = Events()
    ex = FlowExecutor(driver, emit=events, screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=2, retry_delay_ms=300)))
    return ex.run_flow(Flow("f", start, steps), params={}), events


def fill(step_id: str, label: str, value: str, **kw: Any) -> Step:
    return Step(id=step_id, name=f"Fill {label}", action=Action("input", value),
                target=ElementDescriptor(tag="input", role="textbox", name=label, label=label, id=label.lower()), **kw)


def button(step_id: str, name: str, *, container: str = "", **kw: Any) -> Step:
    return Step(id=step_id, name=f"Click {name}", action=Action("click"),
                target=ElementDescriptor(tag="button", role="button", name=name, text=name, container=container), **kw)


def test_a_fill_a_focus_stealing_popup_took_is_caught_the_popup_closed_and_the_fill_done_again(driver, site) -> None:
    result, events = run(driver, "/fill.html", (fill("s1", "Name", "Ada Lovelace"),))
    (first, *rest) = [e.verdict for e in events.of(VerdictReached)]
    assert first.kind == "changed_unexpectedly"
    assert "the field 'Name' is empty after the fill" in first.reason
    (rb,) = events.of(Recovered)
    assert rb.how == "rollback" and rb.ok and "by 'Close'" in rb.detail
    assert result.status == "passed" and result.steps[0].attempts == 2
    assert driver.page.input_value("#name") == "Ada Lovelace"
    assert driver.page.is_hidden("#autofill") and driver.page.input_value("#addr") == ""


def test_a_fill_a_script_clears_is_never_as_expected(driver, site) -> None:
    result, events = run(driver, "/fill.html", (fill("s1", "City", "Paris"),))
    verdicts = [e.verdict for e in events.of(VerdictReached)]
    assert result.status == "escalated" and len(verdicts) == 3
    assert all(v.kind != "as_expected" for v in verdicts)
    assert "the field 'City' is empty after the fill" in verdicts[-1].reason


def test_a_modal_that_opens_on_focus_is_dismissed_and_its_same_named_save_never_pressed(driver, site) -> None:
    """Bootstrap modal: 'Save' inside it (enabled) and the form's 'Save' disabled behind it."""
    steps = (fill("s1", "Email", "ada@example.test"), button("s2", "Save", container="Settings", reversible=False))
    result, events = run(driver, "/settings.html", steps)
    assert result.status == "passed", result.error
    assert site.posts["/api/prefs"] == 0  # the popup's confirming Save: never
    assert site.posts["/api/save"] == 1  # the form's Save: once
    dismissed = [e for e in events.of(Recovered) if e.ok]
    assert dismissed and all("Save" not in e.detail.split("by ")[-1] for e in dismissed)
    assert driver.page.text_content("#status") == "Settings saved"


def test_a_recorded_after_state_without_dialog_dismisses_the_modal_at_once(driver, site) -> None:
    s1 = fill("s1", "Email", "ada@example.test", recorded=StepEvidence(after=AfterState(dialog=False)))
    result, events = run(driver, "/settings.html", (s1, button("s2", "Save", container="Settings")))
    assert result.status == "passed" and result.steps[0].attempts == 1 and result.steps[1].attempts == 1
    (rec,) = events.of(Recovered)
    assert rec.how == "dismiss" and rec.ok and "'Enable notifications?'" in rec.detail
    assert site.posts["/api/prefs"] == 0 and site.posts["/api/save"] == 1


@pytest.mark.parametrize("query, how", [("", "by 'Cancel'"), ("?nocancel", "Escape")])
def test_a_native_dialog_is_closed_by_cancel_or_escape_never_rate_now(driver, site, query: str, how: str) -> None:
    steps = (button("s1", "Next"), button("s2", "Finish", reversible=False))
    result, events = run(driver, "/wizard.html" + query, steps)
    assert result.status == "passed", result.error
    assert site.posts["/api/rate"] == 0 and site.posts["/api/finish"] == 1
    assert any(how in e.detail for e in events.of(Recovered) if e.ok)


def test_a_cookie_wall_is_never_answered_by_the_engine_the_step_escalates(driver, site) -> None:
    """Accept all / Reject all is the person's choice (issue 25 item 4): neither is pressed, the run escalates."""
    steps = (button("s1", "Next"), button("s2", "Finish", reversible=False))
    result, events = run(driver, "/wizard.html?cookies", steps)
    assert result.status == "escalated"
    assert "asks for a choice" in result.error and "'Accept all'" in result.error
    assert site.posts["/api/accept"] == 0 and site.posts["/api/finish"] == 0
    assert not any("by 'Reject all'" in e.detail for e in events.of(Recovered))
