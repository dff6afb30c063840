"""Pages whose own scripts break what the in-page library relies on, in real Chromium (issue 9, item 6).

Each page imitates third-party markup gone wrong: an old selector polyfill whose ``querySelectorAll``
answers a non-iterable array-like and that wipes unknown globals (so the library is installed again,
late, from a fresh iframe realm), Prototype-era array extensions, a layout polyfill answering zero
rectangles, a replaced ``JSON`` and ``Object.keys``.  The library takes pristine built-ins at injection
and the run passes.  Where nothing can be done - a broken method locked in place (non-configurable),
a script that busy-loops the main thread - the run escalates with a named error that carries the
page's own error text; it never hangs.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.domain import (
    Action, Assertion, BrowserSettings, ElementDescriptor, EngineSettings, Flow, Step, WaitSettings,
)
from core.engine.events import EscalationRaised
from core.engine.executor import FlowExecutor
from core.perception.driver import PageScriptError, PageUnresponsiveError, PlaywrightDriver
from core.sites.server import StaticSite

FIXTURES = Path(__file__).parent / "fixtures" / "hostile"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


def profile_flow(page: str) -> Flow:
    """Type a nickname by its label, press Save by its name, and check the page's answer."""
    nick = ElementDescriptor(tag="input", role="textbox", name="Nickname", label="Nickname", type="text",
                             name_attr="nick", id="nick")
    save = ElementDescriptor(tag="button", role="button", name="Save", text="Save", type="submit")
    return Flow("profile", f"/{page}", (
        Step("nick", Action("input", value="Ada"), target=nick),
        Step("save", Action("click"), target=save, assertions=(Assertion("text_appears", "Saved: Ada"),)),
    ))


def run(site: StaticSite, flow: Flow, *, timeout_ms: int = 5000) -> tuple[Any, list[Any]]:
    driver = PlaywrightDriver(BrowserSettings(action_timeout_ms=timeout_ms), base_url=site.base_url, headless=True)
    driver.open()
    events: list[Any] = []
    try:
        ex = FlowExecutor(driver, emit=events.append, screenshots=True,
                          settings=EngineSettings(waits=WaitSettings(retry_delay_ms=0)))
        result = ex.run_flow(flow, params={})
    finally:
        driver.close()
    return result, events


@pytest.mark.parametrize("page", ["qsa_not_iterable.html", "array_overwritten.html", "gbcr_patched.html",
                                  "json_replaced.html"])
def test_a_page_that_overrides_built_ins_is_observed_and_acted_on(site, page: str) -> None:
    result, events = run(site, profile_flow(page))
    assert result.status == "passed", result.error
    assert [o.status for o in result.steps] == ["passed", "passed"]
    assert [o.resolution.strategy for o in result.steps if o.resolution] == ["exact", "exact"]
    assert not [e for e in events if isinstance(e, EscalationRaised)]


def test_the_page_keeps_its_own_overrides_after_an_observation(site) -> None:
    driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    driver.open()
    try:
        driver.goto("/array_overwritten.html")
        obs = driver.observe(screenshot=False)
        assert {c.descriptor.name for c in obs.candidates} >= {"Nickname", "Save", "Help"}
        # the page's own (broken) methods are back in place once the library returns
        assert driver.page.evaluate("() => [1, 2].join('-')") == "[object Array]"
        assert driver.page.evaluate("() => typeof Array.prototype.toJSON") == "function"
    finally:
        driver.close()


def test_a_late_installed_library_names_the_same_elements(site) -> None:
    """The polyfill page deletes ``window.__steadyhand`` after load: the library is installed again from a
    fresh iframe realm, and its boxes are the real ones (not the polyfill's array-likes)."""
    driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    driver.open()
    try:
        driver.goto("/qsa_not_iterable.html")
        # wiped at DOMContentLoaded, installed again by the driver (the page had run its scripts by then)
        assert driver.page.evaluate("() => window.__steadyhand.pristine") == "iframe"
        obs = driver.observe(screenshot=False)
        save = next(c for c in obs.candidates if c.descriptor.name == "Save")
        assert save.descriptor.bbox is not None and save.descriptor.bbox.width > 10
        assert driver.page.evaluate("() => document.querySelectorAll('button') instanceof NodeList") is False
    finally:
        driver.close()


def test_a_broken_method_locked_in_place_escalates_with_the_pages_error(site) -> None:
    result, events = run(site, profile_flow("locked_polyfill.html"))
    assert (result.status, result.error_kind) == ("escalated", "escalated"), result.error
    assert "getBoundingClientRect is not supported here" in result.error
    assert "broke Steadyhand's page library" in result.error
    raised = [e for e in events if isinstance(e, EscalationRaised)]
    assert [e.kind for e in raised] == ["page"]
    assert result.steps[0].status == "escalated"


def test_a_page_that_busy_loops_its_main_thread_escalates_instead_of_hanging(site) -> None:
    gen = ElementDescriptor(tag="button", role="button", name="Generate", text="Generate", id="gen")
    dl = ElementDescriptor(tag="button", role="button", name="Download", text="Download", id="dl")
    flow = Flow("report", "/busy_loop.html", (Step("gen", Action("click"), target=gen),
                                              Step("dl", Action("click"), target=dl)))
    result, events = run(site, flow, timeout_ms=1500)
    assert (result.status, result.error_kind) == ("escalated", "escalated"), result.error
    assert "did not answer within 1500 ms" in result.error or "did not paint within 1500 ms" in result.error
    assert [o.status for o in result.steps] == ["escalated"]
    assert [e.kind for e in events if isinstance(e, EscalationRaised)] == ["page"]


def test_the_named_errors_are_page_errors() -> None:
    from core.engine.pipeline import fatal_kind

    for exc in (PageScriptError("x"), PageUnresponsiveError("y")):
        assert fatal_kind(exc)[0] == "browser"
