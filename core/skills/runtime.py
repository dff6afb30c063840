"""Skills at run time (K6): the first link of the decide chain, held to the heal's safety bar.

Before each decision :class:`SkillDecider` reads the product's approved
skills (a cheap query, so a skill retired during a run stops firing at the
next decision), retrieves candidates - a *rule channel* for the flow's
explicit task type (:func:`task_type_of`: ``login``, ``upload``,
``export``...) and a *similarity channel* otherwise (top 3 by
:func:`similarity`) - and checks each trigger against the live observation
(:func:`core.skills.trigger.check_trigger`).  When one holds, the decision
is the skill's next action (a :class:`~core.domain.Step` built from its
:class:`~core.domain.skill.SkillAction`, ``{target.*}`` placeholders bound,
``{param}`` ones left to the pipeline), source ``"skill"``.  The flow step
is not consumed: the engine stays at the same index after a skill action
(:func:`core.engine.goal.next_index`) and asks again; the skill goes on with
its next action, or finishes (its verify rules are checked on the page) and
the flow step runs.

The safety bar (never weakened):

* a confirming, deleting or submitting control (:func:`guarded_control`:
  the guard's write verbs and destructive phrases, :mod:`core.plan.guard`, a
  submit button, an icon saying nothing) is pressed only when the trigger
  names it as a required element and it is that very element;
* an irreversible flow step is acted on only by a skill approved for exactly
  that step (``irreversible_ok`` and the step's id in its provenance);
* a trigger that only half holds never fires (recorded as ``half`` once a
  run, and only when one of its required elements is on the page);
* a skill fires at most once per step; the same skill holding again at the
  same step after a use that passed is a loop - it stops firing there and
  a failure is counted (a use that failed has been counted already);
* a skill target is acted on only when the element found matches the
  skill's own descriptor exactly (never a look-alike the locator healed to);
* a skill does only :data:`SKILL_ACTIONS` (no ``navigate``, ``back`` or
  ``upload``);
* the flow step goes first: while its own target resolves on the page
  (:func:`flow_target`) visible, enabled and not covered, no skill fires; a
  skill never acts in the flow step's target's dialog / container;
* every targeted kind goes through one guard (:func:`guard_problem`) over
  every text the element carries (:func:`element_texts`, and the live ones
  read just before acting): a guarded word passes only when the trigger
  names the element by those very words;
* a key is pressed only where it lands on its target (checked live), never
  Enter or Space onto a control that takes no text, and without a target
  only :data:`TARGETLESS_KEYS`;
* a skill never types a secret (a declared secret's placeholder, or a
  value holding a secret of the run);
* a skill whose quality fell below ``review_quality`` (0.3, K7) stops firing
  until a person approves it again (a ``precondition`` use says so);
* deny rules (kind ``deny``): while their trigger holds, the elements their
  actions name are not acted on by any decider (:meth:`SkillDecider.denied`).
* never on a look-alike (:func:`lookalike`): the popup the skill's target
  is in - its whole text, read live just before acting, after every other
  check - must not mention a price, hold
  a payment form or say a word of :data:`LOOKALIKE_WORDS` (trial,
  subscribe, delete...) that the skill's own words do not say; such a use
  ends as ``precondition`` without counting a failure (the skill did
  nothing);
* what a skill's last action cleared is looked at once quiet: the look after
  it waits (up to 1,500 ms) for the popup it met to leave
  (:func:`core.engine.skilled.quiet_after`);
* the rules a skill is approved under are the rules it runs under:
  :func:`runtime_problem` (this guard on the skill as written) refuses its
  approval (:func:`core.skills.library.approve`).

Every use is recorded (:meth:`core.store.skills.SkillTable.record_use`)
with its time in ms and the quality moves of K7
(:data:`~core.domain.skill.QUALITY_SUCCESS_DELTA` +0.1,
:data:`~core.domain.skill.QUALITY_FAILURE_DELTA` -0.5) and announced through
``notify(kind, **fields)`` - the engine turns ``considered`` / ``fired`` /
``finished`` into its typed events.  This module never imports the engine.
"""
from __future__ import annotations

import fnmatch
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from core.progress import counted
from core.domain import Action, Candidate, ElementDescriptor, Flow, LocatorConfig, Observation, Step
from core.domain.skill import (
    QUALITY_FAILURE_DELTA, QUALITY_SUCCESS_DELTA, ElementCondition, Skill, SkillAction, VerifyRule,
)
from core.act.precheck import EDITABLE_ROLES
from core.locate import resolve
from core.locate.features import CONTEXT_MIN_SIMILARITY
from core.locate.textsim import normalize, text_similarity
from core.plan.decider import DecideContext, Decision
from core.plan.guard import DESTRUCTIVE_PHRASES, MODEL_ACTIONS, may_write
from core.project.params import ParameterError, bind_step
from core.store.skill_versions import skill_versions
from core.skills.trigger import (
    UnboundPlaceholder, bind_condition, bindings_for, check_trigger, condition_matches, find,
)

__all__ = ["SkillDecider", "TASK_WORDS", "SIMILAR_TOP", "task_type_of", "PageIndex", "similarity", "retrieve",
           "guarded_control", "guard_problem", "element_texts", "approved_for_step", "skill_step_id", "is_skill_step",
           "Notify", "SKILL_ACTIONS", "TARGETLESS_KEYS", "ACTIVATING_KEYS", "ARROW_CHANGES", "flow_target",
           "arrow_changes", "lookalike",
           "LOOKALIKE_WORDS", "PRICE", "runtime_problem", "recovery_for", "FAILURE_ON"]

#: Words that make a flow's task type explicit (the rule channel of K6), by task type.  Matched as whole
#: words in the flow's name and description (``sign_in`` and ``Sign in`` both say ``login``).
TASK_WORDS: Mapping[str, tuple[str, ...]] = {
    "login": ("login", "log in", "logon", "sign in", "signin"),
    "signup": ("signup", "sign up", "register"),
    "upload": ("upload",),
    "export": ("export", "download"),
    "search": ("search",),
    "checkout": ("checkout", "check out"),
}
#: How many skills the similarity channel keeps (K6: "top 3").
SIMILAR_TOP = 3
#: Keys a skill action pressed without a target that submit the focused form.
_SUBMIT_KEYS = ("enter", "numpadenter", "return")
#: What a skill may do: a model's actions (:data:`core.plan.guard.MODEL_ACTIONS`) less ``back`` - a skill never
#: navigates (no ``navigate``, no ``back``) and never uploads.
SKILL_ACTIONS = tuple(k for k in MODEL_ACTIONS if k not in ("back", "navigate", "upload"))
#: The only keys a skill may press without a target (they reach whatever has focus): leave, move focus, move.
TARGETLESS_KEYS = ("escape", "tab", "shift+tab", "arrowup", "arrowdown", "arrowleft", "arrowright")
#: Keys that activate the focused control (a click by keyboard): never pressed by a skill onto a control that
#: takes no text - the skill clicks it instead, where the guard sees what it presses.
ACTIVATING_KEYS = ("enter", "numpadenter", "return", "space", " ")
#: The focused elements a targetless arrow key would change the value of, as ``tags`` / ``roles`` (the role
#: attribute) / ``types`` (the type attribute), lower case: a select, a radio, a slider, a number field...
#: :meth:`SkillDecider.check_key` refuses the key before it is pressed, and the page library's key guard
#: (``armKey`` in ``core/perception/page_lib.js``) holds it back as it arrives by the same rule.
ARROW_CHANGES: Mapping[str, tuple[str, ...]] = {
    "tags": ("select",),
    "roles": ("select", "combobox", "listbox", "radio", "slider", "spinbutton", "menuitemradio", "tab"),
    "types": ("radio", "range", "number"),
}
#: Action kinds with a target that go through the guard (:func:`guard_problem`).
GUARDED_KINDS = ("click", "dblclick", "press", "check", "uncheck", "select", "input", "hover")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")

