"""Failure kind 4 in real Chromium: a page still loading (a spinner, skeleton rows, ``aria-busy``).

The page imitates Bootstrap 5's placeholder markup: grey ``.placeholder`` boxes in ``tr.skeleton-row``
rows of a ``tbody[aria-busy=true]``, placeholder buttons that even read "Edit", and a
``.spinner-border``.  The engine waits (bounded by ``waits.loading_max_ms``) before resolving, never
takes a placeholder as a candidate, and escalates with "still loading after N ms" and the evidence
when the data never arrives.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.domain import (
    Action, Assertion, BrowserSettings, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings,
)
from core.engine.events import ActionPerformed, EscalationRaised, ObservationMade
from core.engine.executor import FlowExecutor
from core.perception.driver import PlaywrightDriver
from core.sites.server import StaticSite

FIXTURES = Path(__file__).parent / "fixtures" / "loading"

pytestmark = pytest.mark.browser

GRACE = ElementDescriptor(tag="button", role="button", name="Edit Grace Hopper", text="Edit", type="button",
                          neighbours=("Grace Hopper",))


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


def run(site: StaticSite, start: str, loading_max_ms: int) -> tuple[Any, list[Any]]:
    driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    driver.open()
    events: list[Any] = []
    flow = Flow("edit", start, (Step("edit", Action("click"), target=GRACE,
                                     assertions=(Assertion("text_appears", "Editing Grace Hopper"),)),))
    try:
        ex = FlowExecutor(driver, emit=events.append, screenshots=False,
                          settings=EngineSettings(waits=WaitSettings(retry_delay_ms=0, loading_max_ms=loading_max_ms)))
        result = ex.run_flow(flow, params={})
    finally:
        driver.close()
    return result, events


def test_an_observation_of_a_loading_page_says_why_and_lists_no_placeholder(site) -> None:
    driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    driver.open()
    try:
        driver.page.goto(site.base_url + "/users.html?never", wait_until="load")
        obs = driver.observe(screenshot=False)
    finally:
        driver.close()
    assert 'aria-busy="true" on tbody#rows' in obs.loading
    assert 'class "skeleton-row" on tr' in obs.loading
    assert 'class "spinner-border" on div#spin' in obs.loading
    assert obs.loading[-1].startswith("+") and obs.loading[-1].endswith("more")  # 3 rows of boxes and buttons
    assert obs.signature.loading
    # the three placeholder buttons read "Edit", are enabled and shown: still not candidates
    assert not [c for c in obs.candidates if c.descriptor.role == "button"]


@pytest.mark.parametrize("loading_max_ms", [30000, 1200])
def test_the_run_waits_for_the_rows_and_clicks_the_right_one(site, loading_max_ms: int) -> None:
    """Rows arrive 1.5 s after load.  With 30 s the after-load settle waits them out; with 1.2 s that
    settle gives up first and the observe phase waits again (its own 1.2 s) before resolving."""
    result, events = run(site, "/users.html?ms=1500", loading_max_ms)
    assert result.status == "passed", result.error
    res = result.steps[0].resolution
    assert res is not None and res.strategy == "exact"
    made = [e for e in events if isinstance(e, ObservationMade)]
    assert made and all("placeholder" not in c.descriptor.classes for e in made for c in e.observation.candidates)
    before = [e.observation for e in made if e.when == "before"]
    assert not before[-1].loading
    names = {c.ref: c.descriptor.name for c in before[-1].candidates}
    assert names[res.ref] == "Edit Grace Hopper"


def test_a_page_that_never_finishes_loading_escalates_and_clicks_nothing(site) -> None:
    result, events = run(site, "/users.html?never", 800)
    assert (result.status, result.error_kind) == ("escalated", "escalated"), result.error
    assert "still loading after 800 ms" in result.error
    assert 'aria-busy="true" on tbody#rows' in result.error
    assert [e.kind for e in events if isinstance(e, EscalationRaised)] == ["page"]
    assert not [e for e in events if isinstance(e, ActionPerformed)]


def test_select_hint_texts_and_number_spinners_are_not_loading(site) -> None:
    """react-select's and Select2's "placeholder" hint texts and jQuery UI's "ui-spinner" number field are
    no loading indicators: the page is not loading and their controls are candidates."""
    driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    driver.open()
    try:
        driver.goto("/select_hints.html")
        obs = driver.observe(screenshot=False)
    finally:
        driver.close()
    assert obs.loading == ()
    # (case-folded: the page library's domCase gives "Country" the case of the hint text "Choose a country")
    assert {"carrier", "country", "parcels", "continue"} <= {c.descriptor.name.lower() for c in obs.candidates}
