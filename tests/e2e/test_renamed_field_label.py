"""A field whose label was renamed since the recording ("Category" -> "Aisle") is still the field the step's
recorded after-state names, on `steadyhand run`'s session in real Chromium: the step passes with a heal
proposed, instead of a false "the field 'Category' did not change" that retried the choice until the circuit
breaker opened (a new user's trial on their own app)."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.engine.session import ProjectSession
from core.sites.server import LoopbackServer, Response
from tests.e2e.browser_fixtures import flow_project

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Pantry</title></head><body><h1>Pantry</h1>
<form onsubmit="return false"><label for="item-cat">Aisle</label>
<select id="item-cat" name="category"><option>Produce</option><option>Dairy</option><option>Bakery</option></select>
<button type="button" id="go" onclick="document.getElementById('out').textContent = 'Picked ' +
 document.getElementById('item-cat').value">Pick</button></form><p id="out" role="status"></p></body></html>"""

FLOW = {
    "schema_version": 1, "name": "pick", "description": "Choose an aisle.", "start_url": "/",
    "steps": [
        {"id": "s1", "name": "Choose Dairy in Category", "action": "select", "value": "Dairy",
         "target": {"tag": "select", "role": "combobox", "name": "Category", "label": "Category", "id": "item-cat",
                    "name_attr": "category", "css_path": "select#item-cat"},
         "after": {"url_pattern": "/", "title": "Pantry", "heading": "Pantry", "dialog": False,
                   "field_changed": "Category"}},
        {"id": "s2", "name": "Pick", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Pick", "text": "Pick", "id": "go"},
         "assertions": [{"kind": "text_appears", "expected": "Picked Dairy"}]},
    ],
}


def test_a_renamed_fields_change_is_the_recorded_fields_change(tmp_path: Path) -> None:
    server = LoopbackServer()
    server.route("GET", "/", lambda req: Response.text(PAGE, 200, "text/html; charset=utf-8"))
    with server:
        project = flow_project(tmp_path / "pantry", server.base_url, FLOW, name="Pantry")
        with ProjectSession(project, headless=True) as session:
            result = session.run_flow(project.flows["pick"])
    assert result.status == "passed", result.error
    first = result.steps[0]
    assert first.attempts == 1 and result.invalid_actions == 0
    assert first.resolution is not None and first.resolution.healed  # Category -> Aisle, proposed as a heal


def test_an_option_the_list_no_longer_has_is_said_with_the_options_it_has(tmp_path: Path) -> None:
    """"Dairy" became "Dairy & eggs": the choice waits for the option as a script's select does, then says in
    plain words which option is missing and which the list has (not Playwright's bare timeout)."""
    from core.domain import Action, BrowserSettings
    from core.perception.driver import ActionError, PlaywrightDriver

    renamed = PAGE.replace("<option>Dairy</option>", "<option>Dairy &amp; eggs</option>")
    (tmp_path / "index.html").write_text(renamed, encoding="utf-8")
    d = PlaywrightDriver(BrowserSettings(), base_url="http://127.0.0.1:9/", headless=True)
    d.open()
    try:
        d.goto((tmp_path / "index.html").as_uri())
        ref = next(c.ref for c in d.observe(screenshot=False).candidates if c.descriptor.role == "combobox")
        with pytest.raises(ActionError) as err:
            d.perform(Action("select", value="Dairy", timeout_ms=300), ref, "Dairy")
        d.perform(Action("select", value="Bakery", timeout_ms=300), ref, "Bakery")  # one it has is chosen
        assert d.evaluate("() => document.getElementById('item-cat').value") == "Bakery"
    finally:
        d.close()
    assert str(err.value) == ("the list has no option 'Dairy' (waited 300 ms; its options: 'Produce', "
                              "'Dairy & eggs', 'Bakery')")
