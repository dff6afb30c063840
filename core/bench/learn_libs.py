"""``steadyhand bench learn --libraries``: the learning loop on real popup libraries from the npm registry (issue 25 item 6).

A small order app (three steps: fill the name, Next, Place order) served on 127.0.0.1, one version per
library, each at a pinned version vendored under ``resources/vendor/`` with its licence (``npm pack
<pkg>@<version>``, the dist files as published; never fetched at run time):

=========================  =======  =====================================================================
version                    kind     what shows over the page when it loads
=========================  =======  =====================================================================
tarteaucitronjs 1.34.0     consent  its centred alert ("OK, accept all" / "Deny all cookies" / "Personalize")
vanilla-cookieconsent 3.1  consent  its box in the middle, page interaction disabled (react-cookie-consent needs
                                    React and a build: this one runs as published)
orejime 3.2.1              consent  its banner ("Accept" / "Decline" / "Configure"), styled by the app over the page
micromodal 0.7.0           notice   an "Update available" modal with "Install now" and its close button
driver.js 1.8.0            tour     a product tour's first step ("What's new"), with its close button
shepherd.js 11.2.0         tour     a tour step over a modal overlay, with its cancel icon (the last MIT version)
product tour (own)         tour     "Take a tour of the new order page": Start / Skip tour
upsell (own)               trap     "cookies" + "Accept all" that starts a paid trial, and a close button
newsletter (own)           trap     "cookies" + an e-mail field + "Accept" that subscribes, and a close button
destructive (own)          trap     "Accept" deletes every saved cookie and address / "Cancel"
=========================  =======  =====================================================================

The loop, with one store for the whole sequence:

1. **Before any skill**: the flow runs once on every version.  Each escalation is a takeover; where the popup
   is in the way the bench's person reads it (:func:`core.skills.kinds.read_popups`) - the stored state of
   that failure - and, on the first library of a kind, answers it with their choice (``--choice``: accept or
   reject) by the control the library's own markup gives that meaning (a CSS selector per library, not the
   engine's reading).
2. **Learnt**: from that takeover a skill of the popup's kind is proposed (:func:`core.skills.kinds.propose`),
   replayed on the stored states of the distinct failures of its kind (:func:`core.skills.kinds.validate`,
   3-5 cases) and approved through :func:`core.skills.library.approve` - which refuses it with fewer than 3.
3. **After**: the flow runs ``--runs`` times on every version, through the same
   :class:`~core.engine.session.ProjectSession` as ``steadyhand run``.

Figures per version, from the engine's events and from the app's own record (every choice a library stores
is posted by the page: ``/api/choice/<accept|reject>``; every press of a trap's or modal's button, every order):

* ``takeovers``: runs that needed a person (an escalation);
* ``hits``: runs where a skill answered the popup and the run passed; ``hit_rate`` = hits / runs of a version
  of the skill's kind;
* ``false_triggers``: skill uses that pressed something on a version not of the skill's kind;
* ``wrong_skill`` / ``wrong_engine``: choices recorded other than the person's, trap confirmations (a trial,
  a subscription, a deletion), "Install now", orders posted more than once - by a run where a skill pressed
  something (skill), else by the engine.

Bars (issue 25): after one approved skill for a kind, no takeover on any version of that kind; hit rate >= 90%;
0 false triggers; 0 wrong actions.
"""
from __future__ import annotations

import json
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml

from core.domain.resources import resource_path
from core.sites.server import LoopbackServer, Request, Response

__all__ = ["LIBRARIES", "Library", "LibRow", "LibReport", "run_library_benchmark", "format_library_report",
           "VENDOR"]

#: Where the vendored libraries are (``resources/vendor/<package>-<version>/``).
VENDOR = resource_path("vendor")
PRODUCT = "Shop"


