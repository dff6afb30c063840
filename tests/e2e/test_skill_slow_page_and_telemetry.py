"""Learning in real Chromium from pages that must not teach anything (K2, K4, K5).

1. A slow server: the form renders 20 s late once; the step's field is not
   there, only "Reload page" (which the recording had too); a person takes
   over and presses it.  That is what a slow page looks like, not a new page:
   no skill is proposed, and the failure record names the field that failed
   (the review boxes it), not the button the locator guessed.
2. Telemetry that fails: every action posts to /telemetry and fetches a
   missing metrics endpoint; none of that traffic is an error signal.  The
   script error thrown after each click is one (seed 001 K2: an uncaught
   error is a trigger), and the step whose own save (a POST to the app)
   answered 500 while the page said "Saved" names that answer.
"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.engine.control import Answer, HeadlessControl
from core.engine.events import SkillDropped, SkillProposed
from core.engine.session import ProjectSession
from core.project import load_project
from core.store import Store
from core.store.skills import SkillTable

pytestmark = pytest.mark.browser

SLOW = """<!doctype html><html><head><title>Shipping</title></head><body><h1>Shipping details</h1>
<p><button type="button" id="reload">Reload page</button></p>
<form id="f" onsubmit="return false"><p>Loading...</p></form><div id="done"></div>
<script>
document.getElementById('reload').onclick = () => { fetch('/log?reload', {method: 'POST'}); location.reload(); };
setTimeout(() => {
  document.getElementById('f').innerHTML = '<label for="name">Full name</label><input id="name">' +
    '<p><button type="button" id="next">Continue</button></p>';
  document.getElementById('next').onclick = () => { document.getElementById('done').textContent = 'Saved'; };
}, %(delay)d);
</script></body></html>"""

TELEMETRY = """<!doctype html><html><head><title>Profile</title></head><body><h1>Profile</h1>
<form onsubmit="return false">
<label for="name">Full name</label><input id="name" onfocus="fetch('/telemetry?focus', {method: 'POST'})">
<p><button type="button" id="next">Continue</button> <button type="button" id="save">Save</button></p></form>
<div id="done"></div>
<script>
function noise(what) {
  fetch('/telemetry?' + what, {method: 'POST', body: 'x'});
  fetch('/api/metrics-missing');
  setTimeout(() => { throw new Error('analytics blew up'); }, 0);
}
document.getElementById('next').onclick = () => { noise('next'); document.getElementById('done').textContent = 'Checked'; };
document.getElementById('save').onclick = () => { noise('save'); fetch('/api/save', {method: 'POST', body: 'x'});
  document.getElementById('done').textContent = 'Saved'; };
