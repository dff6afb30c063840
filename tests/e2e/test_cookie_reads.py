"""What the page keeps is read before every action that may change it (issue 21), but its cookies - a round
trip to the browser - only when they can have changed since the last reading (issue 20): a request sent, a
response received, or ``document.cookie`` changed.  End to end through the session ``steadyhand run`` uses.

The page's server sets an HttpOnly cookie (invisible to ``document.cookie``) in answer to a request the page
sends on its own 1.2 s after the first field is typed in (a timer too long to be the typing's reaction); a lazy
control ignores its first click.  Were the cookies of an
earlier reading kept across that response, the cookie would look like the click's effect and the lazy click
would not be done again: the step passes only when the reading was renewed.
"""
from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.domain import Action, Flow, Step
from core.engine.events import ActionPerformed
from core.engine.session import ProjectSession
from core.perception.effects import EffectWatch
from core.project import load_flow, load_project, save_flow
from core.sites.server import LoopbackServer, Response

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><head><title>Form</title></head><body>
<h1>Form</h1>
<label>First <input id="first"></label><label>Second <input id="second"></label>
<label>Third <input id="third"></label>
<button id="details" type="button">Details</button><p id="tracked" hidden>Tracked</p><p id="details-text" hidden>Shown</p>
<script>
  document.addEventListener('change', () => navigator.sendBeacon('/api/beacon', 'changed'));  // no user data
  let clicks = 0;
  document.getElementById('details').addEventListener('click', () => {
    clicks += 1;
    if (clicks >= 2) document.getElementById('details-text').hidden = false;  // lazy: the first does nothing
  });
  if (location.search.includes('late=1'))  // a while after the first field is typed in: the server answers
    document.getElementById('first').addEventListener('input', () => setTimeout(() => fetch('/api/track')
      .then(() => { document.getElementById('tracked').hidden = false; }), 1200), {once: true});
</script></body></html>"""

_ids = itertools.count(1)


@pytest.fixture(scope="module")
def site():
    srv = LoopbackServer()
    srv.route("GET", "/form.html", lambda req: Response.text(PAGE, content_type="text/html; charset=utf-8"))
    srv.route("POST", "/api/beacon", lambda req: Response.empty())
    srv.route("GET", "/api/track", lambda req: Response.json(
        {"ok": True}, headers=(("Set-Cookie", f"visit={next(_ids)}; HttpOnly; Path=/"),)))
    with srv:
        yield srv


def _step(sid: str, kind: str, selector: str, value: str = "", **kw: Any) -> Step:
    return Step(id=sid, name=f"{kind} {selector}", action=Action(kind, value),  # type: ignore[arg-type]
                selector=selector, **kw)


def _run(tmp_path: Path, base_url: str, flow: Flow) -> tuple[Any, list[Any], int]:
    root = tmp_path / "p"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "P", "base_url": base_url}))
    path = save_flow(flow, root / "flows" / f"{flow.name}.yaml")
    events: list[Any] = []
    with ProjectSession(load_project(root), headless=True, emit=events.append) as session:
        result = session.run_flow(load_flow(path))
        watch = EffectWatch.of(session.driver)
        assert watch is not None
        reads = watch.cookie_reads
    return result, events, reads


def test_the_cookies_are_read_again_only_after_a_request(site, tmp_path) -> None:
    steps = (_step("s1", "input", "#first", "a"), _step("s2", "input", "#second", "b"),
             _step("s3", "input", "#third", "c"), _step("s4", "click", "#details", expect="content"))
    result, events, reads = _run(tmp_path, site.base_url, Flow("form", "/form.html", steps))
    assert result.status == "passed", result.error
    # five marks (the lazy click is done twice), no request between them but beacons: one reading
    assert sum(1 for e in events if isinstance(e, ActionPerformed) and e.ok) == 5
    assert reads == 1


def test_an_httponly_cookie_a_response_set_is_not_taken_for_the_steps_effect(site, tmp_path) -> None:
    steps = (_step("s1", "input", "#first", "a"), _step("s2", "wait", "", "Tracked"),
             _step("s3", "click", "#details", expect="content"))
    result, events, reads = _run(tmp_path, site.base_url, Flow("late", "/form.html?late=1", steps))
    assert result.status == "passed", result.error
    assert result.steps[-1].attempts == 2  # the cookie set meanwhile was not the first click's effect
    assert reads >= 2  # the response renewed the reading