@dataclass(frozen=True)
class Library:
    """One version of the app: its popup library (or trap), the kind of popup it shows, the page's additions.

    ``head`` is HTML put in the page's head (the library's files and its start), ``choice_js`` an expression the
    page polls that gives the choice the library stored (``"accept"`` / ``"reject"`` / ``""``), ``person`` the
    CSS selectors of the controls a person presses for each choice (the library's own markup)."""

    name: str
    package: str
    kind: str
    head: str
    choice_js: str = "''"
    person: Mapping[str, str] = field(default_factory=dict)


_POST = "const __post = (p) => fetch(p, {method: 'POST', body: '{}'});"

_TAC = """<script>var tarteaucitronForceLanguage = 'en';</script>
<script src="/vendor/tarteaucitronjs-1.34.0/tarteaucitron.min.js"></script>
<script>
tarteaucitron.init({privacyUrl: '', bodyPosition: 'top', hashtag: '#tarteaucitron', cookieName: 'tarteaucitron',
  orientation: 'middle', groupServices: false, showDetailsOnClick: true, serviceDefaultState: 'wait',
  showAlertSmall: false, cookieslist: false, closePopup: false, showIcon: false, adblocker: false,
  DenyAllCta: true, AcceptAllCta: true, highPrivacy: true, alwaysNeedConsent: false,
  handleBrowserDNTRequest: false, removeCredit: true, moreInfoLink: false, useExternalCss: false,
  useExternalJs: false, mandatory: true, mandatoryCta: false, googleConsentMode: false, partnersList: false});
tarteaucitron.services.shopstats = {key: 'shopstats', type: 'analytic', name: 'Shop statistics', uri: '',
  needConsent: true, cookies: [], js: function () {}, fallback: function () {}};
(tarteaucitron.job = tarteaucitron.job || []).push('shopstats');
</script>"""

_CC = """<link rel="stylesheet" href="/vendor/vanilla-cookieconsent-3.1.0/cookieconsent.css">
<script src="/vendor/vanilla-cookieconsent-3.1.0/cookieconsent.umd.js"></script>
<script>
window.addEventListener('load', () => CookieConsent.run({
  disablePageInteraction: true, hideFromBots: false,
  guiOptions: {consentModal: {layout: 'box', position: 'middle center'}},
  categories: {necessary: {enabled: true, readOnly: true}, analytics: {}},
  language: {default: 'en', translations: {en: {
    consentModal: {title: 'We use cookies', description: 'Cookies help us run the shop and count visits.',
      acceptAllBtn: 'Accept all', acceptNecessaryBtn: 'Reject all', showPreferencesBtn: 'Manage preferences'},
    preferencesModal: {title: 'Cookie preferences', acceptAllBtn: 'Accept all', acceptNecessaryBtn: 'Reject all',
      savePreferencesBtn: 'Save preferences', closeIconLabel: 'Close', sections: [
        {title: 'Analytics', description: 'Visits counted.', linkedCategory: 'analytics'}]}}}}
}));
</script>"""

_OREJIME = """<link rel="stylesheet" href="/vendor/orejime-3.2.1/orejime-standard.css">
<style>.orejime-Banner{position:fixed!important;inset:0!important;z-index:1000;background:rgba(255,255,255,.97)}</style>
<script>window.orejimeConfig = {privacyPolicyUrl: '/privacy',
  purposes: [{id: 'stats', title: 'Shop statistics', cookies: ['stats']}],
  cookie: {name: 'orejime'}};</script>
<script src="/vendor/orejime-3.2.1/orejime-standard-en.js"></script>"""

_MICROMODAL = """<script src="/vendor/micromodal-0.7.0/micromodal.min.js"></script>
<style>.modal{display:none}.modal.is-open{display:block}.modal__overlay{position:fixed;inset:0;background:rgba(0,0,0,.5);
display:flex;align-items:center;justify-content:center;z-index:50}.modal__container{background:#fff;padding:20px;width:380px}</style>
<script>window.addEventListener('load', () => {
  document.body.insertAdjacentHTML('beforeend', `<div class="modal" id="upd" aria-hidden="true">
  <div class="modal__overlay" tabindex="-1"><div class="modal__container" role="dialog" aria-modal="true"
  aria-labelledby="upd-title"><h2 id="upd-title">Update available</h2><p>A new version of the shop is ready.</p>
  <button type="button" class="modal__btn" id="install">Install now</button>
  <button type="button" class="modal__close" aria-label="Close modal" data-micromodal-close></button></div></div></div>`);
  document.getElementById('install').addEventListener('click', () => __post('/api/press/install'));
  MicroModal.init();
  MicroModal.show('upd', {onClose: () => __post('/api/press/modal-closed')});
});</script>"""

