"""An action that adds and reaches the server with a GET is never done again (issue 19, found by a new user).

The page's "Add task" sends ``GET /log?item=...`` from its script and shows the item only seconds later (a
slow app). The step was recorded expecting a dialog to open, so its verification fails and the recovery
policy plans a retry. Before this change the GET was not taken for a write: the form was rolled back and the
button clicked three times - three items on the server. Now the request is the attempt's effect: the server
sees exactly one click and the run stops for a person, its reason naming the request.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.domain import Action, Flow, Step
from core.engine.events import EscalationRaised
from core.engine.session import ProjectSession
from core.project import load_flow, load_project, save_flow
from core.sites.server import LoopbackServer, Response

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Tasks</title></head><body><main>
<h1>Tasks</h1><label for="name">New task</label> <input id="name" type="text">
<button type="button" id="add" onclick="const v = document.getElementById('name').value;
 fetch('/log?item=' + encodeURIComponent(v)).then(() => setTimeout(() => {
 const li = document.createElement('li'); li.textContent = v; document.getElementById('list').append(li); }, 4000))">Add task</button>
<ul id="list"></ul></main></body></html>"""


def test_an_add_whose_get_reached_the_server_is_not_clicked_again(tmp_path: Path) -> None:
    hits: list[str] = []
    server = LoopbackServer()
    server.route("GET", "/page", lambda req: Response.text(PAGE, 200, "text/html; charset=utf-8"))

    def log(req):
        hits.append(req.path)
        return Response.text("ok", 200, "text/plain")

    server.route("GET", "/log", log)
    with server:
        root = tmp_path / "tasks"
        (root / "flows").mkdir(parents=True)
        (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Tasks", "base_url": server.base_url}))
        flow = Flow("add", "/page", (
            Step(id="s1", name="Type the task", action=Action("input", "Buy milk"), selector="#name"),
            Step(id="s2", name="Add it", action=Action("click"), selector="#add", expect="overlay_open"),
        ))
        path = save_flow(flow, root / "flows" / "add.yaml")
        events: list = []
        with ProjectSession(load_project(root), headless=True, emit=events.append) as session:
            result = session.run_flow(load_flow(path))
    assert len(hits) == 1, hits  # clicked once: the request reached the server, it is the step's effect
    assert result.status != "passed"
    reasons = " ".join(str(getattr(e, "reason", "")) for e in events if isinstance(e, EscalationRaised))
    reasons += " " + (result.error or "")
    assert "GET /log" in reasons, reasons

