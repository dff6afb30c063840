"""Skills of a popup kind: the trigger says what the popup *is*, the action the person's choice *by role*.

Issue 25 item 2: a skill learnt on one consent library must carry over to another of the same kind (other
markup, other words), and item 3: never to a look-alike.  A skill of elements names the controls it presses
("That's ok"), so it fires only where those words are.  A skill of a popup kind names instead

* the kind (``Skill.trigger.popup``, :data:`KINDS`): ``consent`` - a dialog or fixed layer whose text mentions
  cookies or consent, that covers the page (a modal, or a fixed layer over the step's target) and offers a
  choice; ``tour`` - a product tour's step (a "what's new" walkthrough) offering to go on, skip or close;
* the person's choice by role in that kind (``SkillAction.choice``): ``accept`` / ``reject`` / ``settings`` /
  ``close`` for consent, ``close`` (skip, done) for a tour.

At run time the popups over the page are read (:func:`read_popups`, one script); the topmost is given a kind
(:func:`kind_of`), refused when it is a look-alike (:func:`not_the_kind`: a price, a payment form, a text field
such as a newsletter's e-mail, or words of paying, subscribing and deleting that the kind never says), and each
control's role told from its name (:func:`role_of`).  The skill presses the *one* control whose role is the
person's choice; where none or several carry it - the page does not say which button is which - it abstains
and the person is asked (:func:`answer`).  A wrong press is worse than an escalation.

The vocabularies are compiled by hand from everyday consent and tour phrasing in English, French, German and
Spanish, checked against the default English texts of tarteaucitronjs 1.34.0, orejime 3.2.1,
vanilla-cookieconsent 3.1.0 and driver.js 1.8.0 (``bench learn --libraries``); matched on words, case-folded,
punctuation dropped.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from core.domain.skill import QUALITY_FAILURE_DELTA, QUALITY_SUCCESS_DELTA, Skill
from core.recover.dismiss import CLOSE_NAMES, CLOSE_VERBS
from core.skills.runtime import LOOKALIKE_WORDS, PRICE

__all__ = ["Kind", "KINDS", "KIND_WORDS", "kind_skill_words", "ROLES", "KEY_ATTR", "POPUPS_JS", "read_popups", "kind_of", "not_the_kind", "role_of",
           "answer", "approved_kind_skills", "record_use", "REVIEW_QUALITY", "propose", "validate", "replace_quality"]

#: Below this quality a kind skill stops answering until a person approves it again (K7's review threshold).
REVIEW_QUALITY = 0.3
#: The attribute :data:`POPUPS_JS` marks each control with (its key), to press it again by selector.
KEY_ATTR = "data-steadyhand-kind"


def _norm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text or "").casefold().replace("’", "'")
    t = re.sub(r"[^\w\s×✕✖]+", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def _words(text: str) -> set[str]:
    return set(_norm(text).split())


@dataclass(frozen=True)
class Kind:
    """A kind of popup: the words that say it (any one, as a whole word or phrase), the roles its controls
    may carry, and the words it never says (besides :data:`LOOKALIKE_WORDS` and a price)."""

    name: str
    words: tuple[str, ...]
    roles: tuple[str, ...]
    needs_choice: bool = True


#: The kinds a skill may name (``Skill.trigger.popup``).
KINDS: Mapping[str, Kind] = {
    "consent": Kind("consent", (
        "cookie", "cookies", "consent", "gdpr", "rgpd", "dsgvo", "trackers", "tracking technologies", "traceurs",
        "consentement", "einwilligung", "zustimmung", "consentimiento", "galletas", "privacy preferences",
        "your privacy", "votre vie privée", "datenschutz",
        # orejime's own banner says neither cookies nor consent: "We collect and process your personal
        # information for the following purposes ... please read our privacy policy"
        "personal information", "personal data", "privacy policy", "données personnelles",
        "politique de confidentialité", "personenbezogene daten", "datenschutzerklärung", "datos personales",
        "política de privacidad"), ("accept", "reject", "settings", "close")),
    "tour": Kind("tour", (
        "tour", "walkthrough", "what's new", "whats new", "new feature", "new features", "take a tour",
        "getting started", "onboarding", "step 1", "1 of", "1 sur", "1 von", "1 de"), ("close",),
        needs_choice=False),
}

#: What a kind is, in words for the person who approves a skill of it (``skills show``, the studio's review form).
KIND_WORDS: Mapping[str, str] = {
    "consent": "consent popup (a dialog or layer over the page that mentions cookies, consent or personal data "
               "and offers a choice)",
    "tour": "step of a product tour (a \"what's new\" walkthrough offering to go on, skip or close)",
}


def kind_skill_words(skill: Skill) -> str:
    """What a skill of a popup kind does, in one sentence for a reviewer; "" for a skill of elements.

    E.g. ``answers every consent popup (...) by pressing the one control whose name means 'accept' (such as
    'Accept all', 'OK'); where none or several do, it does nothing and you are asked``.  The examples are the
    first phrases of :data:`ROLES` for the choice."""
    kind = skill.trigger.popup
    if not kind:
        return ""
    choice = skill.actions[0].choice if skill.actions else ""
    what = KIND_WORDS.get(kind, f"{kind} popup")
    if choice not in ROLES:
        return (f"answers every {what}, but names no choice ({choice!r}): it never presses anything (propose it "
                "again from a takeover)")
    phrases, words = ROLES[choice]
    examples = ", ".join(repr(x) for x in (words[:2] + phrases[:1]))
    return (f"answers every {what} by pressing the one control whose name means {choice!r} (such as {examples}); "
            "where none or several do, it does nothing and you are asked")


#: Role words and phrases, normalised by :func:`_norm`: a control's name says a role when a phrase equals it or
#: one of its words is a role word (see :func:`role_of`).
ROLES: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # (phrases, words)
    "accept": (("ok", "okay", "got it", "that s ok", "thats ok", "i understand", "i agree", "agree", "sounds good",
                "fine by me", "ok for me", "yes", "d accord", "einverstanden", "vale", "entendido", "c est ok",
                "ok tout accepter", "ok accept all"),
               ("accept", "accepter", "accepte", "j accepte", "akzeptieren", "aceptar", "acepto", "allow",
                "autoriser", "erlauben", "permitir", "agree", "zustimmen")),
    "reject": (("no thanks", "no thank you", "necessary only", "only necessary", "essential only", "only essential",
                "necessary cookies only", "use necessary cookies only", "only required", "required only",
                "continue without accepting", "continuer sans accepter", "nur notwendige", "nur essenzielle",
                "solo necesarias", "non merci"),
               ("reject", "decline", "deny", "refuse", "refuser", "refus", "ablehnen", "rechazar", "disallow",
                "opt out", "optout")),
    "settings": (("learn more", "more options", "more info", "more information", "en savoir plus", "mehr erfahren",
                  "más información", "mas informacion", "let me choose", "choose", "show purposes"),
                 ("settings", "setting", "customize", "customise", "personalize", "personalise", "preferences",
                  "preference", "manage", "options", "configure", "personnaliser", "paramétrer", "parametrer",
                  "paramètres", "parametres", "einstellungen", "anpassen", "configurar", "personalizar",
                  "ajustes")),
    "close": (tuple(_norm(n) for names in CLOSE_NAMES for n in names) + ("skip", "skip tour", "end tour",
              "exit tour", "done", "finish", "finish tour", "terminer", "passer", "überspringen", "omitir"),
              tuple(_norm(v) for v in CLOSE_VERBS)),
}
#: Words that make a control's role unclear whatever else it says: a selection, a save, a negation.
_UNCLEAR = frozenset({"selected", "selection", "save", "enregistrer", "speichern", "guardar", "not", "don", "dont",
                      "without", "sans", "ohne", "sin", "nicht", "pas", "only", "seulement", "nur", "solo"})
#: Fields a consent banner never holds: a text field (a newsletter's e-mail, a search, a sign-in).
_TEXT_TYPES = frozenset({"text", "email", "tel", "password", "search", "number", "url", ""})


def role_of(name: str) -> str:
    """The role a control's name says (``accept`` / ``reject`` / ``settings`` / ``close``), "" when it says none
    or more than one ("Accept selected", "Don't accept")."""
    n = _norm(name)
    if not n:
        return ""
    said = {role for role, (phrases, _w) in ROLES.items() if n in phrases}
    if len(said) == 1:
        return said.pop()
    if said:
        return ""
    words = set(n.split())
    if len(words) > 6:
        return ""  # a sentence, not a control's name
    joined = f" {n} "
    said = {role for role, (_p, ws) in ROLES.items() if any(f" {w} " in joined for w in ws)}
    if len(said) > 1 and "close" in said:
        said.discard("close")  # "Accept and close": the choice is the accept; closing is how the banner ends
    if len(said) != 1 or words & _UNCLEAR:
        return ""
    return said.pop()


#: Reads the popups over the page (main frame), topmost last: dialogs (``dialog[open]``, ``role=dialog`` /
#: ``alertdialog``, ``aria-modal``) and fixed layers over the centre of the view or over ``point`` (CSS px).
#: Each: ``{"key", "name", "text" (at most 1,500 chars), "modal", "cover" (share of the view it or its backdrop
#: covers, 0..1), "payment", "fields": [input types], "controls": [{"key", "name", "enabled"}]}``; every
#: control is marked with ``data-steadyhand-kind`` = its key.
POPUPS_JS = """(pt) => {
  const vis = e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 1 && r.height > 1 && s.visibility !== 'hidden' && s.display !== 'none' && s.opacity !== '0'; };
  const roots = [];
  const add = e => { if (e && !roots.includes(e) && !roots.some(r => r.contains(e))) {
    for (let i = roots.length - 1; i >= 0; i--) if (e.contains(roots[i])) roots.splice(i, 1);
    roots.push(e); } };
  for (const d of document.querySelectorAll('dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true]'))
    if (vis(d) && d.querySelector('button,a[href],[role=button],input[type=button],input[type=submit]')) add(d);
  const pts = [[innerWidth / 2, innerHeight / 2]];
  if (pt && pt[0] >= 0 && pt[1] >= 0) pts.push(pt);
  for (const [x, y] of pts) {
    let top = null;
    for (let n = document.elementFromPoint(x, y); n && n !== document.body && n !== document.documentElement; n = n.parentElement)
      if (getComputedStyle(n).position === 'fixed') top = n;
    if (top && vis(top) && !top.querySelector('main,[role=main],h1') && !top.matches('main,[role=main]')
        && top.querySelectorAll('button,a[href],input,select,textarea,[role=button]').length <= 40
        && top.querySelector('button,a[href],[role=button],input[type=button],input[type=submit]')) add(top);
  }
  const clean = t => (t || '').replace(/\\s+/g, ' ').trim();
  const nameOf = d => {
    const by = d.getAttribute('aria-labelledby');
    const lab = by ? by.split(/\\s+/).map(id => document.getElementById(id)).filter(Boolean).map(x => x.innerText).join(' ') : '';
    const h = d.querySelector('h1,h2,h3,h4,h5,legend');
    return clean(d.getAttribute('aria-label') || lab || (h ? h.innerText : '')).slice(0, 120);
  };
  const area = innerWidth * innerHeight;
  const coverOf = d => {
    let best = 0;
    for (let n = d; n && n !== document.body; n = n.parentElement) {
      const r = n.getBoundingClientRect();
      const w = Math.max(0, Math.min(r.right, innerWidth) - Math.max(r.left, 0));
      const h = Math.max(0, Math.min(r.bottom, innerHeight) - Math.max(r.top, 0));
      best = Math.max(best, (w * h) / area);
    }
    // a backdrop laid beside the dialog (a sibling layer covering the view)
    for (const b of document.querySelectorAll('body > *')) {
      if (b.contains(d) || !vis(b)) continue;
      const s = getComputedStyle(b); if (s.position !== 'fixed') continue;
      const r = b.getBoundingClientRect(); if (r.width * r.height >= 0.9 * area) best = Math.max(best, 1);
    }
    return Math.min(1, best);
  };
  const out = [];
  roots.forEach((d, ri) => {
    const controls = [];
    d.querySelectorAll('button,a[href],[role=button],input[type=button],input[type=submit]').forEach((c, ci) => {
      if (!vis(c)) return;
      const key = ri + '.' + ci;
      c.setAttribute('data-steadyhand-kind', key);
      controls.push({key, name: clean(c.getAttribute('aria-label') || c.innerText || c.value || c.title || '').slice(0, 80),
        enabled: !c.disabled && c.getAttribute('aria-disabled') !== 'true'});
    });
    const fields = Array.from(d.querySelectorAll('input:not([type=hidden]):not([type=button]):not([type=submit]),textarea'))
      .filter(vis).map(i => i.tagName.toLowerCase() === 'textarea' ? 'text' : (i.getAttribute('type') || '').toLowerCase());
    out.push({key: String(ri), name: nameOf(d), text: clean(d.innerText || d.textContent).slice(0, 1500),
      modal: d.getAttribute('aria-modal') === 'true' || (d.tagName === 'DIALOG' && d.matches(':modal')),
      cover: coverOf(d), fields,
      payment: !!d.querySelector('input[autocomplete^="cc-"],input[name*="card" i],input[id*="card" i],input[name*="cvc" i],input[name*="cvv" i]'),
      controls});
  });
  return out;
}"""


def read_popups(driver: Any, point: tuple[float, float] | None = None) -> list[dict[str, Any]] | None:
    """The popups over the page (:data:`POPUPS_JS`), topmost last; None when they cannot be read."""
    try:
        got = driver.evaluate(POPUPS_JS, list(point) if point else [-1, -1])
    except Exception:  # noqa: BLE001 - a page that does not answer (navigating, a fake driver): nothing known
        return None
    return [dict(x) for x in got if isinstance(x, dict)] if isinstance(got, list) else None


def _says(text: str, phrases: Iterable[str]) -> str:
    joined = f" {_norm(text)} "
    return next((p for p in phrases if f" {_norm(p)} " in joined), "")


def kind_of(popup: Mapping[str, Any]) -> str:
    """The kind of a popup (a key of :data:`KINDS`), "" when it is of none.  Consent first: a banner that
    mentions cookies is a consent banner even when it says "tour"."""
    text = f"{popup.get('name', '')} {popup.get('text', '')}"
    for kind in KINDS.values():
        if _says(text, kind.words):
            return kind.name
    return ""


def not_the_kind(popup: Mapping[str, Any], kind: str) -> str:
    """Why a popup that says ``kind``'s words is a look-alike and not of that kind ("" when it is of it).

    A look-alike holds a payment form or a text field (a newsletter's e-mail), mentions a price, or says a
    word of paying, subscribing, upgrading or destroying (:data:`core.skills.runtime.LOOKALIKE_WORDS`); a
    consent banner must also offer a choice (two controls or more, with names).  That it is in
    the way is what :func:`read_popups` found (a dialog, or a fixed layer over the view's centre or the
    step's target)."""
    text = f"{popup.get('name', '')} {popup.get('text', '')}"
    if popup.get("payment"):
        return "it holds a payment form"
    fields = [str(f) for f in popup.get("fields") or ()]
    if any(f in _TEXT_TYPES for f in fields):
        return "it holds a text field (a sign-up or newsletter form, not a choice)"
    price = PRICE.search(text)
    if price:
        return f"it mentions a price ({price.group(0).strip()!r})"
    words = _words(text)
    said = [w for w in LOOKALIKE_WORDS if _norm(w) in words]
    if said:
        return "it says " + ", ".join(repr(w) for w in said[:3])
    k = KINDS.get(kind)
    if k is not None and k.needs_choice:
        names = {_norm(str(c.get("name", ""))) for c in popup.get("controls") or () if c.get("enabled", True)}
        if len(names - {""}) < 2:
            return "it offers no choice"
    return ""


def answer(skills: Sequence[Skill], popup: Mapping[str, Any]
           ) -> tuple[Skill, Mapping[str, Any] | None, str] | None:
    """Which approved kind skill answers ``popup`` and by which control: ``(skill, control, reason)``.

    ``control`` is None when the skill applies but abstains (the page does not say which control is the
    person's choice: none or several carry its role); ``reason`` says what was chosen or why not.  None when
    no skill applies (the popup is of no kind a skill names, or a look-alike of it).
    """
    kind = kind_of(popup)
    if not kind or not_the_kind(popup, kind):
        return None
    what = f"the {kind} popup" + (f" {popup.get('name')!r}" if popup.get("name") else "")
    for skill in skills:
        if skill.trigger.popup != kind or not skill.actions or skill.quality < REVIEW_QUALITY:
            continue
        choice = skill.actions[0].choice
        if choice not in KINDS[kind].roles:
            continue
        hits = [c for c in popup.get("controls") or () if c.get("enabled", True)
                and role_of(str(c.get("name", ""))) == choice]
        names = {_norm(str(c.get("name", ""))) for c in hits}
        if len(hits) == 1 or (len(hits) > 1 and len(names) == 1 and choice == "close"):
            name = str(hits[0].get("name", "")) or choice
            return skill, hits[0], f"answered {what} by {name!r} ({choice}, the person's choice)"
        said = [str(c.get("name", "")) for c in popup.get("controls") or () if c.get("name")]
        if not hits:
            why = f"no control of {what} says {choice!r} (it offers " + " / ".join(repr(s) for s in said[:5]) + ")"
        else:
            why = (f"{len(hits)} controls of {what} could mean {choice!r} ("
                   + " / ".join(repr(str(c.get('name', ''))) for c in hits[:4]) + ")")
        return skill, None, why + ": which one is the person's choice is not said; asking the person"
    return None


def approved_kind_skills(store: Any, product: str) -> list[Skill]:
    """The product's approved skills of a popup kind, best quality first; [] without a store or when it cannot
    be read."""
    if store is None:
        return []
    from core.store.skills import SkillTable

    try:
        return [s for s in SkillTable(store).list(product=product, state="approved")
                if s.kind == "do" and s.trigger.popup]
    except Exception:  # noqa: BLE001 - an unreadable library: no skill answers
        return []


def record_use(store: Any, skill: Skill, *, run_id: str, flow: str, index: int, step_id: str, outcome: str,
               reason: str, ms: float, errors: list[str]) -> None:
    """Record one use (K7: +0.1 quality for a pass, -0.5 for a failure, nothing for an abstention); a store
    failure is kept in ``errors``, never raised."""
    if store is None:
        return
    from core.store.skills import SkillTable

    ok, failed = outcome == "passed", outcome == "failed"
    try:
        SkillTable(store).record_use(skill.id, run_id=run_id, flow=flow, step_index=index, step_id=step_id,
                                     outcome=outcome, reason=reason, ms=round(ms, 1),
                                     quality_delta=QUALITY_SUCCESS_DELTA if ok else QUALITY_FAILURE_DELTA if failed
                                     else 0.0, count="success" if ok else "failure" if failed else "")
    except Exception as exc:  # noqa: BLE001 - recording is best effort
        errors.append(f"skill use not recorded: {exc}")


def propose(popup: Mapping[str, Any], pressed: str, *, product: str, run_id: str = "", flow: str = "",
            step_ids: Sequence[str] = (), step_index: int = -1) -> Skill | None:
    """A proposed skill of a popup kind from what a person did (K3): ``popup`` is the popup's read
    (:func:`read_popups`) where the person took over, ``pressed`` the name of the control they pressed.

    None when the popup is of no kind, a look-alike, or the control's name says no role the kind knows - a
    skill is proposed only where its meaning is clear.  The skill's id is derived from its kind and choice
    (one skill per kind and choice in a product; learnt again it is the same skill)."""
    import hashlib
    from core.domain import Action
    from core.domain.skill import SkillAction, SkillProvenance, SkillScope, SkillTrigger

    kind = kind_of(popup)
    role = role_of(pressed)
    if not kind or not_the_kind(popup, kind) or role not in KINDS[kind].roles:
        return None
    sid = "sk-" + hashlib.sha1(f"{product}|kind|{kind}|{role}".encode()).hexdigest()[:12]
    return Skill(id=sid, description=f"answer a {kind} popup with the person's choice: {role}",
                 trigger=SkillTrigger(popup=kind),
                 actions=(SkillAction(Action("click"), note=f"the person pressed {pressed!r} ({role})", choice=role),),
                 scope=SkillScope(product=product),
                 provenance=SkillProvenance(source="correction", run_id=run_id, flow=flow, step_ids=tuple(step_ids),
                                            step_index=step_index, cause="unexpected_state",
                                            cause_confidence=1.0, extractor="kinds"),
                 state="proposed", quality=0.5)


def _digest(popup: Mapping[str, Any]) -> str:
    names = sorted(_norm(str(c.get("name", ""))) for c in popup.get("controls") or ())
    return f"{_norm(str(popup.get('name', '')))}|{_norm(str(popup.get('text', '')))[:300]}|{'/'.join(names)}"


def validate(skill: Skill, states: Sequence[Mapping[str, Any]], *, most: int = 5) -> tuple[int, int, list[str]]:
    """Replay ``skill`` on the stored states of failures (K5): ``(cases, passed, reasons)``.

    ``states`` are popup reads (:func:`read_popups`) stored where failures of the skill's kind happened;
    duplicates (the same popup, the same failure's own attempts) count once, at most ``most`` (5) are used.
    A case passes when the skill, run on it, picks exactly one control (it would press it) - an abstention,
    or a look-alike it would act on, fails it.  Look-alikes among the states are no cases of the kind.
    """
    seen: set[str] = set()
    cases = passed = 0
    reasons: list[str] = []
    for st in states:
        if kind_of(st) != skill.trigger.popup or not_the_kind(st, skill.trigger.popup):
            continue
        key = _digest(st)
        if key in seen:
            continue
        seen.add(key)
        cases += 1
        got = answer([replace_quality(skill)], st)
        if got is not None and got[1] is not None:
            passed += 1
            reasons.append(f"case {cases}: {got[2]}")
        else:
            reasons.append(f"case {cases}: " + (got[2] if got is not None else "the skill did not apply"))
        if cases >= most:
            break
    return cases, passed, reasons


def replace_quality(skill: Skill) -> Skill:
    """``skill`` with at least the review quality (a proposal's replay is not held back by its quality)."""
    from dataclasses import replace

    return replace(skill, quality=max(skill.quality, REVIEW_QUALITY))