_DRIVER = """<link rel="stylesheet" href="/vendor/driver.js-1.8.0/driver.css">
<script src="/vendor/driver.js-1.8.0/driver.js.iife.js"></script>
<script>window.addEventListener('load', () => {
  const tour = window.driver.js.driver({showProgress: true, allowClose: true, onDestroyed: () => __post('/api/press/tour-closed'),
    steps: [{element: '#name', popover: {title: "What's new: the order page", description: 'Type the name here.'}},
            {element: '#next', popover: {title: 'Next', description: 'Then check the address.'}}]});
  tour.drive();
});</script>"""

_SHEPHERD = """<link rel="stylesheet" href="/vendor/shepherd.js-11.2.0/shepherd.css">
<script src="/vendor/shepherd.js-11.2.0/shepherd.min.js"></script>
<script>window.addEventListener('load', () => {
  const tour = new Shepherd.Tour({useModalOverlay: true, defaultStepOptions: {cancelIcon: {enabled: true}}});
  tour.addStep({title: "What's new: faster orders", text: 'Step 1 of 2: the name comes first.',
    attachTo: {element: '#name', on: 'bottom'}, buttons: [{text: 'Next', action: tour.next}]});
  tour.addStep({title: 'Then Next', text: 'Step 2 of 2: check the address.', attachTo: {element: '#next', on: 'bottom'},
    buttons: [{text: 'Done', action: tour.complete}]});
  tour.on('cancel', () => __post('/api/press/tour-closed'));
  tour.start();
});</script>"""

_OWN_TOUR = """<div id="tour" style="position:fixed;inset:0;background:rgba(0,0,0,.5);z-index:60">
<div role="dialog" aria-labelledby="tour-t" style="background:#fff;margin:120px auto;width:420px;padding:16px">
<h2 id="tour-t">Take a tour of the new order page</h2><p>Step 1 of 3: everything you need is on one page now.</p>
<button type="button" id="tour-start">Start</button> <button type="button" id="tour-skip">Skip tour</button></div></div>
<script>document.getElementById('tour-start').onclick = () => __post('/api/press/tour-started');
document.getElementById('tour-skip').onclick = () => { __post('/api/press/tour-closed');
  document.getElementById('tour').remove(); };</script>"""

_TRAP = """<div id="trap" style="position:fixed;inset:0;background:rgba(0,0,0,.5);z-index:60">
<div role="dialog" aria-modal="true" aria-labelledby="trap-t" style="background:#fff;margin:120px auto;width:420px;padding:16px">
<h2 id="trap-t">%(title)s</h2><p>%(text)s</p>%(extra)s
%(buttons)s</div></div>
<script>document.querySelectorAll('#trap [data-post]').forEach((b) => b.addEventListener('click', () => {
  __post(b.dataset.post); document.getElementById('trap').remove(); }));</script>"""


def _trap(title: str, text: str, buttons: list[tuple[str, str, str]], extra: str = "") -> str:
    html = " ".join(f'<button type="button" {("aria-label=%r " % label) if label else ""}data-post="{post}">'
                    f'{shown}</button>' for shown, label, post in buttons)
    return _TRAP % {"title": title, "text": text, "buttons": html, "extra": extra}


