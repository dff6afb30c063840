"""The observe phase waits while the page is still loading (failure kind 4) - pure logic on a FakeDriver.

A click that starts a load (``set_page(loading=True)``) leaves the next step's first observation with
loading evidence: the phase waits (``wait_loaded``) and observes again before resolving; a page that never
loads escalates with kind ``page`` and "still loading after N ms", and its step acts on nothing.
"""
from __future__ import annotations

from typing import Any

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings
from core.engine.events import ActionPerformed, EscalationRaised, ObservationMade
from core.engine.executor import FlowExecutor
from core.perception.fake import FakeDriver, change_text, set_page


def click(step_id: str, label: str) -> Step:
    return Step(step_id, Action("click"), target=ElementDescriptor(tag="button", role="button", name=label, text=label))


def run(fake: FakeDriver) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    ex = FlowExecutor(fake, emit=events.append, screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=0, retry_delay_ms=0, loading_max_ms=700)))
    return ex.run_flow(Flow("f", "/", (click("s1", "Refresh"), click("s2", "Edit"))), params={}), events


def page() -> FakeDriver:
    return FakeDriver(pages={"/": [{"id": "r", "role": "button", "text": "Refresh"},
                                   {"id": "e", "role": "button", "text": "Edit"}]},
                      reactions={("/", "r", "click"): set_page(loading=True, text="Loading..."),
                                 ("/", "e", "click"): change_text("editing")})


def test_a_step_that_meets_a_loading_page_waits_and_observes_again() -> None:
    fake = page()
    result, events = run(fake)
    assert result.status == "passed", result.error
    assert fake.loading_waits == 1
    befores = [e.observation for e in events if isinstance(e, ObservationMade) and e.index == 1 and e.when == "before"]
    assert [o.loading for o in befores] == [("fake loading indicator",), ()]


def test_a_page_that_never_loads_escalates_and_acts_on_nothing() -> None:
    fake = page()
    fake.loaded_after_waits = None
    result, events = run(fake)
    assert (result.status, result.error_kind) == ("escalated", "escalated")
    assert "still loading after 700 ms: fake loading indicator" in result.error
    assert [e.kind for e in events if isinstance(e, EscalationRaised)] == ["page"]
    assert [(e.index, e.kind) for e in events if isinstance(e, ActionPerformed)] == [(0, "click")]
    assert [o.status for o in result.steps] == ["passed", "escalated"]
