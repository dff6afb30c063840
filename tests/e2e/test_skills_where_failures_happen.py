"""Skills fire where failures happen (issue 25 item 1): after the step's own action, and over a covered target.

A small order page served on 127.0.0.1 whose own steps open popups that ask for a choice:

* focusing the Name field opens "Use your last entry?" (Use it / No, start fresh);
* clicking Next opens "Save this address for next time?" (Save address / Don't save) - with sweetalert2
  11.26.25 (vendored from the npm registry), its Save / Don't save;
* submitting the order form opens "Add a gift note?" (Add note / No thanks).

Every press of a popup's button, every Next and every order is a POST the server counts: the ground truth of
what was pressed and how often.  The flow's steps carry the after-state the recorder keeps (no dialog after
each step), so the step's verification sees the popup.  Before issue 25 a skill was asked only before a step:
the approved skill for the popup never fired and every run escalated at the step ("asks for a choice").
Now the skill answers the popup where verification meets it, and the step's verification runs again without
repeating the step's own action (Next and the order are posted exactly once).

A consent banner over the page when it loads is answered by a skill of that kind (``popup: consent``, choice
``accept``) at the pre-check that finds the target covered - the banner's words were never seen by the skill.

Runs go through :class:`~core.engine.session.ProjectSession` (what ``steadyhand run`` uses) and, for one,
``steadyhand run`` itself.
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
from core.domain.skill import (
    ElementCondition, RecoveryRule, Skill, SkillAction, SkillScope, SkillTrigger, VerifyRule,
)
from core.engine.control import Answer, HeadlessControl
from core.engine.events import SkillFinished, SkillFired
from core.engine.session import ProjectSession
from core.project import load_project
from core.store import Store
from core.store.skills import SkillTable

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
PRODUCT = "Orders"
SWAL = Path(__file__).parent / "fixtures" / "vendor" / "sweetalert2-11.26.25" / "sweetalert2.all.min.js"

_DIALOG = """<div class="pop" style="position:fixed;inset:0;background:rgba(0,0,0,.4)">
  <div role="dialog" aria-modal="true" aria-labelledby="%(id)s" style="background:#fff;margin:160px auto;width:380px;padding:16px">
  <h2 id="%(id)s">%(title)s</h2><p>%(text)s</p>
  <button type="button" data-post="%(a_post)s">%(a)s</button> <button type="button" data-post="%(b_post)s">%(b)s</button>
  </div></div>"""

PAGE = """<!doctype html><html><head><title>Order</title>
<style>body{font-family:sans-serif;margin:40px} label{display:block;margin-top:12px}</style></head>
<body><h1>New order</h1>
%(banner)s
<form id="order" onsubmit="return false">
<label for="name">Name</label><input id="name" autocomplete="off">
<p><button type="button" id="next">Next</button></p>
<p><button type="submit" id="place">Place order</button></p>
</form>
<p id="status"></p>
%(swal)s
<script>
const post = (path) => fetch(path, {method: 'POST', body: '{}'});
const popups = %(popups)s;
const show = (html) => {
  const holder = document.createElement('div'); holder.innerHTML = html;
  const pop = holder.firstElementChild; document.body.appendChild(pop);
  pop.querySelectorAll('[data-post]').forEach((b) => b.addEventListener('click', () => { post(b.dataset.post); pop.remove(); }));
};
document.querySelectorAll('#banner [data-post]').forEach((b) => b.addEventListener('click', () => {
  post(b.dataset.post); document.getElementById('banner').remove(); }));