#: The versions of the app, in the order they run.
LIBRARIES: tuple[Library, ...] = (
    Library("tarteaucitron", "tarteaucitronjs 1.34.0", "consent", _TAC,
            "(document.cookie.match(/tarteaucitron=([^;]*)/) || ['', ''])[1].includes('=true') ? 'accept' : "
            "(document.cookie.match(/tarteaucitron=([^;]*)/) || ['', ''])[1].includes('=false') ? 'reject' : ''",
            {"accept": "#tarteaucitronPersonalize2", "reject": "#tarteaucitronAllDenied2"}),
    Library("cookieconsent", "vanilla-cookieconsent 3.1.0", "consent", _CC,
            "(window.CookieConsent && CookieConsent.validConsent()) ? (CookieConsent.acceptedCategory('analytics')"
            " ? 'accept' : 'reject') : ''",
            {"accept": "#cc-main .cm__btn[data-role=all]", "reject": "#cc-main .cm__btn[data-role=necessary]"}),
    Library("orejime", "orejime 3.2.1", "consent", _OREJIME,
            "(() => { const m = document.cookie.match(/orejime=([^;]*)/); if (!m) return ''; "
            "const v = JSON.parse(decodeURIComponent(m[1])); return v.stats ? 'accept' : 'reject'; })()",
            {"accept": ".orejime-Banner-saveButton", "reject": ".orejime-Banner-declineButton"}),
    Library("micromodal", "micromodal 0.7.0", "notice", _MICROMODAL),
    Library("driver", "driver.js 1.8.0", "tour", _DRIVER, person={"close": ".driver-popover-close-btn"}),
    Library("shepherd", "shepherd.js 11.2.0", "tour", _SHEPHERD, person={"close": ".shepherd-cancel-icon"}),
    Library("tour", "product tour (own)", "tour", _OWN_TOUR, person={"close": "#tour-skip"}),
    Library("upsell", "upsell (own trap)", "trap", _trap(
        "Shop Plus", "We use cookies to personalise your offer: try Plus free for 14 days, then $4.99/month.",
        [("Accept all", "", "/api/press/trial"), ("×", "Close", "/api/press/upsell-closed")])),
    Library("newsletter", "newsletter (own trap)", "trap", _trap(
        "Cookies and news", "Accept our cookies and get the newsletter every week.",
        [("Accept", "", "/api/press/subscribe"), ("×", "Close", "/api/press/newsletter-closed")],
        extra='<label>E-mail <input type="email" name="email"></label>')),
    Library("destructive", "destructive (own trap)", "trap", _trap(
        "Clear your data", "Accept to delete every saved cookie and address. This cannot be undone.",
        [("Accept", "", "/api/press/delete"), ("Cancel", "", "/api/press/cancel")])),
)

PAGE = """<!doctype html><html><head><title>Order</title><meta charset="utf-8">
<script>%(post)s</script>
<style>body{font-family:sans-serif;margin:40px} label{display:block;margin-top:12px}</style>%(head)s</head>
<body><h1>New order</h1>
<form id="order" onsubmit="return false">
<label for="name">Name</label><input id="name" autocomplete="off">
<p><button type="button" id="next">Next</button></p>
<p><button type="submit" id="place">Place order</button></p>
</form><p id="status"></p>
<script>
let __said = '';
setInterval(() => { let c = ''; try { c = %(choice)s; } catch (e) { c = ''; }
  if (c && c !== __said) { __said = c; __post('/api/choice/' + c); } }, 150);
document.getElementById('next').onclick = () => {
  document.getElementById('status').textContent = 'Address checked for ' + document.getElementById('name').value; };
document.getElementById('order').addEventListener('submit', () => {
  __post('/api/order');
  document.getElementById('status').textContent = 'Order placed for ' + document.getElementById('name').value; });
</script></body></html>"""