#: ``notify(kind, **fields)``: ``kind`` is ``"considered"`` / ``"fired"`` / ``"finished"``.
Notify = Callable[..., None]


def arrow_changes(key: str, focused: Mapping[str, Any]) -> bool:
    """True when ``key`` is an arrow and ``focused`` (``{"tag", "role", "type"}``, as read in the page) is a
    control an arrow changes the value of (:data:`ARROW_CHANGES`)."""
    return _keyname(key).startswith("arrow") and (
        str(focused.get("tag") or "").lower() in ARROW_CHANGES["tags"]
        or str(focused.get("role") or "").lower() in ARROW_CHANGES["roles"]
        or str(focused.get("type") or "").lower() in ARROW_CHANGES["types"])


def _keyname(key: str) -> str:
    """A key as Playwright names it, lower case (``"Shift+Tab"`` -> ``"shift+tab"``; a space stays ``" "``)."""
    return key if key == " " else key.strip().lower()


def _words(text: str) -> str:
    return " " + " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split()) + " "


#: What must not be in the popup a skill acts in, whatever its trigger says (issue 25 item 3: an upsell reusing a
#: consent banner's "That's ok" got the consent skill and started a paid trial): words of paying, subscribing,
#: upgrading and destroying, in English, French, German and Spanish (compiled by hand for this guard; matched as
#: whole words, case-folded).  A skill whose own words name one (its description, trigger, targets) may act
#: where it is - it was learnt there.
LOOKALIKE_WORDS = (
    "trial", "subscribe", "subscription", "upgrade", "premium", "purchase", "buy", "pay", "payment", "billing",
    "billed", "checkout", "delete", "deleted", "erase", "remove", "permanently", "undone", "destroy", "wipe",
    "essai", "abonnement", "abonner", "acheter", "payer", "paiement", "supprimer", "effacer",
    "testversion", "probeabo", "abonnieren", "abo", "kaufen", "bezahlen", "zahlung", "löschen", "entfernen",
    "prueba", "suscripción", "suscribirse", "suscribir", "comprar", "pagar", "pago", "eliminar", "borrar",
)
#: A price: a currency sign or code next to a number ("$4.99", "4,99 €", "EUR 10"), or a rate ("/month").
PRICE = re.compile(r"(?:[$€£¥₹]\s?\d|\d(?:[.,]\d+)?\s?(?:[$€£¥₹]|usd|eur|gbp|chf)\b|\b(?:usd|eur|gbp|chf)\s?\d"
                   r"|/\s?(?:mo|month|year|yr|mois|an|monat|jahr|mes|año)\b|\bper (?:month|year)\b)", re.I)


def _word_set(text: str) -> set[str]:
    return set(re.findall(r"[^\W\d_]+", (text or "").casefold()))


def _own_text(skill: Skill) -> str:
    """Everything the skill itself says: description, trigger texts, action targets and values."""
    texts = [skill.description, skill.trigger.title, skill.trigger.dialog_name]
    conds = list(skill.trigger.required) + ([skill.trigger.step_target] if skill.trigger.step_target else [])
    texts += [getattr(c, f) for c in conds for f in ("name", "label", "text", "placeholder")]
    for a in skill.actions:
        texts += [a.action.value, a.note] + [getattr(a.target, f) for f in ("name", "label", "text", "title",
                                                                            "placeholder", "container")]
    return " ".join(t for t in texts if t)


def lookalike(skill: Skill, texts: Iterable[str], *, payment: bool = False) -> str:
    """Why the popup holding a skill's target is a look-alike of what the skill was learnt on ("" when not).

    ``texts`` are the popup's texts (its title, body, controls' names);
    ``payment`` is True when it holds a payment field (a card number, a
    CVC).  A look-alike holds a payment form, mentions a price (:data:`PRICE`)
    where the skill's own words name none, or says a word of
    :data:`LOOKALIKE_WORDS` the skill's own words do not say.  Returns one
    short sentence.
    """
    if payment:
        return "the popup holds a payment form"
    own_text = _own_text(skill)
    joined = " ".join(t for t in texts if t)
    price = PRICE.search(joined)
    if price and not PRICE.search(own_text):
        return f"the popup mentions a price ({price.group(0).strip()!r})"
    own, words = _word_set(own_text), _word_set(joined)
    said = [w for w in LOOKALIKE_WORDS if w in words and w not in own]
    if said:
        return "the popup says " + ", ".join(repr(w) for w in said[:3])
    return ""


def task_type_of(flow: Flow, step: Step | None = None) -> str:
    """The explicit task type of ``flow`` at ``step``, or "" (then only the similarity channel retrieves).

    A step whose action is ``upload`` is an upload; else the first task type
    of :data:`TASK_WORDS` whose word appears in the flow's name or
    description.
    """
    if step is not None and step.action.kind == "upload":
        return "upload"
    text = _words(f"{flow.name} {flow.description}")
    for task, words in TASK_WORDS.items():
        if any(f" {w} " in text for w in words):
            return task
    return ""


def _cond_of(target: ElementDescriptor) -> ElementCondition:
    return ElementCondition(role=target.role, name=target.name, label=target.label, text=target.text,
                            placeholder=target.placeholder, test_id=target.test_id)


def _key(text: str) -> str:
    return normalize(text) or " ".join(text.split())


class PageIndex:
    """The observation's element texts, normalised once per decision: which elements a condition may match.

    ``maybe(condition)`` is True when some element has the condition's role
    and every text it sets (the trigger check's fields, without
    ``in_dialog``); it ranks skills (:func:`similarity`) and never decides
    that a trigger holds - :func:`~core.skills.trigger.check_trigger` does.
    """

    def __init__(self, obs: Observation) -> None:
        self.by: dict[tuple[str, str], set[int]] = {}
        for i, c in enumerate(obs.candidates):
            d = c.descriptor
            keys = [("role", d.role), ("label", _key(d.label)), ("placeholder", _key(d.placeholder)),
                    ("test_id", _key(d.test_id)), ("name", _key(d.name) if d.name else _key(d.text)),
                    ("text", _key(d.text)), ("text", _key(d.name))]
            for k in keys:
                if k[1]:
                    self.by.setdefault(k, set()).add(i)

    def maybe(self, c: ElementCondition) -> bool:
        """True when an element may match ``c`` (a bound condition)."""
        if c.is_empty:
            return False
        hits: set[int] | None = None
        for f in ("role", "name", "label", "text", "placeholder", "test_id"):
            want = getattr(c, f)
            if not want:
                continue
            found = self.by.get((f, want if f == "role" else _key(want)), set())
            hits = found if hits is None else hits & found
            if not hits:
                return False
        return bool(hits)