let asked = false;
document.getElementById('name').addEventListener('focus', () => {
  if (popups.focus && !asked) { asked = true; show(popups.focus); }
});
document.getElementById('next').onclick = () => {
  post('/api/next');
  document.getElementById('status').textContent = 'Address checked for ' + document.getElementById('name').value;
  if (window.Swal && popups.swal) {
    Swal.fire({title: 'Save this address for next time?', showDenyButton: true, confirmButtonText: 'Save address',
               denyButtonText: "Don't save", allowEscapeKey: false, allowOutsideClick: false})
      .then((r) => post('/api/swal/' + (r.isConfirmed ? 'confirm' : r.isDenied ? 'deny' : 'dismiss')));
  } else if (popups.click) show(popups.click);
};
document.getElementById('order').addEventListener('submit', () => {
  post('/api/order');
  document.getElementById('status').textContent = 'Order placed for ' + document.getElementById('name').value;
  if (popups.submit) show(popups.submit);
});
</script>%(extra)s</body></html>"""

POPUPS = {
    "focus": _DIALOG % {"id": "le", "title": "Use your last entry?", "text": "You typed a name here yesterday.",
                        "a": "Use it", "a_post": "/api/last/use", "b": "No, start fresh", "b_post": "/api/last/fresh"},
    "click": _DIALOG % {"id": "sa", "title": "Save this address for next time?", "text": "We keep it on this device.",
                        "a": "Save address", "a_post": "/api/save/yes", "b": "Don't save", "b_post": "/api/save/no"},
    "submit": _DIALOG % {"id": "gn", "title": "Add a gift note?", "text": "A short message printed on the slip.",
                         "a": "Add note", "a_post": "/api/gift/yes", "b": "No thanks", "b_post": "/api/gift/no"},
}
BANNER = """<div id="banner" style="position:fixed;inset:0;background:rgba(0,0,0,.5);z-index:10">
  <div style="background:#fff;margin:120px auto;width:420px;padding:16px">
  <p>This shop stores small files on your device to remember your basket and to count visits. Pick what you allow.</p>
  <button type="button" data-post="/api/banner/yes">Allow everything</button>
  <button type="button" data-post="/api/banner/no">Refuse everything</button>
  <button type="button" data-post="/api/banner/more">Customise</button></div></div>"""
#: "Use your last entry?" over the page when it loads; "More choices" shows "No, start fresh" 8 s later.
SLOW = ("""<div id="banner" style="position:fixed;inset:0;background:rgba(0,0,0,.4);z-index:10">
  <div role="dialog" aria-modal="true" aria-labelledby="sl" style="background:#fff;margin:160px auto;width:380px;padding:16px">
  <h2 id="sl">Use your last entry?</h2><p>You typed a name here yesterday.</p>
  <button type="button" data-post="/api/last/use">Use it</button>
  <button type="button" id="more">More choices</button><span id="later"></span></div></div>
  <script>document.getElementById('more').onclick = () => {
    document.getElementById('later').textContent = 'Loading the other choices...'; setTimeout(() => {
    document.getElementById('later').innerHTML = '<button type="button" data-post="/api/last/fresh">No, start fresh</button>';
    document.querySelectorAll('#later [data-post]').forEach((b) => b.addEventListener('click', () => {
      post(b.dataset.post); document.getElementById('banner').remove(); }));
  }, 8000); };</script>""")
#: The same banner saying "cookies": a consent banner by its words, with other buttons than the skill saw.
CONSENT_BANNER = BANNER.replace("small files on your device", "cookies")


class Site:
    """The order page with the popups named in ``popups`` (keys of :data:`POPUPS`, ``"swal"``) and a banner."""

    def __init__(self) -> None:
        self.popups: set[str] = set()
        self.banner = ""
        self.extra = ""  # more script at the end of the page
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
                import json
                chosen = {k: v for k, v in POPUPS.items() if k in site.popups}
                if "swal" in site.popups:
                    chosen["swal"] = "1"
                swal = '<script src="/vendor/sweetalert2.all.min.js"></script>' if "swal" in site.popups else ""
                self._send(200, (PAGE % {"popups": json.dumps(chosen), "swal": swal, "banner": site.banner,
                                          "extra": site.extra}).encode())

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
    """Records every escalation and stops the run."""

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
        "name": PRODUCT, "base_url": base_url, "browser": {"headless": True}, "max_steps": 100,
        "waits": {"retries": 2, "retry_delay_ms": 100}}), encoding="utf-8")
    no_dialog = {"dialog": False, "url_pattern": "/order"}
    steps = [
        {"id": "s1", "name": "Fill Name", "action": "input", "value": "Ada Lovelace", "after": no_dialog,
         "target": {"tag": "input", "role": "textbox", "name": "Name", "label": "Name", "id": "name"}},
        {"id": "s2", "name": "Next", "action": "click", "after": no_dialog,
         "target": {"tag": "button", "role": "button", "name": "Next", "text": "Next", "id": "next", "type": "button"}},
        {"id": "s3", "name": "Place order", "action": "click", "reversible": False, "after": no_dialog,
         "target": {"tag": "button", "role": "button", "name": "Place order", "text": "Place order", "id": "place",
                    "type": "submit"}},
    ]
    (root / "flows" / "order.yaml").write_text(yaml.safe_dump({"name": "order", "start_url": "/order",
                                                              "steps": steps}, sort_keys=False), encoding="utf-8")
    return root


def _answer(sid: str, title: str, button: str) -> Skill:
    """A skill of elements as a takeover teaches it: in the dialog ``title``, press ``button``."""
    cond = ElementCondition(role="button", name=button)
    return Skill(id=sid, description=f"answer {title!r} with {button!r}",
                 trigger=SkillTrigger(required=(cond,), dialog_name=title),
                 actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name=button),
                                      note=f"answer {title!r}"),),
                 verify=(VerifyRule("absent", cond),), scope=SkillScope(product=PRODUCT), state="approved",
                 quality=0.8)


def _consent(choice: str = "accept") -> Skill:
    """A skill of a popup kind: a consent banner, answered with the person's ``choice`` by role."""
    return Skill(id="sk-00000000ca01", description=f"answer a cookie consent banner: {choice}",
                 trigger=SkillTrigger(popup="consent"),
                 actions=(SkillAction(Action("click"), note=f"the person's choice: {choice}", choice=choice),),
                 scope=SkillScope(product=PRODUCT), state="approved", quality=0.8)