class App(LoopbackServer):
    """The order app serving ``lib`` (set per run) and the vendored files; ``posts`` counts every POST by path.

    A :class:`core.sites.server.LoopbackServer` (werkzeug, 127.0.0.1, a free port, ``Cache-Control: no-store``):
    ``GET /vendor/<file>`` serves a vendored library file, any other ``GET`` the order page, any ``POST``
    ``{"ok": true}``.  Started on creation; :meth:`close` stops it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.lib: Library = LIBRARIES[0]
        self.posts: Counter[str] = Counter()
        self._posts_lock = threading.Lock()
        self.start()

    def handle(self, request: Request) -> Response:
        if request.method == "POST":
            with self._posts_lock:
                self.posts[request.path] += 1
            return Response(200, b'{"ok": true}', "application/json")
        if request.path.startswith("/vendor/"):
            f = (VENDOR / request.path[len("/vendor/"):]).resolve()
            if VENDOR.resolve() in f.parents and f.is_file():
                return Response(200, f.read_bytes(), "text/css" if f.suffix == ".css" else "text/javascript")
            return Response(404, b"", "text/plain")
        page = PAGE % {"post": _POST, "head": self.lib.head, "choice": self.lib.choice_js}
        return Response(200, page.encode(), "text/html; charset=utf-8")

    def close(self) -> None:
        self.stop()


def _project(root: Path, base_url: str) -> Path:
    (root / "flows").mkdir(parents=True, exist_ok=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({
        "name": PRODUCT, "base_url": base_url, "browser": {"headless": True},
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


class _Person:
    """The bench's person: at an escalation reads the popup in the way (the failure's stored state) and, when
    asked to, presses their choice on it by the library's own selector; then stops the run (a takeover)."""

    def __init__(self, driver: Callable[[], Any]) -> None:
        from core.engine.control import HeadlessControl

        self.control = HeadlessControl()
        self.control.escalate = self.escalate  # type: ignore[method-assign]
        self.driver = driver
        self.escalations: list[Any] = []
        self.states: list[dict[str, Any]] = []
        self.press: str = ""  # a CSS selector to press at the next escalation ("" : nothing)
        self.pressed: str = ""

    def escalate(self, escalation: Any) -> Any:
        from core.engine.control import Answer
        from core.skills.kinds import read_popups

        self.escalations.append(escalation)
        drv = self.driver()
        popups = read_popups(drv) if drv is not None else None
        if popups:
            self.states.append(popups[-1])
            if self.press:
                name = drv.evaluate("(sel) => { const e = document.querySelector(sel); if (!e) return null; "
                                    "const n = (e.getAttribute('aria-label') || e.innerText || e.value || '')"
                                    ".replace(/\\s+/g, ' ').trim(); e.click(); return n; }", self.press)
                self.pressed = str(name or "")
                self.press = ""
        return Answer("stop")


@dataclass
class LibRow:
    """One version's figures over its runs (counts)."""

    version: str
    package: str
    kind: str
    phase: str
    runs: int = 0
    passed: int = 0
    takeovers: int = 0
    skill_uses: int = 0
    hits: int = 0
    abstained: int = 0
    false_triggers: int = 0
    wrong_skill: int = 0
    wrong_engine: int = 0
    detail: list[str] = field(default_factory=list)

    @property
    def hit_rate(self) -> float | None:
        """Hits per run on a version of a kind a skill is learnt for (consent, tour); None on the others."""
        return self.hits / self.runs if self.runs and self.kind in ("consent", "tour") else None


@dataclass
class LibReport:
    """The benchmark's rows (before and after the skill), the skill learnt and its validation."""

    choice: str
    rows: list[LibRow] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    skill: str = ""
    validation: str = ""
    approved: bool = False
    seconds: float = 0.0

    def to_json_dict(self) -> dict[str, Any]:
        return {"choice": self.choice, "skill": self.skill, "validation": self.validation, "approved": self.approved,
                "seconds": round(self.seconds, 1),
                "rows": [{**asdict(r), "hit_rate": r.hit_rate} for r in self.rows]}


_WRONG_PRESSES = ("/api/press/trial", "/api/press/subscribe", "/api/press/delete", "/api/press/install")


def _one_run(app: App, root: Path, lib: Library, person: _Person, choice: str) -> tuple[Any, list[Any], Counter[str]]:
    from core.engine.session import ProjectSession
    from core.project import load_project

    project = load_project(root)
    app.lib = lib
    app.posts.clear()
    events: list[Any] = []
    with ProjectSession(project, emit=events.append, headless=True, control=person.control) as session:
        person.driver = lambda: getattr(session, "driver", None)
        result = session.run_flow(project.flows["order"])
        time.sleep(0.4)  # the page's last poll of the stored choice
    return result, events, Counter(app.posts)


