"""A recording listener attaches to a page it does not own: the engine's own page (a takeover) or a bare one.

The engine's page is a :class:`PlaywrightDriver` on the widgets fixture (a
checkout with a same-origin iframe, loaded before the listener attaches, and
an open shadow root).  The user's actions are Playwright input (mouse,
keyboard, locator clicks), as a human's in the headed browser would be.
After a detach the page is left as it was found, a second listener records
again on the same page, and the driver's own observe / perform still work.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from core.domain import Action
from core.perception.driver import PlaywrightDriver
from core.domain import BrowserSettings
from core.record.events import StepRecorded
from core.record.listener import RecordingListener
from core.sites.server import StaticSite

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).with_name("fixtures") / "widgets"


@pytest.fixture
def site():
    s = StaticSite(FIXTURE)
    s.start()
    yield s
    s.stop()


@pytest.fixture
def driver(site):
    d = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    d.open()
    try:
        d.goto("/index.html")
        yield d
    finally:
        d.close()


def _pump(listener: RecordingListener, seconds: float) -> None:
    """Let the listener take events for ``seconds`` (a user's pause; typing commits after 0.8 s idle)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert listener.pump(50)


def _steps(recording):
    return [(s.action.kind, s.target.role, s.target.name, s.action.value, s.target.frame) for s in recording.steps]


def _listen(driver: PlaywrightDriver, folder: Path, events: list) -> RecordingListener:
    listener = RecordingListener(driver.page, driver=driver, flow_name="takeover", base_url=driver.base_url,
                                 spool=folder, on_event=events.append)
    listener.attach()
    return listener


def test_a_listener_on_the_engine_page_records_detaches_and_attaches_again(driver, tmp_path):
    page = driver.page
    before = driver.observe(screenshot=False)  # the engine observed the page before the human took over
    assert any(c.descriptor.name == "Place order" for c in before.candidates)
    events: list = []
    first = _listen(driver, tmp_path / "first", events)
    page.get_by_label("Order number").click()
    page.keyboard.type("A-1042")
    _pump(first, 1.3)
    page.frame_locator("#basket").get_by_role("button", name="Add to basket").click()  # a frame loaded before attach
    _pump(first, 0.8)
    box = page.get_by_role("button", name="Place order").bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    _pump(first, 0.8)
    got = first.detach()
    assert _steps(got) == [
        ("input", "textbox", "Order number", "A-1042", ""),
        ("click", "button", "Add to basket", "", "basket"),
        ("click", "button", "Place order", "", ""),
    ], _steps(got)
    assert [e.step.id for e in events if isinstance(e, StepRecorded)] == ["s1", "s2", "s3"]
    assert set(got.crops) == {"s1", "s2", "s3"} and got.steps[2].target.crop == "takeover.crops/s3.png"
    assert got.steps[2].recorded is not None and got.steps[2].recorded.state_before
    assert got.start_url == page.url
    assert first.detach() is got  # a second detach changes nothing
    # detached: the binding is gone and the in-page listener is inert in every frame
    for frame in page.frames:
        assert frame.evaluate("typeof window.__steadyhandRecord") == "undefined"
        assert frame.evaluate("window.__steadyhandRec.active()") is False
    page.get_by_role("button", name="Find address").click()  # nobody listens: this is no one's step

    second = _listen(driver, tmp_path / "second", events)
    page.get_by_label("Gift wrap").check()  # inside the shadow root
    _pump(second, 0.8)
    page.get_by_label("Order number").fill("B-7")
    _pump(second, 1.0)
    page.get_by_role("button", name="Place order").click()
    _pump(second, 0.8)
    again = second.detach()
    assert _steps(again) == [
        ("check", "checkbox", "Gift wrap", "", ""),
        ("input", "textbox", "Order number", "B-7", ""),
        ("click", "button", "Place order", "", ""),
    ], _steps(again)
    with pytest.raises(RuntimeError, match="attaches once"):
        second.attach()

    # the engine goes on: its page library is its own, its observe and perform work
    assert page.evaluate("window.__steadyhand.version") == 1
    obs = driver.observe()
    by_name = {c.descriptor.name: c.ref for c in obs.candidates}
    driver.perform(Action("input"), by_name["Order number"], "C-99")
    driver.perform(Action("click"), by_name["Place order"], "")
    driver.wait_settled()
    assert page.locator("#result").inner_text().startswith("Order C-99 placed: 1 item(s)")


def test_a_listener_records_a_bare_playwright_page_it_was_given_after_load(site, tmp_path):
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(site.base_url + "/index.html")  # no page library in it: the listener brings its own
            listener = RecordingListener(context, flow_name="bare", base_url=site.base_url, spool=tmp_path / "j",
                                         secrets={"order": "SECRET-1"})
            listener.attach()
            page.get_by_label("Order number").fill("SECRET-1")
            _pump(listener, 1.0)
            page.get_by_role("button", name="Place order").click()
            _pump(listener, 2.5)  # past the grace in which a load is the effect of the click
            page.goto(site.base_url + "/more.html")  # the address bar: a step of its own
            _pump(listener, 1.0)
            got = listener.detach()
        finally:
            browser.close()
    assert [(s.action.kind, s.target.name, s.action.value) for s in got.steps] == [
        ("input", "Order number", "{order}"),
        ("click", "Place order", ""),
        ("navigate", "", "/more.html"),
    ]
    assert "SECRET-1" not in (tmp_path / "j" / "steps.jsonl").read_text(encoding="utf-8")
