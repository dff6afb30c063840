"""The engine makes no choice for the person, and a skill never acts on a look-alike (issue 25 items 3 and 4).

A small order page served on 127.0.0.1: "Next" shows "Finish", and a popup
of the kind the server is set to appears over the page at that moment
(mid-flow, as real interstitials do).  The flow fills a name, presses Next,
then Finish.  Every press of a popup's button is a POST the server counts:
that count is the ground truth of what the engine or a skill pressed.

* a consent banner offering Accept all / Reject all: the engine chooses
  neither, the run escalates and says the popup asks for a choice;
* a "What's new" dialog with only a close button (×, aria-label "Close"):
  closed, the run passes;
* a dialog that fades out over 1.2 s after its Close is pressed: cleared,
  never escalated as "could not be dismissed";
* a consent dialog whose "That's ok" an approved skill answers: the skill
  fires and the run passes (the skill works where it was learnt); when the
  dialog fades out over 1.2 s, the use is still a pass, not a failure;
* an upsell and a destructive dialog reusing the skill's words ("That's ok"):
  the skill does not press it; the upsell is closed by its ×, the
  destructive one (That's ok / Cancel, no close) escalates.

The same three kinds with sweetalert2 11.26.25 (vendored from the npm registry with
its license, served locally): its "What's new" closes by "Close this dialog", its
Accept all / Reject all escalates, its "Delete all data" is closed, never confirmed.

Runs go through :class:`~core.engine.session.ProjectSession` (what
``steadyhand run`` uses) and, for the consent banner, ``steadyhand run`` itself.
"""
from __future__ import annotations

import subprocess
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.domain import Action, ElementDescriptor, Escalation
from core.domain.skill import ElementCondition, Skill, SkillAction, SkillScope, SkillTrigger, VerifyRule
from core.engine.control import Answer, HeadlessControl
from core.engine.events import Recovered, SkillFired
from core.engine.session import ProjectSession
from core.project import load_project
from core.store import Store
from core.store.skills import SkillTable

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
PRODUCT = "Orders"

_POPUPS = {
    "consent": """<div id="pop" style="position:fixed;inset:0;background:rgba(0,0,0,.4)">
  <div class="box" style="background:#fff;margin:160px auto;width:380px;padding:16px">
  <p>We use cookies to measure how the shop is used.</p>
  <button data-post="/api/consent/accept">Accept all</button> <button data-post="/api/consent/reject">Reject all</button>
  </div></div>""",
    "whatsnew": """<div id="pop" style="position:fixed;inset:0;background:rgba(0,0,0,.4)">
  <div role="dialog" aria-modal="true" aria-labelledby="wn" style="background:#fff;margin:160px auto;width:380px;padding:16px">
  <h2 id="wn">What's new</h2><p>Orders now keep your last address.</p>
  <button aria-label="Close" data-post="/api/close">&times;</button></div></div>""",
    "fade": """<div id="pop" style="position:fixed;inset:0;background:rgba(0,0,0,.4);transition:opacity 1.2s linear">
  <div role="dialog" aria-modal="true" aria-labelledby="tt" style="background:#fff;margin:160px auto;width:380px;padding:16px">
  <h2 id="tt">Tip of the day</h2><p>Press Finish when the order is complete.</p>
  <button data-post="/api/close" data-fade="1">Close</button></div></div>""",
    "consent_ok": """<div id="pop" style="position:fixed;inset:0;background:rgba(0,0,0,.4)">
  <div role="dialog" aria-modal="true" aria-labelledby="ck" style="background:#fff;margin:160px auto;width:380px;padding:16px">
  <h2 id="ck">Cookies</h2><p>We use cookies to remember your basket.</p>
  <button data-post="/api/consent/ok">That's ok</button></div></div>""",
    "consent_fade": """<div id="pop" style="position:fixed;inset:0;background:rgba(0,0,0,.4);transition:opacity 1.2s linear">
  <div role="dialog" aria-modal="true" aria-labelledby="ck" style="background:#fff;margin:160px auto;width:380px;padding:16px">
  <h2 id="ck">Cookies</h2><p>We use cookies to remember your basket.</p>
  <button data-post="/api/consent/ok" data-fade="1">That's ok</button></div></div>""",
    "upsell": """<div id="pop" style="position:fixed;inset:0;background:rgba(0,0,0,.4)">
  <div role="dialog" aria-modal="true" aria-labelledby="up" style="background:#fff;margin:160px auto;width:380px;padding:16px">
  <h2 id="up">Orders Plus</h2><p>Try Plus free for 14 days, then $4.99/month.</p>
  <button data-post="/api/trial">That's ok</button> <button aria-label="Close" data-post="/api/close">&times;</button>
  </div></div>""",
    "destructive": """<div id="pop" style="position:fixed;inset:0;background:rgba(0,0,0,.4)">
  <div role="dialog" aria-modal="true" aria-labelledby="cl" style="background:#fff;margin:160px auto;width:380px;padding:16px">
  <h2 id="cl">Clean up</h2><p>Delete all saved addresses? This cannot be undone.</p>
  <button data-post="/api/delete">That's ok</button> <button data-post="/api/cancel">Cancel</button>
  </div></div>""",
}

