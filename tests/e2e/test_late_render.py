"""A target rendered some time after the page loaded, with no loading indicator: the engine waits for the page
to render more (up to Playwright's ``expect`` timeout, 5 s) as the script's auto-waiting locator does, instead of
abstaining on its first look; a target that never comes is still an abstention, without any action.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.domain import Action, Assertion, BrowserSettings, ElementDescriptor, Flow, Step
from core.engine.events import ActionPerformed
from core.engine.executor import FlowExecutor
from core.perception.driver import PlaywrightDriver
from core.sites.server import StaticSite

FIXTURES = Path(__file__).parent / "fixtures" / "late"

pytestmark = pytest.mark.browser

CONTINUE = ElementDescriptor(tag="button", role="button", name="Continue", text="Continue", type="button")


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


def run(site: StaticSite, start: str) -> tuple[Any, list[Any]]:
    driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    driver.open()
    events: list[Any] = []
    flow = Flow("late", start, (Step("go", Action("click"), target=CONTINUE,
                                     assertions=(Assertion("text_appears", "Done"),)),))
    try:
        result = FlowExecutor(driver, emit=events.append, screenshots=False).run_flow(flow, params={})
    finally:
        driver.close()
    return result, events


def test_a_button_rendered_three_seconds_after_load_is_waited_for_and_clicked_once(site) -> None:
    result, events = run(site, "/late.html?ms=3000")
    assert result.status == "passed", result.error
    outcome = result.steps[0]
    assert outcome.attempts == 1  # found by waiting, not by a failed attempt and a retry
    assert outcome.resolution is not None and outcome.resolution.strategy == "exact"
    assert len([e for e in events if isinstance(e, ActionPerformed)]) == 1


def test_a_button_that_never_comes_is_an_abstention_and_nothing_is_done(site) -> None:
    result, events = run(site, "/late.html?ms=600000")
    assert result.status != "passed"
    assert result.steps[0].status in ("escalated", "failed") and "abstained" in (result.steps[0].error or "")
    assert not [e for e in events if isinstance(e, ActionPerformed)]