SKILLS = {
    "focus": _answer("sk-0000000f0c05", "Use your last entry?", "No, start fresh"),
    "click": _answer("sk-00000000c11c", "Save this address for next time?", "Don't save"),
    "swal": _answer("sk-000000005a1a", "Save this address for next time?", "Don't save"),
    "submit": _answer("sk-00000000503b", "Add a gift note?", "No thanks"),
}


def _run(tmp_path: Path, site: Site, popups: set[str], skills: list[Skill], *, banner: str = ""
         ) -> tuple[Any, Person, list[Any], Path]:
    root = _project(tmp_path / "-".join(sorted(popups) or ["none"]), site.base_url)
    store = Store.open(root / ".steadyhand" / "store.sqlite")
    try:
        for s in skills:
            SkillTable(store).put(s)
    finally:
        store.close()
    project = load_project(root)
    site.popups, site.banner = set(popups), banner
    site.posts.clear()
    events: list[Any] = []
    person = Person()
    with ProjectSession(project, emit=events.append, headless=True, control=person) as session:
        result = session.run_flow(project.flows["order"])
    return result, person, events, root


def _uses(root: Path, skill_id: str) -> list[Any]:
    store = Store.open(root / ".steadyhand" / "store.sqlite")
    try:
        return SkillTable(store).uses(skill_id=skill_id)
    finally:
        store.close()


@pytest.mark.parametrize("kind", ["focus", "click", "submit", "swal"])
def test_a_popup_the_step_opens_is_answered_by_its_skill_and_the_step_is_not_done_again(
        tmp_path: Path, site: Site, kind: str) -> None:
    skill = SKILLS[kind]
    result, person, events, root = _run(tmp_path, site, {kind}, [skill])
    assert result.status == "passed", (result.error, [e.reason for e in person.escalations])
    assert not person.escalations
    pressed = {"focus": "/api/last/fresh", "click": "/api/save/no", "swal": "/api/swal/deny",
               "submit": "/api/gift/no"}[kind]
    assert site.posts[pressed] == 1, dict(site.posts)
    # the other answer never, and the step's own action once: never repeated after the popup was answered
    assert not {p for p in site.posts if p in ("/api/last/use", "/api/save/yes", "/api/swal/confirm",
                                               "/api/gift/yes")}, dict(site.posts)
    assert site.posts["/api/next"] == 1 and site.posts["/api/order"] == 1, dict(site.posts)
    assert any(isinstance(e, SkillFired) and e.skill_id == skill.id for e in events)
    assert [u.outcome for u in _uses(root, skill.id)] == ["passed"]


