"""Recorded locators the page library matches itself, and the pin that keeps the action on the element found.

A recorded role locator with an exact name or a recorded label locator
(``core.engine.fastpath.recorded_locator``) is confirmed by the page library
(``byRole`` / ``byLabel`` in ``page_lib.js``) instead of Playwright's
selector engine in the page's own world, whose first use costs each new
document about 30 ms.  These tests hold the library's answers to Playwright's
own engine on a page of awkward labels and names, check that an action can
never land on another element than the one confirmed, and run a flow end to
end without one Playwright selector query in the page's world.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.domain import Action
from core.perception.driver import ActionError, _lib_match

PAGE = """<!doctype html><html><head><title>Labels</title>
<style>.shout { text-transform: uppercase; }</style></head><body>
<main>
  <form>
    <label for="user">User   name</label> <input id="user">
    <label>Password <input id="pw" type="password"></label>
    <span id="cap">Card number</span> <input id="card" aria-labelledby="cap">
    <input id="zip" aria-label="  Postal
      code ">
    <label for="secret">Token</label> <input id="secret" type="hidden">
    <label for="notes">Notes</label> <textarea id="notes"></textarea>
    <label for="kind">Kind</label> <select id="kind"><option>A</option><option>B</option></select>
    <label for="a1">Alias</label> <input id="a1">
    <label for="a2">Alias</label> <input id="a2">
  </form>
  <button id="save">Save</button>
  <button id="save2" aria-label="Save draft">Keep</button>
  <button id="go">Go <b>now</b></button>
  <div role="button" id="div-btn" tabindex="0">Open panel</div>
  <a href="#top" id="link">Top of page</a>
  <button id="pay">Pay</button>
  <button id="dup1">Twice</button><button id="dup2">Twice</button>
  <p>Clicked: <span id="log"></span></p>
</main>
<script>
  for (const b of document.querySelectorAll('button')) b.addEventListener('click', (e) => {
    e.preventDefault(); document.getElementById('log').textContent += b.id + ' ';
  });