#: sweetalert2 11.26.25 as published on the npm registry (vendored with its license; served by the site).
SWAL = Path(__file__).parent / "fixtures" / "vendor" / "sweetalert2-11.26.25" / "sweetalert2.all.min.js"
#: sweetalert2 dialogs by kind: ``Swal.fire`` options (the page posts how each ended: confirm, deny, dismiss-<how>).
_SWALS = {
    "swal_whatsnew": "{title: \"What's new\", text: 'Orders now keep your last address.', showConfirmButton: false,"
                     " showCloseButton: true}",
    "swal_consent": "{title: 'Cookies', text: 'We use cookies to measure how the shop is used.',"
                    " confirmButtonText: 'Accept all', showDenyButton: true, denyButtonText: 'Reject all',"
                    " allowEscapeKey: false, allowOutsideClick: false}",
    "swal_delete": "{title: 'Clean up', text: 'Remove every saved address?', confirmButtonText: 'Delete all data',"
                   " showCloseButton: true}",
}
_SWAL_POPUP = """<script>window.swalOptions = %s;</script>"""

PAGE = """<!doctype html><html><head><title>Order</title>
<style>body{font-family:sans-serif;margin:40px} label{display:block;margin-top:12px}</style></head>
<body><h1>New order</h1>
<label for="name">Name</label><input id="name">
<p><button type="button" id="next">Next</button> <button type="button" id="finish" hidden>Finish</button></p>
<p id="status"></p>
<template id="popup">%(popup)s</template>%(swal)s
<script>
const post = (path) => fetch(path, {method: 'POST', body: '{}'});
document.getElementById('next').onclick = () => {
  document.getElementById('next').hidden = true;
  document.getElementById('finish').hidden = false;
  if (window.swalOptions) {
    Swal.fire(window.swalOptions).then((r) => post('/api/swal/' + (r.isConfirmed ? 'confirm' : r.isDenied ? 'deny'
                                                                   : 'dismiss-' + r.dismiss)));
    return;
  }
  const t = document.getElementById('popup');
  if (!t.innerHTML.trim()) return;
  document.body.appendChild(t.content.cloneNode(true));
  const pop = document.getElementById('pop');
  pop.querySelectorAll('[data-post]').forEach((b) => b.addEventListener('click', () => {
    post(b.dataset.post);
    if (b.dataset.fade) { pop.style.opacity = '0'; setTimeout(() => pop.remove(), 1250); }
    else pop.remove();
  }));
};
document.getElementById('finish').onclick = async () => {
  await post('/api/finish');
  document.getElementById('status').textContent = 'Order placed for ' + document.getElementById('name').value;
};
</script></body></html>"""