def test_without_a_skill_the_popup_the_step_opens_escalates_and_nothing_is_chosen(tmp_path: Path, site: Site) -> None:
    result, person, events, root = _run(tmp_path, site, {"click"}, [])
    assert result.status == "escalated"
    assert site.posts["/api/save/yes"] == 0 and site.posts["/api/save/no"] == 0
    assert site.posts["/api/order"] == 0
    assert person.escalations and "'Save this address for next time?'" in person.escalations[0].reason


def test_a_consent_banner_over_the_target_is_answered_by_the_kind_skill_with_the_persons_choice(
        tmp_path: Path, site: Site) -> None:
    skill = _consent("reject")
    result, person, events, root = _run(tmp_path, site, set(), [skill], banner=CONSENT_BANNER)
    assert result.status == "passed", (result.error, [e.reason for e in person.escalations])
    assert site.posts["/api/banner/no"] == 1 and site.posts["/api/banner/yes"] == 0, dict(site.posts)
    assert site.posts["/api/banner/more"] == 0 and site.posts["/api/order"] == 1
    finished = [e for e in events if isinstance(e, SkillFinished) and e.skill_id == skill.id]
    assert [e.outcome for e in finished] == ["passed"] and "'Refuse everything'" in finished[0].reason


def test_a_banner_that_does_not_say_cookies_or_consent_is_not_the_kinds_and_escalates(tmp_path: Path, site: Site
                                                                                      ) -> None:
    result, person, events, root = _run(tmp_path, site, set(), [_consent("accept")], banner=BANNER)
    assert result.status == "escalated"
    assert not [p for p in site.posts if p.startswith("/api/banner/")], dict(site.posts)
    assert not any(isinstance(e, SkillFired) for e in events)


def test_a_consent_banner_whose_buttons_do_not_say_which_is_reject_is_left_to_the_person(
        tmp_path: Path, site: Site) -> None:
    vague = CONSENT_BANNER.replace("Refuse everything", "Continue").replace("Allow everything", "Fine")
    result, person, events, root = _run(tmp_path, site, set(), [_consent("reject")], banner=vague)
    assert result.status == "escalated"
    assert not [p for p in site.posts if p.startswith("/api/banner/")], dict(site.posts)
    uses = _uses(root, "sk-00000000ca01")
    assert uses and all(u.outcome == "precondition" for u in uses)
    assert "not said" in uses[0].reason


@pytest.mark.parametrize("rule", [True, False])
def test_a_skills_recovery_rule_is_honoured_on_the_run_path(tmp_path: Path, site: Site, rule: bool) -> None:
    """error_recovery (seed 001): "on not_found: retry, at most 60 times" - the skill's second action looks for a
    button the popup shows 8 s after its first (long, so that a loaded machine does not find it at once); not
    found, the same action is tried again until it is (the skill's own time limit, 60 s, allows the wait);
    without the rule the skill ends at the first failure and the popup, a choice, goes to the person."""
    more = ElementCondition(role="button", name="More choices")
    skill = Skill(id="sk-0000000f1e55", description="answer 'Use your last entry?': start fresh",
                  trigger=SkillTrigger(required=(more,), dialog_name="Use your last entry?"),
                  actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="More choices")),
                           SkillAction(Action("click"), ElementDescriptor(role="button", name="No, start fresh"))),
                  scope=SkillScope(product=PRODUCT), state="approved", quality=0.8, max_ms=60_000,
                  recovery=(RecoveryRule("not_found", "retry", 60),) if rule else ())
    result, person, events, root = _run(tmp_path / str(rule), site, set(), [skill], banner=SLOW)
    uses = _uses(root, skill.id)
    if rule:
        assert result.status == "passed", (result.error, [e.reason for e in person.escalations])
        assert site.posts["/api/last/fresh"] == 1 and site.posts["/api/last/use"] == 0
        assert [u.outcome for u in uses] == ["passed"]
    else:
        assert result.status == "escalated"
        assert site.posts["/api/last/fresh"] == 0 and site.posts["/api/last/use"] == 0
        assert uses and uses[0].outcome != "passed"


