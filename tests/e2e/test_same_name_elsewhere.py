"""A new button named as the recorded one, in another part of the page, is never clicked in its place.

Found on a new user's task list: the flow clicked "Add task" (``#add``) in the task form.  The page then
changed: that button was renamed "Save", and a new, different "Add task" button (``#tpl-add``) appeared in a
new "Templates" section.  ``steadyhand run`` took the Templates button for the recorded one ("the same
button 'Add task' by role and name ... the same control") and clicked it: a wrong click.  The recorded
button is still on the page (its id, and its form with its other fields), so the same name elsewhere is
another control: the step must escalate (a person decides), never click ``#tpl-add``.

``fixtures/same_name``: ``form_v1/v2`` (the form is a labelled ``<form>``: its title is the recorded
container) and ``sections_v1/v2`` (plain ``<section>`` elements, as on the user's page: no container).  The
target is the descriptor the observer gives of the button on v1 (as recorded); the flow runs on v2 through
the session ``steadyhand run`` uses, in Chromium; the page counts the clicks on each button.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from browser_fixtures import open_driver
from core.domain import Action, Flow, Step
from core.engine.session import ProjectSession
from core.project import load_flow, load_project, save_flow
from core.sites.server import StaticSite

FIXTURES = Path(__file__).parent / "fixtures" / "same_name"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


def _recorded_target(site: StaticSite, page: str):
    with open_driver(site.base_url) as d:
        d.goto(f"/{page}")
        obs = d.observe(screenshot=False)
    found = [c.descriptor for c in obs.candidates if c.descriptor.id == "add"]
    assert len(found) == 1 and found[0].label_text == "Add task", [c.descriptor.id for c in obs.candidates]
    return found[0]


def _run(tmp_path: Path, site: StaticSite, layout: str) -> tuple[Any, list[str]]:
    target = _recorded_target(site, f"{layout}_v1.html")
    if layout == "form":
        assert target.container == "My list"  # the recorded form's title
    root = tmp_path / "tasks"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "tasks", "base_url": site.base_url}))
    step = Step(id="s1", name="Click Add task", action=Action("click"), target=target)
    path = save_flow(Flow("add_task", f"/{layout}_v2.html", (step,)), root / "flows" / "add_task.yaml")
    with ProjectSession(load_project(root), headless=True) as session:
        result = session.run_flow(load_flow(path))
        clicks = session.driver.page.evaluate("() => window.__clicks")
    return result, clicks


@pytest.mark.parametrize("layout", ["form", "sections"])
def test_the_same_name_in_a_new_section_is_another_control(layout: str, site, tmp_path) -> None:
    result, clicks = _run(tmp_path, site, layout)
    assert "tpl-add" not in clicks, f"the Templates button was clicked: {result.steps[0].resolution}"
    assert clicks == []
    step = result.steps[0]
    assert step.status == "escalated", (step.status, step.error, step.resolution)
    assert step.resolution is not None and step.resolution.abstained, step.resolution
    assert result.status != "passed"
