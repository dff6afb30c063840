"""Reversibility inferred from the requests an action caused (S6, issue 9 item 4), in real Chromium.

The page (``fixtures/verify/noise.html``) does what real pages do: a
``navigator.sendBeacon`` and a ``keepalive`` telemetry fetch on every click
and a POST poll every 500 ms.  None of that is the user's data: its
reversible steps stay retryable (a lazy "Load more" needs a second click and
gets it), while a real write (``fetch POST /api/save``) makes its undeclared
step irreversible - listed among the data already written with its request,
and, when its verification fails, never retried.
"""
from __future__ import annotations

from typing import Any

import pytest

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings
from core.engine.events import EscalationRaised
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


def by(selector: str, kind: str = "click", value: str = "", **kw: Any) -> Step:
    return Step(id=selector.strip("#"), name=f"{kind} {selector}", action=Action(kind, value),  # type: ignore[arg-type]
                selector=selector, **kw)


def run(driver: PlaywrightDriver, steps: tuple[Step, ...]) -> tuple[Any, Events]:
    events = Events()
    ex = FlowExecutor(driver, emit=events, screenshots=False,
                      settings=EngineSettings(waits=WaitSettings(retries=2, retry_delay_ms=300)))
    return ex.run_flow(Flow("board", "/noise.html", steps), params={}), events


MISSING = Step(id="end", name="Open the missing report", action=Action("click"),
               target=ElementDescriptor(tag="button", role="button", name="Quarterly report", text="Quarterly report"))


def test_beacons_keepalive_and_polling_do_not_make_steps_irreversible(driver, site) -> None:
    steps = (by("#tab-details", expect="content"), by("#archived", "check"), by("#more", expect="content"),
             by("#note", "input", "ship it"), by("#save", expect="content"), MISSING)
    result, events = run(driver, steps)
    outcomes = {o.step_id: o for o in result.steps}
    # the noise really happened, around every step
    assert site.posts["/collect"] >= 4 and site.posts["/telemetry"] >= 4 and site.posts["/poll"] >= 4
    # the lazy loader ignored the first click: the reversible step was retried (rolled back first) and passed
    assert outcomes["more"].status == "passed" and outcomes["more"].attempts == 2
    assert all(outcomes[s].status == "passed" for s in ("tab-details", "archived", "note", "save"))
    assert site.posts["/api/save"] == 1
    # the run's "data already written" is true: only the real write, with its request
    (esc,) = events.of(EscalationRaised)
    assert esc.side_effects == ("step 5 'click #save' wrote data (POST /api/save 200)",)


def test_an_undeclared_step_that_wrote_and_failed_verification_is_never_retried(driver, site) -> None:
    result, events = run(driver, (by("#tab-details", expect="content"), by("#publish", expect="content")))
    (esc,) = events.of(EscalationRaised)
    assert esc.kind == "irreversible" and "retry" not in esc.answers
    assert result.steps[-1].attempts == 1 and site.posts["/api/publish"] == 1
    assert esc.side_effects == ()  # the publish was not verified: not listed as done


def test_a_step_declared_reversible_keeps_its_retries_whatever_it_sends(driver, site) -> None:
    result, events = run(driver, (by("#publish", expect="content", reversible=True, reversible_declared=True),))
    assert result.steps[-1].attempts == 3 and site.posts["/api/publish"] == 3
    assert events.of(EscalationRaised)[0].kind != "irreversible"
