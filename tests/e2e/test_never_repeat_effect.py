"""Never repeat an effect (issue 19, failure kind 2), end to end through the session ``steadyhand run`` uses.

``fixtures/norepeat/list.html`` is a shopping list kept in the browser only
(localStorage by default; sessionStorage, a cookie or IndexedDB on request):
adding an item sends no request at all, so no write inference can see it.
Each flow below adds one item by another kind of action - Enter in a field,
a click on Add, a form's submit button, Enter in a form's field, a select
whose change appends, a checkbox that adds - and its verification is made
to fail: the step was recorded expecting a dialog to open.  Before this
change the step was retried twice, and the item added three times.  Now the
attempt's effect is seen (a storage write, items added to the page) and the
step is never done again: exactly one item afterwards, read from the page's
own storage and DOM, the action performed once, and the run escalated.

The noise page (``?noise=1``) beacons, polls with POST requests and writes
a heartbeat into localStorage on timers, and sends a beacon on every click:
none of that is the step's effect, so a lazy control whose first click
changes nothing is still clicked again (and passes).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from core.domain import Action, Assertion, Flow, Step
from core.engine.events import ActionPerformed, EscalationRaised
from core.engine.session import ProjectSession
from core.project import load_flow, load_project, save_flow
from core.sites.server import StaticSite

FIXTURES = Path(__file__).parent / "fixtures" / "norepeat"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


def step(sid: str, kind: str, selector: str, value: str = "", **kw: Any) -> Step:
    return Step(id=sid, name=f"{kind} {selector}", action=Action(kind, value),  # type: ignore[arg-type]
                selector=selector, **kw)


#: The step that adds, recorded expecting a dialog to open: its verification cannot hold.
WRONG = {"expect": "overlay_open"}

#: Per action kind that can add: the steps of its flow (the last one adds the item).
ADDING: dict[str, tuple[Step, ...]] = {
    "enter": (step("s1", "input", "#new-item", "Milk"), step("s2", "press", "#new-item", "Enter", **WRONG)),
    "click_add": (step("s1", "input", "#add-name", "Milk"), step("s2", "click", "#add", **WRONG)),
    "form_submit": (step("s1", "input", "#form-name", "Milk"), step("s2", "click", "#form-submit", **WRONG)),
    "fill_enter": (step("s1", "input", "#form-name", "Milk"), step("s2", "press", "#form-name", "Enter", **WRONG)),
    "select_appends": (step("s1", "select", "#pick", "Apples", **WRONG),),
    "check_adds": (step("s1", "check", "#want-milk", **WRONG),),
}


def _project(tmp_path: Path, site: StaticSite) -> Path:
    root = tmp_path / "shop"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Shop", "base_url": site.base_url}))
    return root


def _run(root: Path, flow: Flow, read: str) -> tuple[Any, list[Any], Any]:
    """Run ``flow`` through the CLI's session; returns the result, the events and ``read`` evaluated on the page."""
    path = save_flow(flow, root / "flows" / f"{flow.name}.yaml")
    events: list[Any] = []
    with ProjectSession(load_project(root), headless=True, emit=events.append) as session:
        result = session.run_flow(load_flow(path))
        seen = session.driver.page.evaluate(read)
    return result, events, seen


READ_LOCAL = """() => ({stored: JSON.parse(localStorage.getItem('items') || '[]'),
                      shown: [...document.querySelectorAll('#items li')].map(li => li.textContent)})"""


def _performed(events: list[Any], index: int) -> int:
    return sum(1 for e in events if isinstance(e, ActionPerformed) and e.index == index and e.ok)


@pytest.mark.parametrize("case", sorted(ADDING))
def test_an_item_added_in_the_browser_only_is_added_exactly_once(case: str, site, tmp_path) -> None:
    steps = ADDING[case]
    result, events, seen = _run(_project(tmp_path, site), Flow(case, "/list.html", steps), READ_LOCAL)
    assert len(seen["stored"]) == 1, seen  # the page's own storage: one item, never two or three
    assert len(seen["shown"]) == 1, seen
    last = result.steps[-1]
    assert last.attempts == 1 and _performed(events, len(steps) - 1) == 1
    assert result.status in ("escalated", "passed")
    if result.status == "escalated":
        (esc,) = [e for e in events if isinstance(e, EscalationRaised)]
        assert "retry" not in esc.answers
        assert "not done again" in esc.reason and "had an effect" in esc.reason


@pytest.mark.parametrize("store,read", [
    ("session", "() => JSON.parse(sessionStorage.getItem('items') || '[]')"),
    ("cookie", "() => { const c = document.cookie.split('; ').find(x => x.startsWith('items='));"
               " return c ? JSON.parse(decodeURIComponent(c.slice(6))) : []; }"),
    ("idb", "() => new Promise(ok => { const r = indexedDB.open('shopping', 1); r.onsuccess = () => {"
            " const q = r.result.transaction('items').objectStore('items').getAll();"
            " q.onsuccess = () => { r.result.close(); ok(q.result); }; }; })"),
])
def test_a_session_storage_cookie_or_indexeddb_write_is_not_repeated(store: str, read: str, site, tmp_path) -> None:
    flow = Flow(f"add_{store}", f"/list.html?store={store}", ADDING["click_add"])
    result, events, stored = _run(_project(tmp_path, site), flow, read)
    assert stored == ["Milk"]
    assert result.steps[-1].attempts == 1 and _performed(events, 1) == 1
    assert result.status in ("escalated", "passed")


def test_a_write_the_page_never_shows_is_not_repeated(site, tmp_path) -> None:
    """The list is stored but not shown: the page does not change at all (verdict "unchanged"), yet the
    attempt wrote to localStorage - retrying it would add the item again."""
    steps = (step("s1", "input", "#add-name", "Milk"), step("s2", "click", "#add"))
    result, events, seen = _run(_project(tmp_path, site), Flow("silent", "/list.html?render=no", steps), READ_LOCAL)
    assert seen["stored"] == ["Milk"]
    assert result.steps[-1].attempts == 1 and _performed(events, 1) == 1
    assert result.status == "escalated"


def test_beacons_polling_and_a_heartbeat_are_not_the_steps_effect(site, tmp_path) -> None:
    """A lazy control ignores its first click; the page beacons, polls and writes a heartbeat meanwhile.
    None of that is the click's effect: it is clicked again, and passes."""
    steps = (step("s1", "click", "#details", expect="content"),)
    result, events, _ = _run(_project(tmp_path, site), Flow("lazy", "/list.html?noise=1", steps),
                             "() => document.getElementById('details-text').hidden")
    assert result.status == "passed", result.error
    assert result.steps[0].attempts == 2 and _performed(events, 0) == 2


def test_a_confirmation_shown_late_after_the_write_passes_without_acting_again(site, tmp_path) -> None:
    """The sign-up is written at once; "Welcome" shows 3 s later (a slow server-rendered confirmation).
    A plain script's auto-waiting assertion passes; so must the engine, by looking again without acting
    until the action timeout (5 s) has passed since the click - never by submitting again."""
    steps = (step("s1", "input", "#name", "Ada"),
             Step(id="s2", name="Submit", action=Action("click"), selector="#go",
                  assertions=(Assertion("text_appears", "Welcome, Ada"),)))
    result, events, seen = _run(_project(tmp_path, site), Flow("late", "/late.html", steps),
                                "() => JSON.parse(localStorage.getItem('signups') || '[]')")
    assert seen == ["Ada"]
    assert result.status == "passed", result.error
    assert result.steps[-1].attempts == 1 and _performed(events, 1) == 1
