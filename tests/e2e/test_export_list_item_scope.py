"""A step recorded inside a list item (three "Delete" buttons, one per row) exports to a plain script that finds
its row, end to end in Chromium.

A list item's accessible name comes only from its author (WAI-ARIA: listitem is named by aria-label, never by
its content), so ``get_by_role('listitem', name='Eggs (Produce) Delete')`` - the recorded scope's text used as
a name - matched nothing, and the exported script failed on the unchanged page where `steadyhand run` passed
(a new user's trial).  The export now filters the list items by that text.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.bench.scripted import load_script, timed_script_run
from core.export import export_flow
from core.perception.browser import CHROMIUM_ARGS, find_chromium
from core.project import load_project
from core.sites.server import LoopbackServer, Response

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Pantry</title></head><body><h1>Pantry</h1>
<ul>{rows}</ul><p id="out" role="status"></p></body></html>"""
ROW = ("<li>{name} <small>({aisle})</small><button type=\"button\" onclick=\"document.getElementById('out')"
       ".textContent = 'Deleted {name}'\">Delete</button></li>")

FLOW = {
    "schema_version": 1, "name": "delete_row", "description": "Delete the eggs.", "start_url": "/",
    "steps": [
        {"id": "s1", "name": "Delete Eggs", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Delete", "text": "Delete",
                    "scope": {"role": "listitem", "name": "Eggs (Produce) Delete"}},
         "assertions": [{"kind": "text_appears", "expected": "Deleted Eggs"}]},
    ],
}


def test_the_exported_script_finds_the_recorded_row_by_its_text(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    rows = "".join(ROW.format(name=n, aisle=a) for n, a in (("Milk", "Dairy"), ("Eggs", "Produce"), ("Bread", "Bakery")))
    server = LoopbackServer()
    server.route("GET", "/", lambda req: Response.text(PAGE.format(rows=rows), 200, "text/html; charset=utf-8"))
    root = tmp_path / "pantry"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"schema_version": 1, "name": "Pantry",
                                                           "base_url": "http://127.0.0.1:9"}, sort_keys=False))
    (root / "flows" / "delete_row.yaml").write_text(yaml.safe_dump(FLOW, sort_keys=False))
    project = load_project(root)
    script = tmp_path / "delete_row.py"
    script.write_text(export_flow(project, project.flows["delete_row"], style="script"), encoding="utf-8")
    code = script.read_text()
    assert "get_by_role('listitem').filter(has_text=re.compile(" in code
    assert "name='Eggs (Produce) Delete'" not in code
    module = load_script(script, "_export_list_item_scope")
    with server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(None), headless=True, args=list(CHROMIUM_ARGS))
        try:
            secs, error = timed_script_run(module, browser, server.base_url, {})
        finally:
            browser.close()
    assert error == "", error