def test_steadyhand_run_answers_the_popup_a_click_opens(tmp_path: Path, site: Site) -> None:
    root = _project(tmp_path / "cli", site.base_url)
    store = Store.open(root / ".steadyhand" / "store.sqlite")
    try:
        SkillTable(store).put(SKILLS["click"])
    finally:
        store.close()
    site.popups, site.banner = {"click"}, ""
    site.posts.clear()
    out = subprocess.run([sys.executable, "-m", "core.cli", "run", str(root), "--flow", "order", "--headless"],
                         cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert site.posts["/api/save/no"] == 1 and site.posts["/api/save/yes"] == 0
    assert site.posts["/api/next"] == 1 and site.posts["/api/order"] == 1


def test_an_uncaught_error_after_a_step_that_passed_starts_a_failure_record(tmp_path: Path, site: Site) -> None:
    """Seed 001 K2: the page's uncaught exception after a step's action is a failure signal - a record the
    skills learn from, though the step passed; a console.error the page logs by itself is none."""
    site.extra = """<script>console.error('a vendor script logs this at load');
document.getElementById('next').addEventListener('click', () => setTimeout(() => {
  throw new Error('basket service unavailable'); }, 0));</script>"""
    try:
        result, person, events, root = _run(tmp_path, site, set(), [])
    finally:
        site.extra = ""
    assert result.status == "passed", result.error
    store = Store.open(root / ".steadyhand" / "store.sqlite")
    try:
        records = SkillTable(store).failures()
    finally:
        store.close()
    assert [(r.step_index, r.error_type) for r in records] == [(1, "error_signal")], records
    assert "uncaught error" in records[0].message and "basket service unavailable" in records[0].message


#: The consent banner shown 150 ms after the page loads (while the first step is looked at or acted on), its
#: buttons wired 500 ms after it is drawn - as tarteaucitronjs 1.34 does: a press before that does nothing.
LATE_CONSENT = """<script>setTimeout(() => {
  const holder = document.createElement('div'); holder.innerHTML = %s;
  document.body.appendChild(holder.firstElementChild);
  setTimeout(() => document.querySelectorAll('#banner [data-post]').forEach((b) => b.addEventListener('click', () => {
    post(b.dataset.post); document.getElementById('banner').remove(); })), 500);
}, 150);</script>"""


def test_a_late_consent_banner_wired_late_is_answered_once_and_the_flow_passes(tmp_path: Path, site: Site) -> None:
    """The banner comes during the first step (after its checkpoint) and its buttons do nothing for half a
    second: the kind skill is asked before the checkpoint's rollback, presses again only when its first press
    showed no effect at all, and the person's choice is posted exactly once."""
    import json

    skill = _consent("reject")
    site.extra = LATE_CONSENT % json.dumps(CONSENT_BANNER)
    try:
        result, person, events, root = _run(tmp_path, site, set(), [skill])
    finally:
        site.extra = ""
    assert result.status == "passed", (result.error, [e.reason for e in person.escalations])
    assert site.posts["/api/banner/no"] == 1 and site.posts["/api/banner/yes"] == 0, dict(site.posts)
    assert site.posts["/api/next"] == 1 and site.posts["/api/order"] == 1, dict(site.posts)
    finished = [e for e in events if isinstance(e, SkillFinished) and e.skill_id == skill.id]
    assert finished and finished[-1].outcome == "passed", [(e.outcome, e.reason) for e in finished]


#: sweetalert2's popup held at opacity 0 for 600 ms before its own fade-in (``swal2-show``) runs: the first
#: frames of its show animation made long, as a loaded machine makes them (with Chromium's CPU ten times slower
#: the popup stays at opacity 0 for ~250 ms and the run failed 2 times in 3).  The dialog is in the page, with
#: role=dialog, from the click on; a look on those frames sees no dialog.
SWAL_FADING_IN = ("<style>.swal2-popup.swal2-show{animation-delay:.6s!important;"
                  "animation-fill-mode:both!important}</style>")


def test_a_popup_still_fading_in_after_the_step_is_answered_by_its_skill_at_that_step(
        tmp_path: Path, site: Site) -> None:
    """Next opens sweetalert2's popup, still invisible when the step is first looked at: the step's verification
    waits for its show animation (bounded) and meets it, the approved skill answers it after Next - the step that
    opened it - and Place order, the next step, finds its target free.  Before, Next passed on the invisible
    frame and the popup over Place order (irreversible) escalated: "asks for a choice"."""
    skill = SKILLS["swal"]
    site.extra = SWAL_FADING_IN
    try:
        result, person, events, root = _run(tmp_path, site, {"swal"}, [skill])
    finally:
        site.extra = ""
    assert result.status == "passed", (result.error, [e.reason for e in person.escalations])
    assert site.posts["/api/swal/deny"] == 1 and site.posts["/api/swal/confirm"] == 0, dict(site.posts)
    assert site.posts["/api/next"] == 1 and site.posts["/api/order"] == 1, dict(site.posts)
    finished = [(e.index, e.outcome) for e in events if isinstance(e, SkillFinished) and e.skill_id == skill.id]
    assert finished == [(1, "passed")], finished  # at Next, after its action
    assert [u.outcome for u in _uses(root, skill.id)] == ["passed"]


def _run_steps(tmp_path: Path, site: Site, steps: slice, *, drop_after: tuple[str, ...] = ()
               ) -> tuple[Any, Person, list[Any]]:
    """The swal page's order flow cut to ``steps``, without the recorded after-state of the steps named in
    ``drop_after`` (a flow recorded or imported without one), with the swal skill approved; run as in :func:`_run`."""
    root = _project(tmp_path, site.base_url)
    flow = yaml.safe_load((root / "flows" / "order.yaml").read_text(encoding="utf-8"))
    flow["steps"] = [{k: v for k, v in s.items() if not (k == "after" and s["id"] in drop_after)}
                     for s in flow["steps"][steps]]
    (root / "flows" / "order.yaml").write_text(yaml.safe_dump(flow, sort_keys=False), encoding="utf-8")
    store = Store.open(root / ".steadyhand" / "store.sqlite")
    try:
        SkillTable(store).put(SKILLS["swal"])
    finally:
        store.close()
    project = load_project(root)
    site.popups, site.banner = {"swal"}, ""
    site.posts.clear()
    events: list[Any] = []
    person = Person()
    with ProjectSession(project, emit=events.append, headless=True, control=person) as session:
        result = session.run_flow(project.flows["order"])
    return result, person, events


def test_a_popup_the_previous_step_opened_over_an_irreversible_steps_target_is_answered_by_its_skill(
        tmp_path: Path, site: Site) -> None:
    """Next (recorded without an after-state: its verification has nothing to say about dialogs) opens
    sweetalert2's popup; Place order, irreversible, finds its target covered by it.  The popup opened after the
    previous step acted - that step's effect met late - so the skill approved for it answers it as Next's
    verification would have, and the order is placed once.  Before, the irreversible step held the skill back
    and the run escalated: "asks for a choice"."""
    skill = SKILLS["swal"]
    result, person, events = _run_steps(tmp_path, site, slice(None), drop_after=("s2",))
    assert result.status == "passed", (result.error, [e.reason for e in person.escalations])
    assert not person.escalations
    assert site.posts["/api/swal/deny"] == 1 and site.posts["/api/swal/confirm"] == 0, dict(site.posts)
    assert site.posts["/api/next"] == 1 and site.posts["/api/order"] == 1, dict(site.posts)
    finished = [(e.index, e.outcome) for e in events if isinstance(e, SkillFinished) and e.skill_id == skill.id]
    assert finished == [(2, "passed")], finished  # over Place order's target


def test_a_popup_no_step_opened_over_an_irreversible_first_step_needs_a_skill_approved_for_that_step(
        tmp_path: Path, site: Site) -> None:
    """The same popup opened as the page loads, over Place order - the flow's first step, irreversible: no step
    of the flow opened it, and the skill was not approved for exactly that step, so it does not fire; the person
    is asked and nothing is chosen or ordered."""
    site.extra = """<script>document.getElementById('next').onclick();</script>"""
    try:
        result, person, events = _run_steps(tmp_path, site, slice(2, None))
    finally:
        site.extra = ""
    assert result.status == "escalated"
    assert not [p for p in site.posts if p.startswith("/api/swal/")] and site.posts["/api/order"] == 0, \
        dict(site.posts)
    assert not any(isinstance(e, SkillFired) for e in events)
