"""A step of assertions only does nothing to the page, so it waits for nothing to settle, on `steadyhand run`'s
session in real Chromium: before, its settle wait ran to its idle bound (500 ms) for a change nothing set off -
half a second a check, where the script's ``expect`` answers at once (a new user's trial).  Its assertions still
poll on their own: a status that appears 300 ms after the step before is met."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.engine.session import ProjectSession
from core.sites.server import LoopbackServer, Response
from tests.e2e.browser_fixtures import flow_project

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Add</title></head><body><h1>Add</h1>
<button type="button" id="add" onclick="fetch('/api', {method: 'POST'}).then(() => setTimeout(() => {
 document.getElementById('status').textContent = 'Added'; }, 300))">Add</button>
<p id="status" role="status"></p></body></html>"""

FLOW = {
    "schema_version": 1, "name": "add", "description": "Add, then check.", "start_url": "/",
    "steps": [
        {"id": "s1", "name": "Add", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Add", "text": "Add", "id": "add"}},
        {"id": "s2", "name": "Check the status", "action": "assert", "read_only": True,
         "assertions": [{"kind": "text_equals", "expected": "Added", "selector": "#status"}]},
    ],
}


def test_an_assertion_step_waits_for_nothing_to_settle_and_its_check_polls(tmp_path: Path) -> None:
    server = LoopbackServer()
    server.route("GET", "/", lambda req: Response.text(PAGE, 200, "text/html; charset=utf-8"))
    server.route("POST", "/api", lambda req: Response.json({"ok": True}, 201))
    with server:
        project = flow_project(tmp_path / "add", server.base_url, FLOW, name="Add")
        with ProjectSession(project, headless=True) as session:
            d = session.driver
            real, waits = d.wait_settled, []
            current = [-1]
            from core.engine import pipeline

            def counted(*a, **k):
                waits.append(current[0])
                return real(*a, **k)

            def observe(ex, ctx, real_observe=pipeline.observe):
                current[0] = ctx.index
                real_observe(ex, ctx)

            d.wait_settled = counted
            phases = tuple((n, observe if n == "observe" else f) for n, f in pipeline.PHASE_FUNCTIONS)
            saved, pipeline.PHASE_FUNCTIONS = pipeline.PHASE_FUNCTIONS, phases
            try:
                result = session.run_flow(project.flows["add"])
            finally:
                pipeline.PHASE_FUNCTIONS = saved
    assert result.status == "passed", result.error
    assert 0 in waits and 1 not in waits, waits  # the click settles; the check waits for nothing
    assert result.steps[1].status == "passed"
