"""Names and roles come from the browser's accessibility tree; a recording replays exactly on its own page.

The fixture ``fixtures/names`` reproduces patterns of a third-party admin app:
a submit input followed by a "Delete" link, a search field whose label is
an image, a button shown in capitals by CSS, icon buttons inside a clickable
toolbar next to a countdown, and list labels edited on a delegated
double-click.  The demo flows are recorded too: the stored flow is played
with real input while a :class:`RecordingListener` records, then the
recording is replayed at once on the unchanged page.  Every step must
resolve at the EXACT level to the element it was recorded on, and every
recorded role and name must be what Playwright's ``get_by_role(role,
name=..., exact=True)`` finds once.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest

from core.domain import BrowserSettings, Step
from core.locate.chain import resolve
from core.perception.driver import PlaywrightDriver
from core.project import load_project
from core.project.params import bind
from core.record.listener import RecordingListener
from core.sites.demo import DEMO_PASSWORD, DemoSite
from core.sites.server import StaticSite

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).with_name("fixtures")
DEMO_FLOWS = ("login_lockout", "leave_request", "export_report", "sort_table")


def _pump(listener: RecordingListener, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert listener.pump(50)


def _frame_of(driver: PlaywrightDriver, ref: str) -> Any:
    return driver._frames[int(ref.split(":")[0])]


def _check_role_name(driver: PlaywrightDriver, ref: str, step: Step) -> None:
    """Playwright's own role query finds the recorded role and name once, and it is the resolved element."""
    t = step.target
    if not (t.role and t.name):
        return
    loc = _frame_of(driver, ref).get_by_role(t.role, name=t.name, exact=True)
    assert loc.count() == 1, (step.id, t.role, t.name, loc.count())
    same = loc.element_handle().evaluate("(e, h) => e === h", driver._handle(ref))
    assert same, (step.id, t.role, t.name)


def _play(driver: PlaywrightDriver, steps: Sequence[Step], params: Mapping[str, str], *,
          listener: RecordingListener | None = None, check_names: bool = False) -> list[str]:
    """Play ``steps`` on the driver's page by meaning alone (no selector); fail on any non-exact resolution.

    Returns the recorded xpath of the element each targeted step resolved to.
    """
    hit = []
    for step in steps:
        kind = step.action.kind
        value = bind(step.action.value, params)
        if kind == "navigate":
            driver.goto(value)
        elif kind in ("assert", "wait", "screenshot") or (kind == "press" and step.target.is_empty):
            if kind == "press":
                driver.perform(step.action, None, value)
        else:
            obs = driver.observe(screenshot=False)
            res = resolve(step.target, obs.candidates)
            assert res.strategy == "exact" and res.ref is not None, (step.id, step.name, res.strategy, res.reason)
            winner = next(c for c in obs.candidates if c.ref == res.ref)
            if step.target.xpath:
                assert winner.descriptor.xpath == step.target.xpath, (step.id, winner.descriptor.xpath)
            if check_names:
                _check_role_name(driver, res.ref, step)
            hit.append(winner.descriptor.xpath)
            driver.perform(step.action, res.ref, value)
        driver.wait_settled(long=True)
        if listener is not None:
            _pump(listener, 1.0)
    return hit


# --- the admin-app patterns ---------------------------------------------------------------

@pytest.fixture
def names_site():
    s = StaticSite(FIXTURES / "names")
    s.start()
    yield s
    s.stop()


@pytest.fixture
def driver(names_site):
    d = PlaywrightDriver(BrowserSettings(), base_url=names_site.base_url, headless=True)
    d.open()
    try:
        d.goto("/index.html")
        yield d
    finally:
        d.close()


def test_the_observer_names_elements_as_the_accessibility_tree_does(driver):
    obs = driver.observe(screenshot=False)
    by_name = {(c.descriptor.role, c.descriptor.name) for c in obs.candidates}
    assert ("button", "Save") in by_name and ("link", "Delete") in by_name  # not the next link's text
    assert ("textbox", "Search") in by_name  # the label's image alt, not the select beside it
    assert ("button", "Add book") in by_name and ("button", "ADD BOOK") not in by_name  # DOM case, not CSS
    assert ("button", "Pause timer") in by_name
    assert not any(c.descriptor.role == "toolbar" for c in obs.candidates)  # its icons are the targets
    assert not any("04:" in c.descriptor.name for c in obs.candidates)  # the countdown names nothing
    save = next(c.descriptor for c in obs.candidates if c.descriptor.name == "Save")
    assert save.label == "" and save.text == "Save"
    labels = [c.descriptor.text for c in obs.candidates if c.descriptor.tag == "label"]
    assert labels == ["Buy milk", "Walk the dog"]  # labels of no control are candidates (double-click targets)
    for c in obs.candidates:  # every name is Playwright's too
        d = c.descriptor
        if d.role and d.name:
            assert _frame_of(driver, c.ref).get_by_role(d.role, name=d.name, exact=True).count() == 1, d