def _judge(row: LibRow, lib: Library, result: Any, events: list[Any], posts: Counter[str], choice: str,
           skill_kinds: Mapping[str, str], escalated: int, reasons: tuple[str, ...] = ()) -> None:
    """Add one run to ``row``: ``skill_kinds`` maps each approved skill's id to the kind it answers (a skill
    that presses on a version of another kind is a false trigger); ``reasons`` are the run's escalations' reasons
    (kept in ``row.detail`` beside each unpassed skill use's reason)."""
    from core.engine.events import SkillFinished, SkillFired

    row.runs += 1
    row.passed += result.status == "passed"
    row.takeovers += escalated
    if escalated and reasons:
        row.detail.append("escalated: " + "; ".join(reasons))
    fired = [e for e in events if isinstance(e, SkillFired)]
    finished = [e for e in events if isinstance(e, SkillFinished)]
    pressed = bool(fired)
    row.skill_uses += len(fired)
    row.abstained += sum(e.outcome == "precondition" for e in finished)
    row.detail += [f"skill {e.skill_id} {e.outcome}: {e.reason}" for e in finished if e.outcome != "passed"]
    if pressed and result.status == "passed" and any(e.outcome == "passed" for e in finished):
        row.hits += 1
    alien = [e for e in fired if skill_kinds.get(e.skill_id, "") != lib.kind]
    if alien:
        row.false_triggers += len(alien)
        row.detail.append(f"skill {alien[0].skill_id} fired on {lib.name}")
    wrong = [p for p in posts if p in _WRONG_PRESSES]
    wrong += [p for p in posts if p.startswith("/api/choice/") and p != f"/api/choice/{choice}"]
    if posts.get("/api/order", 0) > 1:
        wrong.append("/api/order twice")
    if wrong:
        if pressed:
            row.wrong_skill += len(wrong)
        else:
            row.wrong_engine += len(wrong)
        row.detail.append(f"{'skill' if pressed else 'engine'}: {', '.join(wrong)}")


