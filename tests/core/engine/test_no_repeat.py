"""Never repeat an effect (issue 19) in the step pipeline, on the scripted FakeDriver - no browser, no Qt.

The fake's page keeps a storage the reactions write (as a page's localStorage); the effect check reads
it through the same probe interface as a real page.  The browser runs are in
``tests/e2e/test_never_repeat_effect.py``.
"""
from __future__ import annotations

from typing import Any

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, RunResult, Step, WaitSettings
from core.engine.events import EscalationRaised
from core.engine.executor import FlowExecutor
from core.perception.fake import FakeDriver, nothing
from event_log import EventLog


def button(element_id: str, text: str) -> dict[str, Any]:
    return {"id": element_id, "role": "button", "text": text}


def click(step_id: str, label: str, **kw: Any) -> Step:
    return Step(id=step_id, action=Action("click"),
                target=ElementDescriptor(tag="button", role="button", name=label, text=label), **kw)


class add_item:  # noqa: N801 - reads as a verb in scripts
    """Store one more item and, unless ``late``, show it at once; ``late``: shown from the next look on."""

    def __init__(self, *, late: bool = False) -> None:
        self.late = late

    def __call__(self, d: FakeDriver, el: dict | None, value: str) -> None:
        n = int(d.storage.get("count", "0")) + 1
        d.storage["count"] = str(n)
        if not self.late:
            d.elements.append(d.make_element({"id": f"item{n}", "role": "listitem", "text": f"Item {n}"},
                                             len(d.elements)))
        d.mutations += 1


class LateList(FakeDriver):
    """Shows the stored items only from the second observation after they were stored (a slow render)."""

    looks = 0

    def observe(self, *, screenshot: bool = True, neighbours: bool = True):  # type: ignore[override]
        shown = sum(1 for e in self.elements if e["id"].startswith("item"))
        if int(self.storage.get("count", "0")) > shown:
            self.looks += 1
            if self.looks >= 2:
                self.elements.append(self.make_element({"id": f"item{shown + 1}", "role": "listitem",
                                                        "text": f"Item {shown + 1}"}, len(self.elements)))
        return super().observe(screenshot=screenshot, neighbours=neighbours)


def execute(fake: FakeDriver, steps: tuple[Step, ...]) -> tuple[RunResult, EventLog]:
    events = EventLog()
    ex = FlowExecutor(fake, emit=events, screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=2, retry_delay_ms=0)))
    return ex.run_flow(Flow("f", "/", steps), params={}), events


def test_an_add_whose_verification_fails_is_done_once_and_escalated_as_irreversible() -> None:
    fake = FakeDriver(pages={"/": [button("add", "Add")]}, reactions={("/", "add", "click"): add_item()})
    result, events = execute(fake, (click("s1", "Add", expect="overlay_open"),))
    assert [a.element for a in fake.actions] == ["add"] and fake.storage["count"] == "1"
    (esc,) = events.of(EscalationRaised)
    assert esc.kind == "irreversible" and "retry" not in esc.answers
    assert "not done again" in esc.reason and "localStorage 'count' written" in esc.reason
    assert result.status == "escalated" and result.steps[0].attempts == 1


def test_a_late_effect_is_verified_again_without_acting_and_passes() -> None:
    fake = LateList(pages={"/": [button("add", "Add")]}, reactions={("/", "add", "click"): add_item(late=True)})
    result, events = execute(fake, (click("s1", "Add", expect="elements"),))
    assert result.status == "passed", result.error
    assert [a.element for a in fake.actions] == ["add"] and fake.storage["count"] == "1"
    assert not events.of(EscalationRaised)


def test_an_attempt_without_effect_is_retried_as_before() -> None:
    fake = FakeDriver(pages={"/": [button("add", "Add")]}, reactions={("/", "add", "click"): nothing()})
    result, _ = execute(fake, (click("s1", "Add", expect="elements"),))
    assert [a.element for a in fake.actions] == ["add", "add", "add"]
    assert result.status == "escalated"


def test_a_step_declared_reversible_keeps_its_retries_whatever_it_stores() -> None:
    fake = FakeDriver(pages={"/": [button("add", "Add")]}, reactions={("/", "add", "click"): add_item()})
    result, _ = execute(fake, (click("s1", "Add", expect="overlay_open", reversible=True,
                                     reversible_declared=True),))
    assert len(fake.actions) == 3 and fake.storage["count"] == "3"


def test_a_driver_that_cannot_tell_never_repeats_an_add_but_retries_other_clicks() -> None:
    class Blind(FakeDriver):
        def effect_snapshot(self) -> Any:
            raise RuntimeError("no page state")

    for label, times in (("Add", 1), ("Show details", 3)):
        fake = Blind(pages={"/": [button("b", label)]}, reactions={("/", "b", "click"): nothing()})
        execute(fake, (click("s1", label, expect="elements"),))
        assert len(fake.actions) == times, label
