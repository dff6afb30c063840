"""A confirmation box that opens late is the click's effect: Delete is clicked once, the write sent once (issue 19).

Found on Flask-AppBuilder 4.5.4 (``steadyhand bench drift --app fab``, under /staging): its Delete link opens
a Bootstrap 3 confirmation box - the backdrop fades in first, and the box is displayed only when that fade
ends, then fades in itself; the link's tooltip leaves once the box has the focus.  The first look after the
click fell in the gap ("expected a dialog but saw elements"), and before the failed attempt was retried the
engine watched the page for what changes "on its own": the box still arriving and the tooltip leaving changed
the element count during that watch, so the click's own effect was taken for the page's background, the
attempt judged to have had none, and Delete clicked again (twice, then the run stopped).

``fixtures/norepeat/confirm.html`` does the same with CSS fades (default) and on plain timers
(``?anim=none``: nothing announces the late box).  Through the session ``steadyhand run`` uses, in Chromium:
both steps pass, Delete is performed exactly once, and the server receives exactly one DELETE.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from core.domain import Action, AfterState, Flow, Step, StepEvidence
from core.engine.events import ActionPerformed
from core.engine.session import ProjectSession
from core.project import load_flow, load_project, save_flow
from core.sites.server import Response, StaticSite

FIXTURES = Path(__file__).parent / "fixtures" / "norepeat"

pytestmark = pytest.mark.browser


@pytest.fixture()
def site():
    s = StaticSite(FIXTURES)
    s.deleted = []  # type: ignore[attr-defined]
    s.route("DELETE", "/api/items/{id}", lambda req: s.deleted.append(req.path) or Response.json({"ok": True}))
    s.start()
    yield s
    s.stop()


STEPS = (
    Step(id="s1", name="Delete the item", action=Action("click"), selector="#del", expect="overlay_open",
         recorded=StepEvidence(after=AfterState(url_pattern="/confirm.html", title="Inventory", dialog=True,
                                                dialog_name="User confirmation needed"))),
    Step(id="s2", name="Confirm the deletion", action=Action("click"), selector="#ok", expect="overlay_close",
         reversible=False, reversible_declared=True,
         recorded=StepEvidence(after=AfterState(url_pattern="/confirm.html", title="Inventory", dialog=False))),
)


def _run(tmp_path: Path, site: StaticSite, query: str) -> tuple[Any, list[Any], Any]:
    root = tmp_path / "inventory"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Inventory", "base_url": site.base_url}))
    path = save_flow(Flow("delete_item", f"/confirm.html{query}", STEPS), root / "flows" / "delete_item.yaml")
    events: list[Any] = []
    with ProjectSession(load_project(root), headless=True, emit=events.append) as session:
        result = session.run_flow(load_flow(path))
        rows = session.driver.page.evaluate("() => document.querySelectorAll('#items tbody tr').length")
    return result, events, rows


def _performed(events: list[Any], index: int) -> int:
    return sum(1 for e in events if isinstance(e, ActionPerformed) and e.index == index and e.ok)


@pytest.mark.parametrize("query", ["", "?anim=none"], ids=["css-fades", "timers"])
def test_a_confirmation_box_shown_late_is_the_clicks_effect(query: str, site, tmp_path) -> None:
    result, events, rows = _run(tmp_path, site, query)
    assert _performed(events, 0) == 1, "Delete was clicked again after its confirmation box had opened"
    assert result.steps[0].attempts == 1
    assert result.status == "passed", result.error
    assert _performed(events, 1) == 1
    assert site.deleted == ["/api/items/1"]  # the write the confirmation sends: exactly once
    assert rows == 0
