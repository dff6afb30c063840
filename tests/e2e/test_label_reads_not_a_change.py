"""A combo box whose label did not change is not reported as "text changed" (R1 change detection).

Found by a new user: the progress line said ``combobox text changed from 'Priority' to 'priority'`` although the
label "Priority" never changed: the next release of the page only added a placeholder option "priority" to the
select, and the observer's name took that option's case.  Two reads of one unchanged label that differ only in
case or punctuation are not a change; a real change of the label ("Priority" -> "Urgency") still is.

``fixtures/renamed/ticket_v1..v3.html`` served from a folder the test rewrites; the flow runs through the
executor ``steadyhand run`` uses, in Chromium, with a real SQLite store (the first run takes the baselines).  The
select itself is found as recorded (no heal proposed for a name read in another case).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.domain import Action, BrowserSettings, Flow, Step
from core.engine.events import ScreenChanged
from core.engine.executor import FlowExecutor
from core.perception.driver import PlaywrightDriver
from core.sites.server import StaticSite
from core.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "renamed"

pytestmark = pytest.mark.browser


@pytest.fixture
def ticket(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    shutil.copy(FIXTURES / "ticket_v1.html", root / "ticket.html")
    site = StaticSite(root)
    site.start()
    driver = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
    driver.open()
    store = Store.open(tmp_path / "store.sqlite")
    try:
        yield root, driver, store
    finally:
        store.close()
        driver.close()
        site.stop()


def _run(driver, store, flow):
    events: list = []
    result = FlowExecutor(driver, emit=events.append, store=store, project_name="helpdesk").run_flow(flow, params={})
    return result, [c for e in events if isinstance(e, ScreenChanged) and e.index == 0 for c in e.report.changes]


def test_a_label_read_in_another_case_is_no_change_and_a_renamed_label_is_one(ticket):
    root, driver, store = ticket
    driver.goto("/ticket.html")
    by_id = {c.descriptor.id: c.descriptor for c in driver.observe(screenshot=False).candidates}
    flow = Flow("ticket", "/ticket.html", (Step("s1", Action("select", "High"), target=by_id["prio"]),
                                           Step("s2", Action("click"), target=by_id["save"])))

    first, _ = _run(driver, store, flow)
    assert first.status == "passed", first.error

    shutil.copy(FIXTURES / "ticket_v2.html", root / "ticket.html")  # a placeholder option, the label unchanged
    second, changes = _run(driver, store, flow)
    assert second.status == "passed", second.error
    said = [c.describe() for c in changes]
    assert not [c for c in changes if c.kind == "text_changed" and c.role == "combobox"], said
    assert second.heals == 0 and second.steps[0].resolution.strategy == "exact"  # the same select: no heal either

    shutil.copy(FIXTURES / "ticket_v3.html", root / "ticket.html")  # the label really renamed
    third, changes = _run(driver, store, flow)
    assert third.status == "passed", third.error
    said = [c.describe() for c in changes]
    assert any(c.kind == "text_changed" and c.role == "combobox" and c.after == "Urgency" for c in changes), said