def similarity(skill: Skill, obs: Observation, step: Step | None = None,
               params: Mapping[str, str] | None = None, *, index: PageIndex | None = None) -> float:
    """How much the page looks like the skill's scope and trigger, 0..1 (the similarity channel, K6).

    The mean over the features the skill sets: its scope's URL prefix (the
    page URL or its path starts with it), its scope's title and its
    trigger's title (substring, normalised), its trigger's URL pattern, its
    open-dialog name, and each required element (an element with its role
    and texts is on the page, :class:`PageIndex`).  A scope URL prefix or title that does not
    match makes it 0 (the skill belongs elsewhere); a skill setting none of
    these scores 0.1 (it may still hold, e.g. "a dialog is open").
    """
    from urllib.parse import urlsplit

    scores: list[float] = []
    sc, t = skill.scope, skill.trigger
    if sc.url_prefix:
        path = urlsplit(obs.url).path
        if not (obs.url.startswith(sc.url_prefix) or path.startswith(sc.url_prefix)):
            return 0.0
        scores.append(1.0)
    if sc.title:
        if normalize(sc.title) not in normalize(obs.title):
            return 0.0
        scores.append(1.0)
    if t.title:
        scores.append(float(normalize(t.title) in normalize(obs.title)))
    if t.url_pattern:
        scores.append(float(fnmatch.fnmatch(obs.url, t.url_pattern)))
    if t.dialog_name:
        scores.append(float(any(normalize(t.dialog_name) in normalize(m) for m in obs.modal_titles)))
    bindings = bindings_for(step, params)
    page = index or PageIndex(obs)
    for c in t.required:
        try:
            scores.append(float(page.maybe(bind_condition(c, bindings))))
        except UnboundPlaceholder:
            scores.append(0.0)
    return sum(scores) / len(scores) if scores else 0.1


def retrieve(skills: Iterable[Skill], *, task_type: str, obs: Observation, step: Step | None = None,
             params: Mapping[str, str] | None = None, top: int = SIMILAR_TOP) -> list[Skill]:
    """Candidates for this decision: the rule channel, then the similarity channel (K6).

    Rule channel: every ``do`` skill whose scope's task type is ``task_type``
    (when it is explicit), best quality first.  Similarity channel: the
    ``top`` skills without a task type whose :func:`similarity` is above 0,
    best first (ties: quality).  A skill scoped to another task type is not
    retrieved.
    """
    pool = [s for s in skills if s.kind == "do" and s.actions]
    rule = sorted((s for s in pool if task_type and s.scope.task_type == task_type), key=lambda s: -s.quality)
    page = PageIndex(obs)
    scored = [(similarity(s, obs, step, params, index=page), s) for s in pool if not s.scope.task_type]
    similar = [s for sc, s in sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], -x[1].quality))]
    return rule + similar[:max(0, top)]