</script>
</body></html>"""

#: Selectors the library matches, each compared with Playwright's own engine on PAGE.
SELECTORS = [
    'internal:label="User name"s',
    'internal:label="Password"s',
    'internal:label="Card number"s',
    'internal:label="Postal code"s',
    'internal:label="Token"s',  # a hidden input: Playwright's label engine skips it
    'internal:label="Notes"s',
    'internal:label="Kind"s',
    'internal:label="Alias"s',  # two fields
    'internal:label="user name"s',  # exact: case counts
    'internal:role=button[name="Save"s]',
    'internal:role=button[name="Save draft"s]',
    'internal:role=button[name="Go now"s]',
    'internal:role=button[name="Open panel"s]',
    'internal:role=link[name="Top of page"s]',
    'internal:role=button[name="Twice"s]',
    'internal:role=button[name="save"s]',
    'internal:role=textbox[name="User name"s]',
    'internal:role=combobox[name="Kind"s]',
]


def _playwright_indices(d, selector: str) -> list[int]:
    """The page library's indices of what Playwright's own engine matches (the old confirmation)."""
    from core.perception.driver import _REF_INDICES_JS

    return [int(i) for i in d.page.main_frame.locator(selector).evaluate_all(_REF_INDICES_JS)]


def test_the_library_matches_recorded_locators_as_playwright_does(tmp_path: Path) -> None:
    from tests.e2e.browser_fixtures import driver_on

    (tmp_path / "page.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.goto("/page.html")
        d.observe(screenshot=False, ax=False)
        for selector in SELECTORS:
            assert _lib_match(selector) is not None, selector
            before = d.lib_matches
            mine = d.ref_indices(selector)
            assert d.lib_matches == before + 1, selector  # answered by the library, not by Playwright
            assert sorted(mine) == sorted(_playwright_indices(d, selector)), selector
        # the hidden field has a label but no match; two fields share one label
        assert d.ref_indices('internal:label="Token"s') == []
        assert len(d.ref_indices('internal:label="Alias"s')) == 2


def test_other_selectors_stay_with_playwright() -> None:
    for selector in ('#save', 'internal:role=button[name="Save"i]', 'role=button[name="Save"]',
                     'internal:label="Password"i', 'internal:role=row[name="x"i] >> internal:role=button[name="Save"s]',
                     'internal:testid=[data-testid="save"s]'):
        assert _lib_match(selector) is None, selector


def test_an_action_through_a_library_match_never_lands_on_another_element(tmp_path: Path) -> None:
    """The action goes through Playwright's locator pinned to the element the library found: when Playwright's
    engine would name another element than the one confirmed (here: the locator of "Pay" asked to act on the
    "Save" button's ref), the action finds nothing and fails - no click reaches either button."""
    from tests.e2e.browser_fixtures import driver_on

    (tmp_path / "page.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.goto("/page.html")
        obs = d.observe(screenshot=False, ax=False)
        save = next(c.ref for c in obs.candidates if c.descriptor.id == "save")
        pay = next(c.ref for c in obs.candidates if c.descriptor.id == "pay")
        click = Action(kind="click", timeout_ms=600)
        started = time.monotonic()
        with pytest.raises(ActionError):
            d.perform(click, save, "", locator='internal:role=button[name="Pay"s]')
        assert time.monotonic() - started < 10.0
        assert d.page.inner_text("#log") == ""  # neither Pay nor Save was clicked
        d.perform(click, pay, "", locator='internal:role=button[name="Pay"s]')  # the element found: acted on
        assert d.page.inner_text("#log").split() == ["pay"]


def test_an_action_on_a_duplicated_name_goes_to_the_element_confirmed(tmp_path: Path) -> None:
    """Pinned, the locator acts on the confirmed element even where its name alone names two."""
    from tests.e2e.browser_fixtures import driver_on

    (tmp_path / "page.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.goto("/page.html")
        obs = d.observe(screenshot=False, ax=False)
        second = next(c.ref for c in obs.candidates if c.descriptor.id == "dup2")
        d.perform(Action(kind="click", timeout_ms=2000), second, "", locator='internal:role=button[name="Twice"s]')
        assert d.page.inner_text("#log").split() == ["dup2"]


FORM = """<!doctype html><html><head><title>Sign in</title></head><body><main>
<form id="f" action="/done.html" method="get">
  <label for="u">User name</label> <input id="u" name="u">
  <label for="p">Password</label> <input id="p" name="p" type="password">
  <button type="submit">Sign in</button>
</form></main></body></html>"""
DONE = """<!doctype html><html><head><title>Welcome</title></head><body><main>
<h1>Welcome</h1><button onclick="this.textContent = 'Opened'">Open inbox</button></main></body></html>"""


def _step(sid: str, action: str, tag: str, role: str, name: str, *, label: str = "", value: str = "",
          type_: str = "") -> dict:
    step = {"id": sid, "name": sid, "action": action,
            "target": {"tag": tag, "role": role, "name": name, "label": label, "type": type_}}
    if value:
        step["value"] = value
    return step


def test_a_flow_runs_without_one_playwright_selector_query_in_the_page(tmp_path: Path) -> None:
    """Through the session ``steadyhand run`` uses, on a real page: every step after the first confirms its
    recorded locator through the library; Playwright's selector engine is never asked to query in the page's
    own world (``evalOnSelectorAll``), and the flow passes with every step on the fast path."""
    from playwright._impl import connection

    from core.engine.session import ProjectSession
    from core.sites.server import StaticSite
    from tests.e2e.browser_fixtures import flow_project

    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "login.html").write_text(FORM)
    (site_dir / "done.html").write_text(DONE)
    site = StaticSite(site_dir)
    site.start()
    sent: list[str] = []
    real = connection.Connection.send_message_to_server

    def counting(self, obj, method, params, options):  # noqa: ANN001 - Playwright's own signature
        sent.append(method)
        return real(self, obj, method, params, options)

    try:
        flow = {"schema_version": 1, "name": "sign_in", "start_url": "/login.html", "steps": [
            _step("s1", "input", "input", "textbox", "User name", label="User name", value="ada"),
            _step("s2", "input", "input", "textbox", "Password", label="Password", value="pw", type_="password"),
            _step("s3", "click", "button", "button", "Sign in"),
            _step("s4", "click", "button", "button", "Open inbox"),
        ]}
        project = flow_project(tmp_path / "proj", site.base_url, flow)
        with ProjectSession(project, headless=True) as session:
            session.run_flow(project.flows["sign_in"])  # warm-up: the browser and the store
            connection.Connection.send_message_to_server = counting
            try:
                result = session.run_flow(project.flows["sign_in"])
            finally:
                connection.Connection.send_message_to_server = real
            matched = session.driver.lib_matches
        assert result.status == "passed", result.error
        assert all(s.resolution is not None and s.resolution.reason.startswith("fast path") for s in result.steps[1:])
        assert matched > 0
        assert "evalOnSelectorAll" not in sent and "querySelectorAll" not in sent
        assert sent.count("click") >= 2 and sent.count("fill") >= 1
    finally:
        site.stop()