</script></body></html>"""


class Site:
    """``/form``: the slow page (``delays``: one per GET, the last repeats); ``/profile``: the telemetry page."""

    def __init__(self) -> None:
        self.delays = [0]
        site = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path.startswith("/api/"):
                    self.send_response(404)
                    self.end_headers()
                    return
                if self.path.startswith("/profile"):
                    body = TELEMETRY.encode()
                else:
                    d = site.delays.pop(0) if len(site.delays) > 1 else site.delays[0]
                    body = (SLOW % {"delay": d}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                failing = self.path.startswith("/telemetry") or self.path.startswith("/api/save")
                self.send_response(500 if failing else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"


class Person(HeadlessControl):
    """Takes over once: presses ``button`` and hands back once the form is there."""

    def __init__(self, button: str = "") -> None:
        self.button, self.takeover, self.escalations = button, None, 0

    def attach_takeover(self, rec: Any) -> None:
        self.takeover = rec

    def escalate(self, e: Any) -> Answer:
        self.escalations += 1
        return Answer("take_over") if self.button and "take_over" in e.answers else Answer("stop")

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        page = self.takeover.ex.driver.page
        page.get_by_role("button", name=self.button).click()
        self.button = ""
        for _ in range(6):
            self.takeover.pump(50)
        page.wait_for_selector("#name", timeout=5000)
        for _ in range(4):
            self.takeover.pump(50)
        return Answer("take_over", meaning="insert")


@pytest.fixture(scope="module")
def site() -> Any:
    s = Site()
    yield s
    s.httpd.shutdown()


NAME = {"tag": "input", "role": "textbox", "name": "Full name", "label": "Full name", "id": "name"}


def _project(root: Path, site: Site, start: str, steps: list[dict]) -> Any:
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({
        "name": "Slow", "base_url": site.base_url, "browser": {"headless": True},
        "waits": {"retries": 1, "retry_delay_ms": 200}}))
    (root / "flows" / "f.yaml").write_text(yaml.safe_dump({"name": "f", "start_url": start, "steps": steps},
                                                          sort_keys=False))
    return load_project(root)


def test_a_slow_page_a_person_reloaded_teaches_no_skill_and_the_record_names_the_failed_field(
        tmp_path: Path, site: Site) -> None:
    steps = [{"id": "s1", "name": "Fill Full name", "action": "input", "value": "Ada", "target": NAME},
             {"id": "s2", "name": "Continue", "action": "click",
              "target": {"tag": "button", "role": "button", "name": "Continue", "text": "Continue", "id": "next"},
              "assertions": [{"kind": "text_appears", "expected": "Saved"}]}]
    project = _project(tmp_path, site, "/form", steps)
    events: list[Any] = []
    person = Person("Reload page")
    with ProjectSession(project, emit=events.append, headless=True, control=person) as s:
        site.delays = [0]
        assert s.run_flow(project.flows["f"]).status == "passed"  # the recording's page: R1 baselines
        site.delays = [20000, 0]  # slow once; the reload is served at once
        assert s.run_flow(project.flows["f"]).status == "passed" and person.escalations == 1
    assert not [e for e in events if isinstance(e, SkillProposed)]
    (dropped,) = [e for e in events if isinstance(e, SkillDropped)]
    assert "slow or half-loaded" in dropped.reason
    with Store.open(tmp_path / ".steadyhand" / "store.sqlite") as st:
        table = SkillTable(st)
        assert table.list() == []
        (rec,) = table.failures()
        assert rec.error_type == "locator" and rec.outcome == "dropped"
        assert rec.page["target"] == {k: v for k, v in NAME.items() if k != "id"}  # the field, not 'Reload page'
        assert rec.page["target_box"] is None  # it was not on the page: nothing to box


def test_failing_telemetry_is_no_error_signal_and_a_failed_save_of_a_passed_step_is_one(
        tmp_path: Path, site: Site) -> None:
    steps = [{"id": "s1", "name": "Fill Full name", "action": "input", "value": "Ada", "target": NAME},
             {"id": "s2", "name": "Continue", "action": "click",
              "target": {"tag": "button", "role": "button", "name": "Continue", "text": "Continue", "id": "next"},
              "assertions": [{"kind": "text_appears", "expected": "Checked"}]},
             {"id": "s3", "name": "Save", "action": "click",
              "target": {"tag": "button", "role": "button", "name": "Save", "text": "Save", "id": "save"},
              "reversible": False, "assertions": [{"kind": "text_appears", "expected": "Saved"}]}]
    project = _project(tmp_path, site, "/profile", steps)
    with ProjectSession(project, emit=lambda e: None, headless=True, control=Person()) as s:
        result = s.run_flow(project.flows["f"])
    assert result.status == "passed"
    with Store.open(tmp_path / ".steadyhand" / "store.sqlite") as st:
        recs = SkillTable(st).failures(run_id=result.run_id)
        by_step = {r.step_id: r for r in recs}
        assert sorted((r.error_type, r.step_id) for r in recs) == [("error_signal", "s2"), ("error_signal", "s3")]
        assert "uncaught error" in by_step["s2"].message and "analytics blew up" in by_step["s2"].message
        assert "HTTP 500 POST" in by_step["s3"].message and "/api/save" in by_step["s3"].message
        for r in recs:  # the failing telemetry and metrics requests are the page's own noise, never a signal
            assert "telemetry" not in r.message and "metrics" not in r.message
