"""Skills from failures in real Chromium, on a page we did not record against (K2-K5).

A small hostile shipping form served on 127.0.0.1 in three versions:

1. the form as the flow was written against it (the run passes and takes the
   R1 baselines: the recording's page);
2. an "Autofill?" dialog covers the form on load; Escape does not close it and
   it has no close or cancel control, so recovery cannot dismiss it and the run
   escalates; a scripted person takes over, clicks "Type them myself" and hands
   back ("insert"); the run then passes, and the engine proposes a skill whose
   trigger is that dialog and that button, validated on the stored states;
3. "Continue" loads from a server that answers 500 once, then 200: the retry
   gets past it, the failure is captured as transient and learning yields
   no skill;
4. the server keeps answering 500 until the retries are spent; the person takes
   over and only presses "Continue" again: the correction does what the flow
   does, and no skill is made.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.domain import Escalation
from core.engine.control import Answer, HeadlessControl
from core.engine.events import SkillDropped, SkillProposed
from core.engine.session import ProjectSession
from core.project import load_project
from core.skills.learn import learn_from_run
from core.store import Store
from core.store.skills import SkillTable

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]

PAGE = """<!doctype html><html><head><title>Shipping</title>
<style>body{font-family:sans-serif;margin:40px} label{display:block;margin-top:12px} input{width:260px}</style>
</head><body><h1>Shipping details</h1>
<form onsubmit="return false">
<label for="name">Full name</label><input id="name">
<label for="email">Email</label><input id="email" type="email">
<p><button type="button" id="next">Continue</button></p></form>
<div id="done"></div>
<script>
const VERSION = %(version)d;
if (VERSION === 2 && !sessionStorage.getItem('own')) {
  document.body.insertAdjacentHTML('beforeend',
    '<div id="ov" style="position:fixed;inset:0;background:rgba(0,0,0,.45)">' +
    '<div role="dialog" aria-modal="true" aria-labelledby="at" ' +
    'style="background:#fff;margin:120px auto;width:340px;padding:18px">' +
    '<h2 id="at">Autofill?</h2><p>Fill the form with the details saved in this browser?</p>' +
    '<button id="use">Use saved details</button> <button id="own">Type them myself</button></div></div>');
  document.getElementById('own').onclick = () => { sessionStorage.setItem('own', '1');
                                                   document.getElementById('ov').remove(); };
  document.getElementById('use').onclick = () => { fetch('/wrong-click', {method: 'POST'});
    document.getElementById('name').value = 'Someone Else'; document.getElementById('ov').remove(); };
}
document.getElementById('next').onclick = async () => {
  const r = await fetch('/api/check');
  if (r.ok) document.getElementById('done').textContent = 'Saved for ' + document.getElementById('name').value;
};
</script></body></html>"""


class Site:
    """The form's server: ``version`` picks the page, ``fail`` answers /api/check with 500 that many times."""

    def __init__(self) -> None:
        self.version, self.fail, self.wrong_clicks = 1, 0, 0
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str = "text/html") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.startswith("/api/check"):
                    if site.fail > 0:
                        site.fail -= 1
                        self._send(500, b'{"error": "busy"}', "application/json")
                    else:
                        self._send(200, b'{"ok": true}', "application/json")
                    return
                self._send(200, (PAGE % {"version": site.version}).encode())

            def do_POST(self) -> None:  # noqa: N802
                site.wrong_clicks += 1
                self._send(204, b"")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class ScriptedPerson(HeadlessControl):
    """At each escalation takes the page over, clicks the next planned button on the engine's own page and
    hands back with the planned meaning; with no plan left, stops."""

    def __init__(self, *plans: tuple[str, str]) -> None:
        self.plans = list(plans)
        self.takeover: Any = None
        self.escalations: list[Escalation] = []

    def attach_takeover(self, recording: Any) -> None:
        self.takeover = recording

    def escalate(self, escalation: Escalation) -> Answer:
        self.escalations.append(escalation)
        return Answer("take_over") if self.plans and "take_over" in escalation.answers else Answer("stop")

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        button, meaning = self.plans.pop(0)
        page = self.takeover.ex.driver.page
        page.get_by_role("button", name=button).click()
        for _ in range(6):  # let the recorder see the click (the run control pumps it)
            self.takeover.pump(50)
        return Answer("take_over", meaning=meaning)


@pytest.fixture(scope="module")
def site():  # noqa: ANN201
    s = Site()
    yield s
    s.close()


