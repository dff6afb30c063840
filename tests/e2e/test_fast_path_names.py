"""A recorded locator whose name is not plain ASCII (an accent, an icon glyph) still finds its element, on
`steadyhand run`'s session in real Chromium: the fast path quotes names as Playwright's own locators do.

JSON's default ``\\uXXXX`` escapes asked Playwright's selector parser for the six characters ``\\u00e9``, so a
step on "Créer" or on an icon-only link named by its glyph (flask-admin's edit link, "✏") found nothing, was
looked at in full twice (tree and screenshot) and acted by handle instead of through its locator.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from core.engine.fastpath import recorded_locator
from core.engine.session import ProjectSession
from core.sites.server import LoopbackServer, Response
from tests.e2e.browser_fixtures import flow_project

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Noms</title>
<style>.pen::before { content: '\\270f'; }</style></head><body><main><h1>Articles</h1>
<button id="create" type="button" onclick="document.getElementById('out').textContent = 'créé'">Créer</button>
<a id="edit" href="#edit" title="Modifier" onclick="document.getElementById('out').textContent = 'édité'"><span class="pen"></span></a>
<p id="out" role="status"></p></main></body></html>"""

FLOW = {
    "schema_version": 1, "name": "noms", "description": "Create, then edit.", "start_url": "/page",
    "steps": [
        {"id": "s1", "name": "Créer", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Créer", "text": "Créer", "id": "create"},
         "assertions": [{"kind": "text_appears", "expected": "créé"}]},
        {"id": "s2", "name": "Modifier", "action": "click",
         "target": {"tag": "a", "role": "link", "name": "\u270f", "title": "Modifier", "id": "edit"},
         "assertions": [{"kind": "text_appears", "expected": "édité"}]},
    ],
}


def test_names_with_accents_and_glyphs_take_the_fast_path_through_their_recorded_locator(tmp_path: Path) -> None:
    server = LoopbackServer()
    server.route("GET", "/page", lambda req: Response.text(PAGE, 200, "text/html; charset=utf-8"))
    with server:
        project = flow_project(tmp_path / "noms", server.base_url, FLOW, name="Noms")
        assert recorded_locator(project.flows["noms"].steps[0]) == 'internal:role=button[name="Créer"s]'
        with ProjectSession(project, headless=True) as session:
            result = session.run_flow(project.flows["noms"])
    assert result.status == "passed", result.error
    for step in result.steps:
        assert step.resolution is not None
        assert step.resolution.reason.startswith("fast path, its recorded locator finds this element alone"), \
            step.resolution.reason