def run_library_benchmark(*, choice: str = "accept", runs: int = 3, libraries: tuple[Library, ...] = LIBRARIES,
                          on_row: Callable[[LibRow], None] | None = None, workdir: Path | None = None) -> LibReport:
    """Run the loop of the module doc; returns its figures.  ``choice`` is the person's answer to a consent
    banner (``accept`` / ``reject``), ``runs`` the runs per version after the skill was approved."""
    from core.skills import kinds
    from core.skills.library import approve
    from core.store import Store
    from core.store.skills import SkillTable

    if choice not in ("accept", "reject"):
        raise ValueError("choice is accept or reject")
    t0 = time.monotonic()
    report = LibReport(choice)
    app = App()
    tmp = tempfile.TemporaryDirectory(prefix="steadyhand-learn-libs-") if workdir is None else None
    try:
        root = _project(Path(tmp.name if tmp else workdir) / "shop", app.base_url)  # type: ignore[arg-type]
        person = _Person(lambda: None)
        # 1. before any skill: every version once; the person answers the first library of each kind
        choices = {"consent": choice, "tour": "close"}
        learnt_from: dict[str, tuple[Library, dict[str, Any], str]] = {}
        states: dict[str, list[dict[str, Any]]] = {}
        for lib in libraries:
            row = LibRow(lib.name, lib.package, lib.kind, "before")
            n = len(person.escalations)
            if lib.kind in choices and lib.kind not in learnt_from:
                person.press = lib.person.get(choices[lib.kind], "")
            person.pressed = ""
            before_states = len(person.states)
            result, events, posts = _one_run(app, root, lib, person, choice)
            _judge(row, lib, result, events, posts, choice, {}, len(person.escalations) - n,
                   tuple(e.reason for e in person.escalations[n:]))
            new = person.states[before_states:]
            if lib.kind in choices:
                states.setdefault(lib.kind, []).extend(new)
                if lib.kind not in learnt_from and person.pressed and new:
                    learnt_from[lib.kind] = (lib, new[0], person.pressed)
            person.press = ""
            report.rows.append(row)
            if on_row:
                on_row(row)
        # 2. learnt: proposed from the takeover, replayed on the stored failures of its kind, approved
        learnt: dict[str, str] = {}
        for kind, (lib, state, pressed) in learnt_from.items():
            skill = kinds.propose(state, pressed, product=PRODUCT, flow="order")
            if skill is None:
                report.skills.append(f"{kind}: nothing proposed from {lib.package} (pressed {pressed!r})")
                continue
            cases, passed, reasons = kinds.validate(skill, states.get(kind, []))
            from dataclasses import replace

            from core.domain.skill import SkillValidation
            skill = replace(skill, validation=SkillValidation(cases=cases, passed=passed, reproduced=cases > 0,
                                                              reasons=tuple(reasons)))
            line = (f"{skill.id}: {skill.description} (learnt on {lib.package}, pressed {pressed!r}); validation "
                    f"{passed}/{cases} distinct failures of its kind")
            store = Store.open(root / ".steadyhand" / "store.sqlite")
            try:
                table = SkillTable(store)
                table.put(skill)
                try:
                    approve(table, skill.id)
                    learnt[skill.id] = kind
                    line += "; approved"
                except Exception as exc:  # noqa: BLE001 - a refusal is a figure of the benchmark
                    line += f"; not approved: {exc}"
            finally:
                store.close()
            report.skills.append(line)
            report.validation += f"{kind}: {passed}/{cases} distinct failures of its kind; " + "; ".join(reasons) + "\n"
        report.approved = bool(learnt)
        report.skill = "; ".join(report.skills)
        # 3. after: every version ``runs`` times
        for lib in libraries:
            row = LibRow(lib.name, lib.package, lib.kind, "after")
            for _ in range(runs):
                n = len(person.escalations)
                result, events, posts = _one_run(app, root, lib, person, choice)
                _judge(row, lib, result, events, posts, choice, learnt, len(person.escalations) - n,
                       tuple(e.reason for e in person.escalations[n:]))
            report.rows.append(row)
            if on_row:
                on_row(row)
    finally:
        app.close()
        if tmp is not None:
            tmp.cleanup()
    report.seconds = time.monotonic() - t0
    return report


def format_library_report(report: LibReport) -> str:
    """The report as a plain table (one row per version and phase) with the skill and its validation."""
    head = (f"{'phase':7} {'version':30} {'kind':8} {'runs':>4} {'passed':>6} {'takeovers':>9} {'hits':>4} "
            f"{'hit rate':>8} {'false trig.':>11} {'wrong skill':>11} {'wrong engine':>12}")
    out = [f"Learning on real libraries (person's consent choice: {report.choice})", head, "-" * len(head)]
    for r in report.rows:
        rate = "-" if r.hit_rate is None else f"{r.hit_rate:.0%}"
        out.append(f"{r.phase:7} {r.package:30} {r.kind:8} {r.runs:>4} {r.passed:>6} {r.takeovers:>9} {r.hits:>4} "
                   f"{rate:>8} {r.false_triggers:>11} {r.wrong_skill:>11} {r.wrong_engine:>12}")
    out += ["", "skills:"] + [f"  {x}" for x in report.skills] + ["validation:"] + [
        f"  {x}" for x in report.validation.splitlines() if x] + [
            f"approved: {'yes' if report.approved else 'no'}  ({report.seconds:.0f} s)"]
    notes = [f"  {r.phase} {r.version}: {d}" for r in report.rows for d in r.detail]
    if notes:
        out += ["", "Notes:"] + notes
    return "\n".join(out)


def main_json(report: LibReport) -> str:
    """The report as JSON text."""
    return json.dumps(report.to_json_dict(), indent=2)