def _project(root: Path, base_url: str) -> Path:
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({
        "name": "Shipping", "base_url": base_url, "browser": {"headless": True},
        "waits": {"retries": 2, "retry_delay_ms": 100}}), encoding="utf-8")
    steps = [
        {"id": "s1", "name": "Fill Full name", "action": "input", "value": "Ada Lovelace",
         "target": {"tag": "input", "role": "textbox", "name": "Full name", "label": "Full name", "id": "name"}},
        {"id": "s2", "name": "Fill Email", "action": "input", "value": "ada@example.org",
         "target": {"tag": "input", "role": "textbox", "name": "Email", "label": "Email", "id": "email"}},
        {"id": "s3", "name": "Continue", "action": "click", "expect": "content",
         "target": {"tag": "button", "role": "button", "name": "Continue", "text": "Continue", "id": "next"}},
    ]
    (root / "flows" / "ship.yaml").write_text(yaml.safe_dump({"name": "ship", "start_url": "/form",
                                                             "steps": steps}, sort_keys=False), encoding="utf-8")
    return root


def test_a_takeover_on_an_unexpected_dialog_proposes_a_skill_and_a_transient_500_none(tmp_path: Path, site) -> None:
    root = _project(tmp_path / "ship", site.base_url)
    project = load_project(root)
    events: list[Any] = []
    person = ScriptedPerson(("Type them myself", "insert"), ("Continue", "replace"))
    with ProjectSession(project, emit=events.append, headless=True, control=person) as session:
        site.version = 1
        first = session.run_flow(project.flows["ship"])
        assert first.status == "passed", first.error
        site.version = 2
        second = session.run_flow(project.flows["ship"])
        assert second.status == "passed", (second.error, [o.error for o in second.steps])
        site.version, site.fail = 1, 1
        third = session.run_flow(project.flows["ship"])
        assert third.status == "passed", third.error
        site.fail = 5  # every retry meets the 500; the person then presses Continue again by hand
        fourth = session.run_flow(project.flows["ship"])
        assert fourth.status == "passed", fourth.error
    assert site.wrong_clicks == 0
    assert [e.index for e in person.escalations] == [0, 2]
    (redone,) = [e for e in events if isinstance(e, SkillDropped) and e.run_id == fourth.run_id]
    assert redone.index == 2 and "nothing differs" in redone.reason

    (proposed,) = [e for e in events if isinstance(e, SkillProposed)]
    assert proposed.run_id == second.run_id and proposed.pass_rate >= 0.6 and proposed.cases >= 3
    assert not any(isinstance(e, SkillDropped) and e.run_id == third.run_id for e in events)

    store = Store.open(root / ".steadyhand" / "store.sqlite")
    try:
        table = SkillTable(store)
        skill = table.get(proposed.skill_id)
        assert skill is not None and skill.state == "proposed" and skill.kind == "do"
        t = skill.trigger
        assert t.dialog_name == "Autofill?" and t.dialog is True
        (req,) = t.required
        assert (req.role, req.name, req.in_dialog) == ("button", "Type them myself", True)
        (act,) = skill.actions
        assert act.action.kind == "click" and act.target.role == "button" and act.target.name == "Type them myself"
        assert not (act.target.id or act.target.css_path or act.target.xpath or act.target.bbox)
        assert skill.validation.reproduced and skill.validation.pass_rate == skill.quality >= 0.6
        assert skill.provenance.source == "correction" and skill.provenance.step_ids == ("s1",)
        assert skill.provenance.cause == "unexpected_state" and skill.scope.product == "Shipping"
        (rec,) = table.failures(run_id=second.run_id)
        assert rec.error_type == "precondition" and rec.outcome == "skill" and rec.skill_id == skill.id
        assert rec.attribution["cause"] == "unexpected_state" and rec.screenshots
        assert all(store.media_path(p).is_file() for p in rec.screenshots)
        assert [e["step_id"] for e in rec.trajectory] == ["s1"]

        # the transient 500: captured, marked transient, and learning from that run proposes nothing
        (flaky,) = table.failures(run_id=third.run_id)
        assert flaky.step_id == "s3" and flaky.outcome == "transient"
        assert any(h["status"] == 500 for h in flaky.page["signals"]["http"])
        report = learn_from_run(store, "Shipping", third.run_id)
        assert not report.proposed
        assert [d.reason for d in report.dropped] == [
            "did not reproduce: the step passed on a retry by itself (a transient failure)"]
        assert len(table.list(product="Shipping")) == 1
    finally:
        store.close()

    # the same from the command line: learning again finds the same lesson (one skill, not two)
    out = subprocess.run([sys.executable, "-m", "core.cli", "skills", "learn", str(root), second.run_id, "--json",
                          str(tmp_path / "learn.json")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"proposed {proposed.skill_id}" in out.stdout
    data = json.loads((tmp_path / "learn.json").read_text())
    assert [s["id"] for s in data["proposed"]] == [proposed.skill_id]