def test_recorded_targets_are_the_elements_clicked_and_replay_exactly(driver, tmp_path):
    page = driver.page
    listener = RecordingListener(page, driver=driver, flow_name="admin", base_url=driver.base_url,
                                 spool=tmp_path / "spool")
    listener.attach()
    page.locator("#searchbar").click()
    page.keyboard.type("dune")
    _pump(listener, 1.2)
    page.get_by_role("button", name="Save").click()
    _pump(listener, 0.6)
    page.get_by_role("button", name="Add book").click()
    _pump(listener, 0.6)
    page.locator("[data-act=pause] rect").first.click()  # the icon's drawing inside the button
    _pump(listener, 0.6)
    page.locator("[data-act=refresh] svg").click(position={"x": 5, "y": 5})  # an icon with a title only
    _pump(listener, 0.6)
    page.get_by_text("Buy milk").dblclick()
    _pump(listener, 0.6)
    page.keyboard.type(" and eggs")
    page.keyboard.press("Enter")
    _pump(listener, 1.2)
    rec = listener.detach()
    got = [(s.action.kind, s.target.tag, s.target.role, s.target.name) for s in rec.steps]
    assert got[:6] == [
        ("input", "input", "textbox", "Search"),
        ("click", "input", "button", "Save"),
        ("click", "button", "button", "Add book"),
        ("click", "button", "button", "Pause timer"),
        ("click", "span", "", ""),
        ("dblclick", "label", "", ""),
    ], got
    assert rec.steps[4].target.title == "Refresh" and "04:" not in rec.steps[4].target.text
    assert rec.steps[5].target.text == "Buy milk"
    for s in rec.steps:
        assert "04:" not in s.target.name and "Delete" != s.target.name

    # at once, on the unchanged page: every step resolves exactly to the element it was recorded on
    driver.goto("/index.html")
    hit = _play(driver, [s for s in rec.steps], {}, check_names=True)
    assert hit[:6] == [s.target.xpath for s in rec.steps[:6]]
    assert "Renamed to Buy milk and eggs" in page.inner_text("#status")


# --- the demo flows ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_site():
    site = DemoSite()
    site.start()
    yield site
    site.close()


@pytest.mark.parametrize("flow_name", DEMO_FLOWS)
def test_each_demo_flow_recorded_replays_exactly_on_the_same_page(demo_site, flow_name, tmp_path):
    project = load_project(ROOT / "projects" / "demo")
    flow = project.flows[flow_name]
    params = {"user": "alice", "password": DEMO_PASSWORD, **{k: str(v) for k, v in project.settings.params.items()},
              **{k: str(v) for k, v in flow.params.items()}}
    demo_site.reset()
    driver = PlaywrightDriver(BrowserSettings(), base_url=demo_site.base_url, headless=True)
    driver.open()
    try:
        driver.goto(flow.start_url)
        listener = RecordingListener(driver.page, driver=driver, flow_name=flow_name, base_url=driver.base_url,
                                     spool=tmp_path / "spool", secrets={"password": DEMO_PASSWORD},
                                     params={"user": "alice"})
        listener.attach()
        # the stored flow (names saved by the earlier observer) still resolves exactly, played by meaning
        _play(driver, flow.steps, params, listener=listener)
        rec = listener.detach()
        targeted = [s for s in flow.steps if s.action.kind not in ("navigate", "assert", "wait", "screenshot")]
        assert len([s for s in rec.steps if s.action.kind != "assert"]) == len(targeted), [
            (s.action.kind, s.target.name) for s in rec.steps]
        # replayed at once on the unchanged page (a password is never read from the page: the recording types
        # the declared secret, here bound to what the flow typed)
        if "wrong_password" in params:
            params["password"] = params["wrong_password"]
        demo_site.reset()
        driver.new_context_page()
        driver.goto(flow.start_url)
        _play(driver, rec.steps, params, check_names=True)
    finally:
        driver.close()