def element_texts(cand: Candidate, live: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every text ``cand`` carries, by where it comes from: accessible name, visible text, label, title, alt,
    placeholder, value (``value`` of a field or the option a select shows), and the texts read on the live
    element just before acting (``live``: ``aria-label``, ``aria-description``, the texts it is described
    by, its labels...; :data:`core.engine.skilled.LIVE_TEXTS`).  Empty texts are left out."""
    d = cand.descriptor
    out = {"name": d.name, "text": d.text, "label": d.label, "title": d.title, "alt": d.alt,
           "placeholder": d.placeholder, "value": "" if cand.extra.get("is_password") else cand.value}
    for k, v in (live or {}).items():
        out[f"live {k}"] = str(v or "")
    return {k: " ".join(v.split()) for k, v in out.items() if v and v.strip()}


def _says_write(text: str) -> bool:
    """True when ``text`` (with letters in it) carries a write or destructive verb or phrase (the guard's)."""
    return bool(re.search(r"[^\W_]", text)) and may_write(Candidate("text", ElementDescriptor(name=text)), "click")


def guard_problem(cand: Candidate, kind: str, *, value: str = "", named: Sequence[ElementCondition] = (),
                  obs: Observation | None = None, live: Mapping[str, str] | None = None) -> str:
    """Why a skill may not do ``kind`` on ``cand`` ("" when it may): the one guard of every targeted kind.

    ``named`` are the trigger's required conditions (bound).  The rules:

    * a text the element carries (:func:`element_texts`: name, text, label,
      title, alt, placeholder, value, the live texts) or the option being
      selected (``value`` of a ``select``) that says confirm, delete, submit
      (the guard's verbs and phrases, :mod:`core.plan.guard`) is allowed only
      when a required condition that finds this element names it *by those
      very words* (its name, text, label or placeholder is that text): a
      button showing "Yes, delete all" whose accessible name is "Tips" is
      not named by ``requires button 'Tips'``; a guarded word in a text no
      condition can name (title, value, a description) is never allowed;
    * a value typed (``input``) that says confirm, delete or submit is never
      allowed (a type-to-confirm field acts on what is typed);
    * a submit button, an icon that says nothing, or a key pressed into a
      field (Enter submits its form) needs a required condition that finds
      the element.
    """
    if kind not in GUARDED_KINDS:
        return ""
    texts = element_texts(cand, live)
    carrying = {k: v for k, v in texts.items() if _says_write(v)}
    if kind == "select" and value and _says_write(value):
        carrying["option selected"] = " ".join(value.split())
    finding = [c for c in named if condition_matches(c, cand, obs)]
    words = {_key(t) for c in finding for t in (c.name, c.text, c.label, c.placeholder) if t}
    shown = (cand.descriptor.label_text or cand.descriptor.role or "an icon")[:40]
    if kind == "input" and value and _says_write(value):  # a type-to-confirm field acts on what is typed
        return f"typing {' '.join(value.split())[:40]!r} into {shown!r} may confirm, delete or submit"
    for where, text in carrying.items():
        if where == "option selected":
            if _key(text) not in {_key(t) for c in named for t in (c.name, c.text) if t}:
                return f"selecting {text[:40]!r} in {shown!r} confirms, deletes or submits"
            continue
        if _key(text) not in words:
            why = "destroys data" if any(p in text.lower() for p in DESTRUCTIVE_PHRASES) else \
                "confirms, deletes or submits"
            return f"{shown!r} {why} ({where} {text[:40]!r})"
    d = cand.descriptor
    if finding:
        return ""
    if d.type == "submit" and kind in ("click", "dblclick"):
        return f"{shown!r} is a submit button"
    if kind in ("click", "dblclick", "press") and not any(re.search(r"[^\W_]", t) for t in texts.values()):
        return "an icon-only control may write"
    if kind == "press" and cand.editable:
        return f"a key pressed in {shown!r} may submit its form"
    return ""


def guarded_control(cand: Candidate, kind: str) -> str:
    """Why doing ``kind`` on ``cand`` confirms, deletes or submits ("" when it does not), whatever names it:
    :func:`guard_problem` with no condition naming it."""
    return guard_problem(cand, kind)


def flow_target(step: Step, obs: Observation, params: Mapping[str, str], config: LocatorConfig
                ) -> tuple[Candidate | None, bool, str]:
    """The flow step's own target on ``obs``: ``(candidate or None, usable, why)``.

    Resolved with the locator chain (:func:`core.locate.resolve`, no
    screenshot: the cheap levels) on the step's descriptor, parameters
    bound.  ``usable`` when the locator did not abstain and the element is
    visible, enabled and not covered: then the flow step goes first and no
    skill fires (K6).  A goal step (the model decides), a step without a
    descriptor (a selector-only or targetless step) or one whose
    parameters do not bind gives ``(None, False, "")``.
    """
    if step.goal or step.target.is_empty:
        return None, False, ""
    try:
        target = bind_step(step, params).target
    except ParameterError:
        return None, False, ""
    res = resolve(target, obs.candidates, config=config, irreversible=not step.reversible,
                  anchors=obs.anchors)  # the relative level finds the anchor among the page's headings
    cand = next((c for c in obs.candidates if c.ref == res.ref), None) if res.ref and not res.abstained else None
    if cand is None:
        return None, False, ""
    shown = (cand.descriptor.label_text or cand.descriptor.role)[:40]
    if not cand.visible or not cand.enabled or cand.covered:
        state = "hidden" if not cand.visible else "disabled" if not cand.enabled else "covered"
        return cand, False, f"the flow step's target {shown!r} is {state}"
    return cand, True, (f"the flow step's own target {shown!r} is present and usable ({res.strategy}): the flow "
                        f"step goes first")


def approved_for_step(skill: Skill, flow: Flow, step: Step) -> bool:
    """True when ``skill`` was approved to act on exactly this irreversible step (``irreversible_ok``, the step
    id in its provenance, and its flow when the provenance names one)."""
    p = skill.provenance
    return skill.irreversible_ok and step.id in p.step_ids and (not p.flow or p.flow == flow.name)


def skill_step_id(step_id: str, skill_id: str, k: int) -> str:
    """Id of the ``k``-th (0-based) action of ``skill_id`` run before flow step ``step_id``: ``"s3+sk-ab12.1"``."""
    return f"{step_id}+{skill_id}.{k + 1}"


def is_skill_step(step: Step | None) -> bool:
    """True for an action a skill chose (its id says so; the flow step stays at its index after it)."""
    return step is not None and "+sk-" in step.id


def _bind_target_only(text: str, bindings: Mapping[str, str]) -> str:
    """``{target.*}`` / ``{step.*}`` placeholders bound; ``{param}`` ones left for the pipeline's binding."""
    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if key.startswith(("target.", "step.")):
            if key not in bindings:
                raise UnboundPlaceholder(key)
            return bindings[key]
        return m.group(0)
    return _PLACEHOLDER.sub(sub, text or "")


def _params_missing(skill: Skill, params: Mapping[str, str]) -> list[str]:
    names: list[str] = []
    for a in skill.actions:
        texts = (a.action.value, *(getattr(a.target, f) for f in ("name", "label", "text", "placeholder",
                                                                  "test_id")))
        for text in texts:
            for m in _PLACEHOLDER.finditer(text or ""):
                key = m.group(1)
                if not key.startswith(("target.", "step.")) and key not in params:
                    names.append(key)
    return names


@dataclass
class _Active:
    """The skill running at one step: which action is next and since when."""

    skill: Skill
    index: int
    flow_step: Step
    t0: float
    k: int = 0
    pending: str = ""
    outcome: str = ""  # set by a hook that knows why the pending action failed ("precondition")
    reason: str = ""
    containers: frozenset[str] = frozenset()  # the dialog / container the flow step's target is in (normalised)
    secrets: tuple[str, ...] = ()  # the run's secret values: a skill never types one
    neutral: bool = False  # it ended on a look-alike before acting: no failure counted
    redo: str = ""  # "retry" / "skip": what the skill's recovery rule said of its last failed action
    tries: dict[int, int] = field(default_factory=dict)  # recovery rules applied, per action (0-based)


@dataclass
class _RunState:
    run_id: str = ""
    flow: str = ""
    fired: dict[tuple[int, str], str] = field(default_factory=dict)  # (index, skill id) -> its use's outcome
    looped: set[tuple[int, str]] = field(default_factory=set)
    half: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)
    denied: set[tuple[int, str]] = field(default_factory=set)
    held: set[str] = field(default_factory=set)  # skills below the review quality, recorded once a run


class SkillDecider:
    """The ``skill`` link of the decide chain (K6).

    Parameters
    ----------
    table : core.store.skills.SkillTable
        The skill library (read at each decision; uses recorded there).
    product : str
        The skill space: the project's name (K7: one space per product).
    settings : object | None
        The library's settings (the project file's ``skills:`` section); read
        here: ``success_delta`` / ``failure_delta`` (+0.1 / -0.5, K7) and
        ``similar_top`` (3, K6).  Missing attributes take these defaults.
    notify : Notify | None
        Receives ``considered`` / ``fired`` / ``finished`` with their fields
        (the engine emits them as events; texts may carry bound values: the
        receiver redacts).
    clock : Callable[[], float]
        Monotonic seconds (tests pass their own).
    locator : LocatorConfig | None
        The locator settings the flow step's own target is resolved with
        (the engine's; default :class:`~core.domain.LocatorConfig`).
    secrets : Iterable[str]
        Names of the project's declared secret parameters (besides the
        flow's own ``secrets``): a skill never types one.
    """

    name = "skill"

    def __init__(self, table: Any, product: str, settings: Any = None, *, notify: Notify | None = None,
                 clock: Callable[[], float] = time.monotonic, locator: LocatorConfig | None = None,
                 secrets: Iterable[str] = ()) -> None:
        self.table = table
        self.locator = locator or LocatorConfig()
        self.secret_names = tuple(secrets)
        #: Below this quality an approved skill stops firing until a person approves it again (0.3, K7).
        self.review_quality = float(getattr(settings, "review_quality", 0.3))
        self.product = product
        self.settings = settings
        self.notify: Notify = notify or (lambda kind, **fields: None)
        self.clock = clock
        self.top = int(getattr(settings, "similar_top", SIMILAR_TOP) or SIMILAR_TOP)
        self.success_delta = float(getattr(settings, "success_delta", QUALITY_SUCCESS_DELTA))
        self.failure_delta = float(getattr(settings, "failure_delta", QUALITY_FAILURE_DELTA))
        self._run = _RunState()
        self._active: _Active | None = None
        self._cache: dict[str, tuple[Any, Skill]] = {}
        #: Approved deny rules as read at the latest decision.
        self.deny_rules: tuple[Skill, ...] = ()
        #: Store failures (recording never breaks a run).
        self.errors: list[str] = []
        #: Set while a popup in the flow step's way is answered where it is met (issue 25 item 1):
        #: ``"after_action"`` (the step acted and its verification met the popup) or ``"covered"`` (the
        #: pre-check found the step's target covered); "" otherwise.  There the flow step's own target being
        #: usable does not hold the skill back; after the action an irreversible step does not either - the
        #: skill does not act in the step's place, the step is done.  ``"after_previous"`` is ``"covered"`` by a
        #: popup that opened after the flow's previous step acted (its effect seen late): answered as after
        #: that step's action, an irreversible step does not hold the skill back; any other popup over an
        #: irreversible step's target needs a skill approved for exactly that step.
        self.here = ""

    # --- the library ------------------------------------------------------------------
    def approved(self) -> list[Skill]:
        """The product's approved skills as they are now (a retire is seen at once), best quality first.

        Which skills are approved, and since when, is read at every call (two
        columns, :func:`core.store.skill_versions.skill_versions`); a skill is
        decoded again only when its row changed.
        """
        try:
            store = getattr(self.table, "store", None)
            if store is None:
                return list(self.table.list(product=self.product, state="approved"))
            versions = skill_versions(store, self.product, "approved")
            for sid, at in versions.items():
                have = self._cache.get(sid)
                if have is None or have[0] != at:
                    skill = self.table.get(sid)
                    if skill is not None:
                        self._cache[sid] = (at, skill)
            for sid in [k for k in self._cache if k not in versions]:
                del self._cache[sid]
            return sorted((sk for at, sk in self._cache.values() if sk.state == "approved"),
                          key=lambda sk: -sk.quality)
        except Exception as exc:  # noqa: BLE001 - a store that fails: no skill fires (the flow goes on)
            self.errors.append(f"skills not read: {exc}")
            return []

    def _use(self, skill: Skill, outcome: str, reason: str, *, index: int, step_id: str, ms: float = 0.0,
             count: str = "", delta: float = 0.0) -> None:
        try:
            self.table.record_use(skill.id, run_id=self._run.run_id, flow=self._run.flow, step_index=index,
                                  step_id=step_id, outcome=outcome, reason=reason, ms=round(ms, 1),
                                  quality_delta=delta, count=count)
        except Exception as exc:  # noqa: BLE001 - recording is best effort
            self.errors.append(f"skill use not recorded: {exc}")

    def _begin(self, ctx: DecideContext) -> None:
        if ctx.run_id != self._run.run_id or ctx.flow.name != self._run.flow:
            if self._active is not None:
                self._finish("failed", "the run ended before the skill finished", count="", delta=0.0)
            self._run = _RunState(ctx.run_id, ctx.flow.name)

    # --- deciding ---------------------------------------------------------------------
    def decide(self, ctx: DecideContext) -> Decision | None:
        """The next action of a running skill, a newly fired skill's first action, or None (the flow decides)."""
        step = ctx.flow_step
        if step is None:
            return None
        self._begin(ctx)
        skills = self.approved()
        self.deny_rules = tuple(s for s in skills if s.kind == "deny")
        do = {s.id: s for s in skills if s.kind == "do" and not s.trigger.popup}  # kind skills: core.skills.kinds
        a = self._active
        if a is not None and a.index != ctx.index:
            self._finish("failed", f"the run left step {a.index + 1} before the skill finished", count="",
                         delta=0.0)
        if self._active is not None:
            decision = self._go_on(ctx, do)
            if decision is not None:
                return decision
        return self._fire(ctx, step, list(do.values()))

    def _go_on(self, ctx: DecideContext, do: Mapping[str, Skill]) -> Decision | None:
        a = self._active
        assert a is not None
        last = ctx.history[-1] if ctx.history else None
        redo, a.redo = a.redo, ""
        if redo == "retry":  # the skill's recovery rule: the same action again (it did not act, see action_failed)
            return self._decision(ctx, a)
        if not redo and (last is None or last.step_id != a.pending or last.status != "passed"):
            why = f"its action {a.k + 1} did not pass" + (f" ({last.status})" if last is not None else "")
            self._finish("failed", why)
            return None
        a.k += 1
        if a.skill.id not in do:
            self._finish("failed", "retired while in use: stopped firing", count="", delta=0.0)
            return None
        elapsed = (self.clock() - a.t0) * 1000.0
        if elapsed > a.skill.max_ms:
            self._finish("failed", f"time limit: {elapsed:.0f} ms, more than its {a.skill.max_ms} ms")
            return None
        if a.k >= len(a.skill.actions):
            failed = self._verify_failed(a.skill.verify, ctx.observation, bindings_for(a.flow_step, ctx.params))
            if failed:
                self._finish("precondition", "verify rules do not hold: " + "; ".join(failed))
            else:
                self._finish("passed", f"{counted(len(a.skill.actions), 'action')} done"
                             + ("; verify rules hold" if a.skill.verify else ""))
            return None
        if a.k >= a.skill.step_limit:
            self._finish("failed", f"step limit: {counted(a.skill.step_limit, 'step')} and {len(a.skill.actions) - a.k} "
                                   f"action(s) left")
            return None
        return self._decision(ctx, a)

    def _secret_values(self, ctx: DecideContext) -> tuple[str, ...]:
        names = set(ctx.flow.secrets) | set(self.secret_names)
        return tuple(v for k, v in ctx.params.items() if k in names and v)

    def _fire(self, ctx: DecideContext, step: Step, skills: Sequence[Skill]) -> Decision | None:
        obs, run = ctx.observation, self._run
        task = task_type_of(ctx.flow, step)
        own: tuple[Candidate | None, bool, str] | None = None  # the flow step's own target, resolved once
        for s in retrieve(skills, task_type=task, obs=obs, step=step, params=ctx.params, top=self.top):
            check = check_trigger(s.trigger, obs, step=step, params=ctx.params)
            key = (ctx.index, s.id)
            reason = check.reason
            fire = check.holds
            if fire:
                own = own or flow_target(step, obs, ctx.params, self.locator)
            if fire and own is not None and own[1] and not self.here:
                fire, reason = False, f"not fired: {own[2]} ({check.reason})"
            elif fire and key in run.fired:
                fire = False
                reason = "fired at this step already: a second time would be a loop; stopped firing it here"
                if key not in run.looped and run.fired[key] == "passed":  # it passed, yet the trouble is back
                    run.looped.add(key)
                    self._use(s, "failed", reason, index=ctx.index, step_id=step.id, count="failure",
                              delta=self.failure_delta)
            elif fire and s.quality < self.review_quality:
                fire = False
                reason = (f"not fired: its quality {s.quality:.2f} fell below the review threshold "
                          f"{self.review_quality:.2f}; it fires again once a person approves it anew")
                if s.id not in run.held and s.id not in run.refused:  # said once a run (a refusal said it all)
                    run.held.add(s.id)
                    self._use(s, "precondition", reason, index=ctx.index, step_id=step.id)
            elif (fire and not step.reversible and self.here not in ("after_action", "after_previous")
                  and not approved_for_step(s, ctx.flow, step)):
                # (answering a popup a step's own action opened is no acting on this step: this one is done, or
                # the popup is the previous step's effect met late over this step's target)
                fire = False
                reason = (f"step {step.id!r} is irreversible and the skill was not approved for exactly that "
                          f"step: not fired")
            elif fire:
                containers = self._containers(step, own, ctx.flow, ctx.observation)
                unsafe = self._unsafe(s, step, ctx.params, containers=containers, flow=ctx.flow)
                missing = _params_missing(s, ctx.params)
                if unsafe:
                    fire, reason = False, f"refused: {unsafe}"
                    if s.id not in run.refused:
                        run.refused.add(s.id)
                        self._use(s, "failed", reason, index=ctx.index, step_id=step.id, count="failure",
                                  delta=self.failure_delta)
                        self.notify("finished", run_id=run.run_id, flow=run.flow, index=ctx.index,
                                    skill_id=s.id, outcome="failed", reason=reason, ms=0.0)
                elif missing:
                    fire, reason = False, f"this run has no value for {{{missing[0]}}}: not fired"
            self.notify("considered", run_id=run.run_id, flow=run.flow, index=ctx.index, skill_id=s.id,
                        holds=check.holds, half=check.half, reason=reason)
            if check.half and s.id not in run.half and any(m.endswith(" present") for m in check.met):
                run.half.add(s.id)  # worth a row: one of its elements is there (once a run, not every step)
                self._use(s, "half", check.reason, index=ctx.index, step_id=step.id)
            if not fire:
                continue
            run.fired[key] = ""
            self._active = _Active(s, ctx.index, step, self.clock(), containers=self._containers(step, own, ctx.flow, ctx.observation),
                                   secrets=self._secret_values(ctx))
            return self._decision(ctx, self._active)
        return None

    def _decision(self, ctx: DecideContext, a: _Active) -> Decision | None:
        sa = a.skill.actions[a.k]
        try:
            step = self._step(a, sa, ctx.observation, ctx.params)
        except UnboundPlaceholder as exc:
            self._finish("precondition", f"action {a.k + 1} names {{{exc.args[0]}}}, which this step has not")
            return None
        a.pending, a.outcome, a.reason = step.id, "", ""
        n = len(a.skill.actions)
        self.notify("fired", run_id=self._run.run_id, flow=self._run.flow, index=a.index, skill_id=a.skill.id,
                    description=a.skill.description, action_index=a.k, actions=n)
        return Decision(step, "skill", f"skill {a.skill.id} ({a.skill.description}): action {a.k + 1} of {n}",
                        max(0.0, min(1.0, a.skill.quality)))

    def _step(self, a: _Active, sa: SkillAction, obs: Observation | None = None,
              params: Mapping[str, str] | None = None) -> Step:
        """The skill action as a step; a target without a ``container`` that a required ``in_dialog``
        condition of the trigger names is given the open dialog's title the trigger holds in (the locator then
        tells it from a look-alike outside the dialog, and :meth:`check_resolved` refuses one)."""
        b = bindings_for(a.flow_step)
        t = sa.target
        target = t.with_(**{f: _bind_target_only(getattr(t, f), b)
                            for f in ("name", "label", "text", "placeholder", "test_id", "title", "alt")
                            if getattr(t, f)}) if not t.is_empty else t
        dialog = a.skill.trigger.dialog_name
        if obs is not None and dialog and not target.is_empty and not target.container:
            probe = Candidate("skill", target)
            if any(c.in_dialog and condition_matches(replace(c, in_dialog=False), probe)
                   for c in self._required(a.skill, a.flow_step, params or {})):
                title = next((m for m in reversed(obs.modal_titles) if normalize(dialog) in normalize(m)), "")
                target = target.with_(container=title) if title else target
        action = Action(sa.action.kind, _bind_target_only(sa.action.value, b))
        what = sa.note or f"{action.kind} {target.label_text or action.value}".strip()
        return Step(id=skill_step_id(a.flow_step.id, a.skill.id, a.k), action=action, target=target,
                    name=f"skill {a.skill.id}: {what}", reversible=a.flow_step.reversible)

    # --- safety -----------------------------------------------------------------------
    def _required(self, skill: Skill, step: Step | None, params: Mapping[str, str]) -> list[ElementCondition]:
        b = bindings_for(step, params)
        out = []
        for c in skill.trigger.required:
            try:
                out.append(bind_condition(c, b))
            except UnboundPlaceholder:
                continue
        return out

    @staticmethod
    def _containers(step: Step, own: tuple[Candidate | None, bool, str] | None, flow: Flow | None = None,
                    obs: Observation | None = None) -> frozenset[str]:
        """The dialog / container titles the flow itself acts in, normalised: the current step's target's (as
        recorded and as found live) and every other step's - as recorded, and where an element named like
        its target is on the page now (a flow that answers a banner at a later step answers it itself)."""
        out = {normalize(step.target.container)}
        if own is not None and own[0] is not None:
            out.add(normalize(own[0].descriptor.container))
        for s in (flow.steps if flow is not None else ()):
            t = s.target
            out.add(normalize(t.container))
            if obs is None or not t.role or not (t.name or t.label):
                continue
            cond = ElementCondition(role=t.role, name=t.name) if t.name else ElementCondition(role=t.role, label=t.label)
            out.update(normalize(c.descriptor.container) for c in obs.candidates
                       if c.visible and c.descriptor.container and condition_matches(cond, c, obs))
        return frozenset(c for c in out if c)

    def _unsafe(self, skill: Skill, step: Step, params: Mapping[str, str], *,
                containers: frozenset[str] = frozenset(), flow: Flow | None = None) -> str:
        """Why the skill's actions break the safety bar as written ("" when they do not)."""
        required = [replace(c, in_dialog=False) for c in self._required(skill, step, params)]
        b = bindings_for(step, params)
        secret_names = set(self.secret_names) | set(flow.secrets if flow is not None else ())
        secret_values = [v for k, v in params.items() if k in secret_names and v]
        for i, sa in enumerate(skill.actions):
            kind = sa.action.kind
            if kind not in SKILL_ACTIONS:
                return f"action {i + 1} is a {kind}, which a skill does not do (only {', '.join(SKILL_ACTIONS)})"
            typed = sa.action.value or ""
            named = [m.group(1) for m in _PLACEHOLDER.finditer(typed)]
            secret = next((n for n in named if n in secret_names), "")
            if secret or (typed and any(v in typed for v in secret_values)):
                return (f"action {i + 1} would type the secret {{{secret or 'a secret value'}}}: a skill never "
                        f"types a secret (the flow's own steps do)")
            key = _keyname(typed)
            if kind == "press" and sa.target.is_empty and key not in TARGETLESS_KEYS:
                why = "which submits a form" if key in _SUBMIT_KEYS else "which reaches whatever has focus"
                return (f"action {i + 1} presses {sa.action.value} with no target named, {why} (a skill presses "
                        f"only Escape, Tab or an arrow key without a target)")
            if kind == "press" and not sa.target.is_empty and key in ACTIVATING_KEYS \
                    and sa.target.role and sa.target.role not in EDITABLE_ROLES and sa.target.tag != "textarea":
                return (f"action {i + 1} presses {sa.action.value} on the {sa.target.role} "
                        f"{sa.target.label_text[:40]!r}, which takes no text: a key that activates a control is "
                        f"not pressed by a skill")
            if sa.target.is_empty:
                continue
            if containers and normalize(sa.target.container) in containers:
                return (f"action {i + 1} acts in {sa.target.container!r}, the flow step's own container: the "
                        f"flow knows what to do there")
            try:
                desc = sa.target.with_(**{f: _bind_target_only(getattr(sa.target, f), {**params, **b})
                                          for f in ("name", "label", "text", "placeholder", "test_id", "title",
                                                    "alt") if getattr(sa.target, f)})
            except UnboundPlaceholder:
                continue  # not firable on this step anyway (checked when its step is built)
            try:
                value = _bind_target_only(typed, {**params, **b})
            except UnboundPlaceholder:
                value = typed
            why = guard_problem(Candidate("skill", desc), kind, value=value, named=required)
            if why:
                return f"action {i + 1} would {kind} {why}, which its trigger does not name by those words"
        return ""

    def check_resolved(self, step_id: str, kind: str, cand: Candidate, target: ElementDescriptor,
                       obs: Observation, params: Mapping[str, str], *, value: str = "",
                       live: Mapping[str, str] | None = None,
                       region: Mapping[str, Any] | None = None) -> tuple[str, str]:
        """The live safety check of a skill action after the locator found ``cand``: ``(outcome, reason)``,
        ``("", "")`` when it may go on.

        ``target`` is the action's target as bound, ``value`` the action's
        value as bound (the key, the option, the text), ``live`` the texts
        read on the element just before acting (see :func:`element_texts`).
        ``region`` is the popup around the element read just before acting
        (``{"text": str, "payment": bool}``; None when it is in no popup):
        a look-alike (:func:`lookalike`) ends the skill as ``precondition``
        without counting a failure - the skill did nothing, the page is not
        what it was learnt on.
        Refused (``failed``): an element that does not match the skill's
        descriptor exactly; what :func:`guard_problem` refuses; an activating
        key (Enter, Space) onto a control that takes no text; a value holding
        a secret of the run.  ``precondition``: a required element the
        action targets is no longer the single one on the page; the element
        is in the flow step's own dialog / container.
        """
        a = self._active
        if a is None or a.pending != step_id:
            return "", ""
        cond = _cond_of(target)
        d = cand.descriptor
        shown = d.label_text or d.role or "element"
        if not cond.is_empty and not condition_matches(cond, cand, obs):
            return self._hold(a, "failed", f"the element found ({shown!r}) is not the skill's target "
                                           f"{cond.describe()}: not acted on")
        if target.container and text_similarity(d.container, target.container) < CONTEXT_MIN_SIMILARITY:
            return self._hold(a, "failed", f"the element found ({shown!r}) is not in {target.container!r}, where "
                                           f"the skill's target is: a look-alike; not acted on")
        if a.containers and normalize(d.container) in a.containers:
            return self._hold(a, "precondition", f"{shown!r} is in {d.container!r}, the flow step's own "
                                                 f"container: the flow knows what to do there; not acted on")
        if value and any(v in value for v in a.secrets):
            return self._hold(a, "failed", "refused: the action would type a secret; a skill never types one")
        if kind == "press" and _keyname(value) in ACTIVATING_KEYS and not cand.editable \
                and d.role not in EDITABLE_ROLES:
            return self._hold(a, "failed", f"refused: {value} onto {shown!r}, which takes no text (a key that "
                                           f"activates a control is not pressed by a skill)")
        required = self._required(a.skill, a.flow_step, params)
        named = [c for c in required if condition_matches(c, cand, obs)]
        for c in named:
            found = find(c, obs)
            if len(found) != 1 or found[0].ref != cand.ref:
                return self._hold(a, "precondition", f"the trigger's {c.describe()} is no longer the one element "
                                                     f"on the page")
        why = guard_problem(cand, kind, value=value, named=required, obs=obs, live=live)
        if why:
            return self._hold(a, "failed", f"refused: {why}, and the trigger does not name it by those words")
        if region:
            alike = lookalike(a.skill, [str(region.get("text") or "")], payment=bool(region.get("payment")))
            if alike:
                a.neutral = True
                return self._hold(a, "precondition", f"a look-alike of what the skill was learnt on: {alike}; "
                                                     f"not acted on")
        return "", ""

    def outcome_at(self, index: int, skill_id: str) -> str:
        """How the use of ``skill_id`` at step ``index`` ended in this run (``passed``, ``failed``...), "" when it
        has not fired there or is still running."""
        return self._run.fired.get((index, skill_id), "")

    def last_action(self, step_id: str) -> bool:
        """True when ``step_id`` is the running skill's last action (what it clears is looked at once quiet)."""
        a = self._active
        return a is not None and a.pending == step_id and a.k == len(a.skill.actions) - 1

    def check_key(self, step_id: str, key: str, focused: Mapping[str, Any] | None, *, targeted: bool,
                  held: bool = False) -> tuple[str, str]:
        """Where a skill's key press goes, just before it is pressed: ``(outcome, reason)``, ``("", "")`` to go on.

        ``focused`` describes the element that has focus after the target
        was focused (``{"is_target": bool, "tag", "role", "type"}``; None when
        it cannot be read).  With a target, the key must reach it (``is_target``),
        else ``precondition``: the key would go to another control.  Without
        one, an arrow key is refused when the focused element is a control
        an arrow changes (:data:`ARROW_CHANGES`).  ``held``: ``focused`` was read
        as the key arrived, by the page's key guard, which held the key back
        (the reason says so).
        """
        a = self._active
        if a is None or a.pending != step_id:
            return "", ""
        if focused is None:
            return self._hold(a, "precondition", f"where {key} would go cannot be read: not pressed")
        if targeted and not focused.get("is_target"):
            what = focused.get("role") or focused.get("tag") or "another element"
            how = "lost focus just before the key arrived" if held else "does not take focus"
            return self._hold(a, "precondition", f"the target {how}: {key} would reach the "
                                                 f"focused {what} instead; not pressed")
        if not targeted and arrow_changes(key, focused):
            what = focused.get("role") or focused.get("tag") or "control"
            late = " (focus moved to it just before the key arrived; the key was held back)" if held else ""
            return self._hold(a, "precondition", f"{key} would change the focused {what}'s value: not "
                                                 f"pressed{late}")
        return "", ""

    def _hold(self, a: _Active, outcome: str, reason: str) -> tuple[str, str]:
        a.outcome, a.reason = outcome, reason
        return outcome, reason

    def denied(self, cand: Candidate, obs: Observation, *, index: int, flow_step: Step | None,
               params: Mapping[str, str], step_id: str = "") -> tuple[Skill, str] | None:
        """The deny rule that forbids acting on ``cand`` now (its trigger holds and one of its actions names
        the element), with the reason; None when none does.  Recorded as a ``denied`` use once per step."""
        b = bindings_for(flow_step, params)
        for rule in self.deny_rules:
            check = check_trigger(rule.trigger, obs, step=flow_step, params=params)
            if not check.holds:
                continue
            for sa in rule.actions:
                try:
                    cond = bind_condition(_cond_of(sa.target), b)
                except UnboundPlaceholder:
                    continue
                if cond.is_empty or not condition_matches(cond, cand, obs):
                    continue
                reason = (f"denied by skill {rule.id} ({rule.description}): {cond.describe()} must not be acted "
                          f"on while {'; '.join(check.met) or 'its trigger holds'}")
                key = (index, rule.id)
                if key not in self._run.denied:
                    self._run.denied.add(key)
                    self._use(rule, "denied", reason, index=index, step_id=step_id or (flow_step.id if flow_step
                                                                                      else ""))
                    self.notify("finished", run_id=self._run.run_id, flow=self._run.flow, index=index,
                                skill_id=rule.id, outcome="denied", reason=reason, ms=0.0)
                return rule, reason
        return None

    # --- ending a use -----------------------------------------------------------------
    def action_failed(self, step_id: str, failure_kind: str, reason: str, *, acted: bool = False
                      ) -> tuple[str, str] | None:
        """A skill action did not pass (not found, refused, pre-check, verify failed...): the skill's recovery
        rules decide (:func:`recovery_for`) - ``retry`` the same action or ``skip`` to its next one, each at most
        the rule's ``max_tries`` times for that action - else the skill ends and the chain falls back to the
        flow step.  A retry is never made of an action that acted (``acted``: an effect seen is an effect
        done), nor after a refusal of the safety bar or a look-alike.  Returns ``(outcome, reason)`` -
        ``outcome`` ``"retry"`` / ``"skip"`` while the skill goes on - or None when ``step_id`` is not the
        running skill's action."""
        a = self._active
        if a is None or a.pending != step_id:
            return None
        rule = recovery_for(a.skill, failure_kind)
        refused = bool(a.outcome) or a.neutral  # the safety bar or a look-alike held it back: no second try
        if rule is not None and rule.action in ("retry", "skip") and not refused \
                and a.tries.get(a.k, 0) < rule.max_tries and not (rule.action == "retry" and acted):
            a.tries[a.k] = a.tries.get(a.k, 0) + 1
            a.redo = rule.action
            said = "the same action again" if rule.action == "retry" else "its next action"
            return rule.action, (f"action {a.k + 1} of {len(a.skill.actions)}: {reason}; its recovery rule "
                                 f"(on {rule.on}: {rule.action}, {a.tries[a.k]} of {rule.max_tries}) goes on with "
                                 f"{said}")
        outcome = a.outcome or ("precondition" if failure_kind == "precondition" else "failed")
        why = a.reason or reason
        why = f"action {a.k + 1} of {len(a.skill.actions)}: {why}"
        if a.neutral:
            self._finish(outcome, why, count="", delta=0.0)
        else:
            self._finish(outcome, why)
        return outcome, why

    def _finish(self, outcome: str, reason: str, *, count: str | None = None, delta: float | None = None) -> None:
        a = self._active
        if a is None:
            return
        self._active = None
        self._run.fired[(a.index, a.skill.id)] = outcome
        ms = (self.clock() - a.t0) * 1000.0
        ok = outcome == "passed"
        self._use(a.skill, outcome, reason, index=a.index, step_id=a.flow_step.id, ms=ms,
                  count=("success" if ok else "failure") if count is None else count,
                  delta=(self.success_delta if ok else self.failure_delta) if delta is None else delta)
        self.notify("finished", run_id=self._run.run_id, flow=self._run.flow, index=a.index, skill_id=a.skill.id,
                    outcome=outcome, reason=reason, ms=round(ms, 1))

    @staticmethod
    def _verify_failed(rules: Sequence[VerifyRule], obs: Observation, bindings: Mapping[str, str]) -> list[str]:
        out = []
        for r in rules:
            if r.kind in ("absent", "present") and r.element is not None:
                try:
                    element = bind_condition(r.element, bindings)
                except UnboundPlaceholder as exc:
                    out.append(f"a verify rule names {{{exc.args[0]}}}, which this step has not")
                    continue
                there = bool(find(element, obs, usable=False))
                if there != (r.kind == "present"):
                    out.append(f"{element.describe()} " + ("not present" if r.kind == "present" else "still there"))
            elif r.kind == "url" and r.expected and not fnmatch.fnmatch(obs.url, r.expected):
                out.append(f"URL is not {r.expected}")
            elif r.kind == "title" and r.expected and normalize(r.expected) not in normalize(obs.title):
                out.append(f"title has no {r.expected!r}")
            elif r.kind == "no_dialog" and obs.modal_titles:
                out.append(f"a dialog is still open ({obs.modal_titles[-1]!r})")
        return out


#: The engine's failure kinds (:class:`core.recover.policy.Failure`) as a skill's recovery rule names them
#: (``RecoveryRule.on``): not found, its verification failed, its action raised; anything else is ``any`` only.
FAILURE_ON: Mapping[str, str] = {
    "abstained": "not_found", "unchanged": "verify_failed", "changed_unexpectedly": "verify_failed",
    "assertion": "verify_failed", "action_error": "action_error",
}


def recovery_for(skill: Skill, failure_kind: str) -> Any:
    """The first of ``skill``'s recovery rules (seed 001 ``error_recovery``) that applies to an action failed
    with ``failure_kind`` (an engine failure kind, mapped by :data:`FAILURE_ON`; a rule ``on: any`` applies to
    every kind), else None (the skill ends: ``abort``)."""
    on = FAILURE_ON.get(failure_kind, "")
    return next((r for r in skill.recovery if r.on == "any" or (on and r.on == on)), None)


def runtime_problem(skill: Skill, *, secret_names: Iterable[str] = ()) -> str:
    """Why the run-time safety bar would refuse ``skill``'s actions as written ("" when it would not).

    The same check :class:`SkillDecider` makes before a skill fires (its
    ``_unsafe``: the guard over every text of each target, keys, secrets),
    on no particular step (``{target.*}`` placeholders are left out): a
    skill refused here would be refused at every run, so approval refuses it
    too (issue 25 item 4: "the rules a skill is approved under are the rules it
    runs under").
    """
    if skill.kind != "do":
        return ""
    probe = Step(id="approval", action=Action("click"))
    return SkillDecider(None, skill.scope.product, secrets=secret_names)._unsafe(skill, probe, {})
