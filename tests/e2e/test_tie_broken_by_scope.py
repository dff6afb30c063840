"""A tie between two same-named links, broken by the recorded locator within its recorded scope, through a run.

A message above the tabs moved them since the recording: the chain's exact level wants the recorded place
within a few px and its text level ties the tab "Query" with the navigation bar's "Query".  The exported
script's locator - the link within the list item that reads "Query" - finds one of them alone: the run acts
on it at once instead of waiting for the page to change (a page that never changes back would end in an
escalation after that wait).
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.engine.events import TargetResolved
from core.engine.session import ProjectSession
from core.project import load_project
from core.sites.server import LoopbackServer, Response

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Table</title></head><body>
<script>function opened(what) { window.clicked = (window.clicked || '') + what;
  document.getElementById('flash').textContent = 'Opened ' + what; }</script>
<div id="flash" style="height:80px">Row inserted.</div>
<ul><li><a href="#content" onclick="opened('content'); return false;">Content</a></li>
<li><a href="/t/query/" onclick="opened('tab'); return false;">Query</a></li></ul>
<div style="height:900px"></div>
<div><a href="/query/" onclick="opened('nav'); return false;">Query</a></div>
</body></html>"""

FLOW = {
    "schema_version": 1, "name": "tabs", "description": "Open the table's query tab.", "start_url": "/t",
    "steps": [
        {"id": "s1", "name": "Click Query", "action": "click",
         "target": {"tag": "a", "role": "link", "name": "Query", "text": "Query", "href": "/t/query/",
                    "bbox": [40.0, 30.0, 46.0, 18.0], "viewport": [1280, 800],
                    "scope": {"role": "listitem", "name": "Query"}}},
    ],
}


def test_a_tie_of_same_named_links_is_broken_by_the_recorded_scope(tmp_path: Path) -> None:
    server = LoopbackServer()
    server.route("GET", "/t", lambda req: Response.text(PAGE, 200, "text/html; charset=utf-8"))
    root = tmp_path / "tabs"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump(
        {"schema_version": 1, "name": "Tabs", "base_url": "http://127.0.0.1:1/",
         "browser": {"headless": True, "viewport": {"width": 1280, "height": 800}}}, sort_keys=False))
    (root / "flows" / "tabs.yaml").write_text(yaml.safe_dump(FLOW, sort_keys=False))
    with server:
        project = load_project(root)
        resolutions: list = []
        with ProjectSession(project, headless=True, base_url=server.base_url,
                            emit=lambda e: resolutions.append(e.resolution) if isinstance(e, TargetResolved) else None
                            ) as session:
            result = session.run_flow(project.flows["tabs"])
            clicked = session.driver.evaluate("() => window.clicked || ''")  # type: ignore[union-attr]
    assert result.status == "passed", result.error
    assert clicked == "tab"
    assert resolutions and "among the tied" in resolutions[0].reason and not resolutions[0].abstained, resolutions