class Site:
    """The order page with the popup ``kind`` (``""``: none); ``posts`` counts every POST by path."""

    def __init__(self) -> None:
        self.kind = ""
        self.posts: Counter[str] = Counter()
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
                if self.path.startswith("/vendor/sweetalert2.all.min.js"):
                    self._send(200, SWAL.read_bytes(), "text/javascript")
                    return
                swal = ""
                if site.kind in _SWALS:
                    swal = ('<script src="/vendor/sweetalert2.all.min.js"></script>'
                            + _SWAL_POPUP % _SWALS[site.kind])
                self._send(200, (PAGE % {"popup": _POPUPS.get(site.kind, ""), "swal": swal}).encode())

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                site.posts[self.path] += 1
                self._send(200, b'{"ok": true}', "application/json")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Person(HeadlessControl):
    """Records every escalation and stops the run (a person who would look later)."""

    def __init__(self) -> None:
        self.escalations: list[Escalation] = []

    def escalate(self, escalation: Escalation) -> Answer:
        self.escalations.append(escalation)
        return Answer("stop")


@pytest.fixture(scope="module")
def site():  # noqa: ANN201
    s = Site()
    yield s
    s.close()


def _project(root: Path, base_url: str) -> Path:
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({
        "name": PRODUCT, "base_url": base_url, "browser": {"headless": True},
        "waits": {"retries": 2, "retry_delay_ms": 100}}), encoding="utf-8")
    steps = [
        {"id": "s1", "name": "Fill Name", "action": "input", "value": "Ada Lovelace",
         "target": {"tag": "input", "role": "textbox", "name": "Name", "label": "Name", "id": "name"}},
        {"id": "s2", "name": "Next", "action": "click",
         "target": {"tag": "button", "role": "button", "name": "Next", "text": "Next", "id": "next", "type": "button"}},
        {"id": "s3", "name": "Finish", "action": "click", "expect": "content",
         "target": {"tag": "button", "role": "button", "name": "Finish", "text": "Finish", "id": "finish",
                    "type": "button"}},
    ]
    (root / "flows" / "order.yaml").write_text(yaml.safe_dump({"name": "order", "start_url": "/order",
                                                              "steps": steps}, sort_keys=False), encoding="utf-8")
    return root


def _thats_ok_skill() -> Skill:
    """A consent skill as a person approves it: press "That's ok" where a "That's ok" button is."""
    ok = ElementCondition(role="button", name="That's ok")
    return Skill(id="sk-00000000c00c", description="answer the cookie notice with That's ok",
                 trigger=SkillTrigger(required=(ok,)),
                 actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="That's ok"),
                                      note="answer the cookie notice"),),
                 verify=(VerifyRule("absent", ok),), scope=SkillScope(product=PRODUCT), state="approved",
                 quality=0.8)


def _run(tmp_path: Path, site: Site, kind: str, *, skill: bool = False) -> tuple[Any, Person, list[Any]]:
    root = _project(tmp_path / kind, site.base_url)
    if skill:
        store = Store.open(root / ".steadyhand" / "store.sqlite")
        try:
            SkillTable(store).put(_thats_ok_skill())
        finally:
            store.close()
    project = load_project(root)
    site.kind = kind
    site.posts.clear()
    events: list[Any] = []
    person = Person()
    with ProjectSession(project, emit=events.append, headless=True, control=person) as session:
        result = session.run_flow(project.flows["order"])
    return result, person, events


def test_a_consent_banner_mid_flow_is_not_answered_the_run_escalates_and_says_why(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "consent")
    assert result.status == "escalated"
    assert site.posts["/api/consent/accept"] == 0 and site.posts["/api/consent/reject"] == 0
    assert site.posts["/api/finish"] == 0
    (esc,) = person.escalations
    assert esc.index == 2 and "asks for a choice" in esc.reason
    assert "'Accept all'" in esc.reason and "'Reject all'" in esc.reason


def test_a_whats_new_dialog_with_only_a_close_button_is_closed_and_the_run_passes(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "whatsnew")
    assert result.status == "passed", result.error
    assert site.posts["/api/close"] == 1 and site.posts["/api/finish"] == 1
    assert not person.escalations
    assert any(isinstance(e, Recovered) and e.ok and "by 'Close'" in e.detail for e in events)


def test_a_dialog_that_fades_out_is_cleared_and_never_escalated(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "fade")
    assert result.status == "passed", (result.error, [e.reason for e in person.escalations])
    assert not person.escalations
    assert site.posts["/api/close"] == 1 and site.posts["/api/finish"] == 1
    dismissed = [e for e in events if isinstance(e, Recovered) and e.how in ("dismiss", "rollback")]
    assert dismissed and all(e.ok for e in dismissed)
    assert not any("did not close" in e.detail for e in dismissed)


def test_the_approved_skill_answers_the_notice_it_was_made_for(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "consent_ok", skill=True)
    assert result.status == "passed", result.error
    assert site.posts["/api/consent/ok"] == 1 and site.posts["/api/finish"] == 1
    assert any(isinstance(e, SkillFired) for e in events)


def test_a_notice_the_skill_answers_that_fades_out_is_a_passed_use_not_a_failure(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "consent_fade", skill=True)
    assert result.status == "passed", result.error
    assert site.posts["/api/consent/ok"] == 1 and site.posts["/api/finish"] == 1
    store = Store.open(tmp_path / "consent_fade" / ".steadyhand" / "store.sqlite")
    try:
        table = SkillTable(store)
        uses = table.uses(skill_id="sk-00000000c00c")
        skill = table.get("sk-00000000c00c")
    finally:
        store.close()
    assert [u.outcome for u in uses] == ["passed"], [(u.outcome, u.reason) for u in uses]
    assert skill is not None and skill.quality > 0.8


def test_an_upsell_reusing_the_skills_words_is_not_answered_by_it_and_is_closed(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "upsell", skill=True)
    assert site.posts["/api/trial"] == 0  # the paid trial: never started
    assert result.status == "passed", result.error
    assert site.posts["/api/close"] == 1 and site.posts["/api/finish"] == 1
    store = Store.open(tmp_path / "upsell" / ".steadyhand" / "store.sqlite")
    try:
        table = SkillTable(store)
        uses = table.uses(skill_id="sk-00000000c00c")
        skill = table.get("sk-00000000c00c")
    finally:
        store.close()
    assert uses and all(u.outcome != "passed" for u in uses)
    assert any("look-alike" in u.reason and ("price" in u.reason or "trial" in u.reason) for u in uses)
    assert skill is not None and skill.quality == pytest.approx(0.8)  # a look-alike is no failure of the skill


def test_a_destructive_dialog_reusing_the_skills_words_is_never_confirmed(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "destructive", skill=True)
    assert site.posts["/api/delete"] == 0 and site.posts["/api/cancel"] == 0
    assert result.status == "escalated"
    (esc,) = person.escalations
    assert "asks for a choice" in esc.reason


def test_steadyhand_run_escalates_on_the_consent_banner_and_presses_nothing(tmp_path: Path, site) -> None:
    root = _project(tmp_path / "cli", site.base_url)
    site.kind = "consent"
    site.posts.clear()
    out = subprocess.run([sys.executable, "-m", "core.cli", "run", str(root), "--flow", "order", "--headless"],
                         cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert out.returncode != 0, out.stdout
    assert "asks for a choice" in out.stdout + out.stderr
    assert site.posts["/api/consent/accept"] == 0 and site.posts["/api/consent/reject"] == 0
    assert site.posts["/api/finish"] == 0


def test_sweetalert2_whats_new_is_closed_by_its_close_button(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "swal_whatsnew")
    assert result.status == "passed", result.error
    assert not person.escalations
    assert site.posts["/api/swal/dismiss-close"] == 1 and site.posts["/api/finish"] == 1
    assert any(isinstance(e, Recovered) and e.ok and "'Close this dialog'" in e.detail for e in events)


def test_sweetalert2_accept_or_reject_is_left_to_the_person(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "swal_consent")
    assert result.status == "escalated"
    assert site.posts["/api/swal/confirm"] == 0 and site.posts["/api/swal/deny"] == 0
    assert site.posts["/api/finish"] == 0
    (esc,) = person.escalations
    assert "asks for a choice" in esc.reason and "'Accept all'" in esc.reason


def test_sweetalert2_delete_all_data_is_closed_never_confirmed(tmp_path: Path, site) -> None:
    result, person, events = _run(tmp_path, site, "swal_delete")
    assert site.posts["/api/swal/confirm"] == 0
    assert result.status == "passed", result.error
    assert site.posts["/api/swal/dismiss-close"] == 1 and site.posts["/api/finish"] == 1
