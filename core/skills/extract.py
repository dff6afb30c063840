"""Skill extraction without a model (K4): contrast the failed segment with the correction.

Pure logic: a failure record (:mod:`core.skills.capture`), its attribution
(:mod:`core.skills.attribution`), the flow steps around the failure point
(the *failed segment*: the window before it, the failing step, the steps the
flow would have gone on with) and the corrected segment - the actions a
person did during a takeover (:class:`core.store.corrections.CorrectionRecord`
steps, with the recorder's full descriptors) or an accepted heal's new target.

1. **Differing actions** - a correction action that does what one of the
   failed segment's steps does (same action kind, same value, same element by
   role and by test id / label / accessible name / text / placeholder) is
   not new; only the others become the skill's actions.  None left: the
   person did what the flow does (a retry by hand of a failure that did not
   reproduce) and no skill is made.
2. **Targets** - semantic fields only (role, name, label, placeholder, text,
   test id, title, alt, tag, anchor); ids, CSS paths, XPaths and boxes are
   dropped.  A field whose text equals a field of the failing step's target
   becomes a placeholder (``{target.label}`` ...), so the skill applies to
   the next field with the same trouble.
3. **Trigger** - what the page showed at the failure and not on the
   recording: a dialog the recording did not have (``dialog_name``), the
   element the first differing action acts on (``required``; inside the
   dialog when it lay in one), and the failing step's own target when the
   page no longer had it (``absent``).  A *positive* difference must be
   known - a dialog the recording did not have, or an element on the page
   at the failure that the recording's page did not have - else no skill:
   "the step's target is absent" next to elements the recording also had is
   what a slow or half-loaded page looks like, and a skill made of it would
   act on every slow load.  The recording's page
   (:func:`recording_observation`) is judged with the runtime's own matching
   (:func:`core.skills.trigger.condition_matches`), element by element of the
   same role (or tag); what the recording's elements do not carry (its R1
   baseline holds role and text only) is *unknown*, never a difference.
4. **Deny** - a candidate whose action notes say not / avoid / never becomes
   a deny rule (``kind="deny"``): the element is one the agent must not
   touch while the trigger holds.
5. **Heal, not skill** - a correction that only puts the same kind of action
   on another element, with nothing unexpected on the page, is the step's
   heal (its flow edit is offered by the correction itself).
6. **With a model** (optional, :func:`choose_actions`): the same inputs, and a
   fixed schema (:class:`ActionChoice`) by which the model may only keep a
   subset of the differing actions (a stray click the person made is left
   out); it never writes a target, a trigger or a value, and an answer that
   is not the schema, or names no differing action, changes nothing.

:func:`extract` returns a :class:`Candidate` (the skill, state ``proposed``)
or a :class:`NoSkill` with the reason.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from pydantic import BaseModel, Field

from core.domain import Action, Anchor, ElementDescriptor, Observation, Step
from core.domain.skill import (
    ElementCondition, RecoveryRule, Skill, SkillAction, SkillProvenance, SkillScope, SkillTrigger, VerifyRule,
    skill_to_mapping,
)
from core.locate.textsim import normalize
from core.project.params import placeholders
from core.skills.capture import observation_of
from core.skills.trigger import bindings_for, bind_condition, condition_matches, find

__all__ = ["Candidate", "NoSkill", "extract", "differing", "same_action", "same_element", "generalise", "step_of", "is_negative",
           "recording_observation", "failure_observation", "skill_id", "ActionChoice", "choose_actions"]

#: Words that make a candidate a deny rule (K4: "not / avoid / never").
_NEGATIVE = re.compile(r"(?<![a-z])(not|don't|do not|avoid|never)(?![a-z])", re.I)
#: Target fields compared to say two actions act on the same element, strongest first.
_IDENTITY = ("test_id", "label", "name", "text", "placeholder")
#: Fields of the failing step's target a placeholder may stand for, in the order they are tried.
_BINDABLE = ("label", "name", "text", "placeholder")
_SEMANTIC = ("tag", "role", "name", "label", "text", "placeholder", "test_id", "title", "alt")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate skill and what it was made from."""

    skill: Skill
    differing: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class NoSkill:
    """Why no candidate was made (shown as :class:`~core.engine.events.SkillDropped`)."""

    reason: str


def is_negative(text: str) -> bool:
    """True when ``text`` says not / avoid / never (a deny rule, K4)."""
    return bool(_NEGATIVE.search(text or ""))


def step_of(entry: Mapping[str, Any]) -> Step:
    """A :class:`Step` from a trajectory entry or a flow-file step mapping (action kind, value, target)."""
    target = entry.get("target") or {}
    desc = ElementDescriptor(**{k: str(target.get(k) or "") for k in (*_SEMANTIC, "container")})
    kind = str(entry.get("action") or "click")
    return Step(str(entry.get("step_id") or entry.get("id") or ""), Action(kind, str(entry.get("value") or "")),  # type: ignore[arg-type]
                name=str(entry.get("intent") or entry.get("name") or ""), target=desc)


def _ident(t: Mapping[str, Any]) -> dict[str, str]:
    return {f: normalize(str(t.get(f) or "")) for f in _IDENTITY if t.get(f)}


def same_action(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """True when two actions (correction step / flow step mappings) do the same thing to the same element."""
    if str(a.get("action") or "") != str(b.get("action") or ""):
        return False
    if normalize(str(a.get("value") or "")) != normalize(str(b.get("value") or "")):
        return False
    return same_element(a.get("target") or {}, b.get("target") or {})


def same_element(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> bool:
    """True when two targets name the same element: same role (when both say one) and the strongest identity
    field both carry (test id, label, accessible name, text, placeholder) equal; else a text in common."""
    if ta.get("role") and tb.get("role") and ta.get("role") != tb.get("role"):
        return False
    ia, ib = _ident(ta), _ident(tb)
    if not ia or not ib:
        return not ia and not ib
    shared = [f for f in _IDENTITY if f in ia and f in ib]
    if shared:
        return ia[shared[0]] == ib[shared[0]]
    return bool(set(ia.values()) & set(ib.values()))


#: Action kinds that only look (a recording's assertions and waits): never a skill's action.
_CHECKS = ("assert", "wait", "screenshot")
#: Action kinds that fill a field: a click on that field before them is part of filling it.
_FILLS = ("input", "select", "check", "uncheck", "upload")


def differing(corrected: Sequence[Mapping[str, Any]], failed: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The corrected segment's actions that no step of the failed segment does (order kept).

    A click on a field that a step of either segment then fills is part of filling it, not a new action.
    """
    fills = [s.get("target") or {} for s in (*corrected, *failed) if s.get("action") in _FILLS]
    out = []
    for c in corrected:
        if c.get("action") in _CHECKS:
            continue  # what the recorder noted while the person acted, not something they did
        if any(same_action(c, f) for f in failed):
            continue
        if c.get("action") == "click" and any(same_element(c.get("target") or {}, t) for t in fills):
            continue
        out.append(c)
    return out


def generalise(target: Mapping[str, Any], step_target: Mapping[str, Any]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The semantic fields of ``target`` with texts equal to a field of ``step_target`` made placeholders.

    Returns the fields and the placeholders used (``("target.label",)``).
    """
    out: dict[str, str] = {}
    used: list[str] = []
    bindable = {f: normalize(str(step_target.get(f) or "")) for f in _BINDABLE if step_target.get(f)}
    for f in _SEMANTIC:
        v = str(target.get(f) or "")
        if not v:
            continue
        if f in _BINDABLE:
            nv = normalize(v)
            hit = f if bindable.get(f) == nv else next((g for g in _BINDABLE if bindable.get(g) == nv), "")
            if hit and nv:
                out[f] = "{target.%s}" % hit
                used.append(f"target.{hit}")
                continue
        out[f] = v
    return out, tuple(dict.fromkeys(used))


def _anchor(target: Mapping[str, Any]) -> Anchor | None:
    a = target.get("anchor")
    if not isinstance(a, Mapping) or not a.get("text"):
        return None
    return Anchor(text=str(a.get("text")), role=str(a.get("role") or ""), dx=float(a.get("dx") or 0.0),
                  dy=float(a.get("dy") or 0.0))


def _condition(fields: Mapping[str, str], *, in_dialog: bool) -> ElementCondition:
    name = fields.get("name") or ("" if fields.get("label") or fields.get("placeholder") else fields.get("text", ""))
    return ElementCondition(role=fields.get("role", ""), name=name, label=fields.get("label", ""),
                            placeholder=fields.get("placeholder", ""), test_id=fields.get("test_id", ""),
                            in_dialog=in_dialog)


def failure_observation(record: Any, *, after: bool = False) -> Observation:
    """The page at the failure: the last failed attempt's before-snapshot (else the first); with ``after``,
    the page after the failed action instead when it opened a dialog the page before did not have (a popup
    that opens when a field gets focus is what the person met)."""
    page = record.page or {}
    attempts = [a for a in page.get("attempts") or () if a.get("before")]
    snap = attempts[-1]["before"] if attempts else (page.get("before") or {})
    later = page.get("after") or {}
    if after and later and set(later.get("modal_titles") or ()) - set(snap.get("modal_titles") or ()):
        snap = later
    return observation_of(snap)


def _baseline_candidate(e: Mapping[str, Any]) -> dict[str, str]:
    """A recording candidate from an R1 key element (``{"role", "text"}``: ARIA role or lower-case tag, and the
    accessible name / label text): a role that is a tag becomes the tag."""
    from core.perception.axtree import ARIA_ROLES

    role, text = str(e.get("role") or ""), str(e.get("text") or "")
    if role and role not in ARIA_ROLES:
        return {"tag": role, "name": text}
    return {"role": role, "name": text}


def _kind(d: Any) -> str:
    return str((d.get("role") or d.get("tag") or "") if isinstance(d, Mapping) else (d.role or d.tag))


def recording_observation(recorded: Mapping[str, Any], target: Mapping[str, Any] | None = None
                          ) -> Observation | None:
    """The recording's page before the step as far as it is known (the step's R1 baseline elements and the
    previous step's recorded dialog), or None when nothing is known of it.

    ``target`` (the failing step's recorded target, semantic fields) was on that page - the step was recorded
    or passed on it - so when the baseline is known it stands in for the baseline element it is (same role or
    tag, its name among the target's texts) with all its fields (label, placeholder), else it is added."""
    base = recorded.get("baseline")
    prev = recorded.get("after_previous")
    if base is None and prev is None:
        return None
    cands = [_baseline_candidate(e) for e in base or ()]
    own = {k: str(v) for k, v in (target or {}).items() if k != "anchor" and isinstance(v, str) and v}
    if base is not None and own:
        texts = {normalize(own.get(f, "")) for f in ("name", "label", "text", "placeholder")} - {""}
        at = next((i for i, c in enumerate(cands) if _kind(c) in (own.get("role"), own.get("tag"))
                   and normalize(c.get("name", "")) in texts), -1)
        if at >= 0:
            cands[at] = own
        else:
            cands.append(own)
    modal = []
    screen = str(recorded.get("screen") or "")
    top = screen.split("|")[-1].strip() if screen.count("|") >= 3 else ""
    if top:
        modal.append(top)
    elif prev and prev.get("dialog") and prev.get("dialog_name"):
        modal.append(str(prev["dialog_name"]))
    return observation_of({"candidates": cands, "modal_titles": modal, "url": "", "title": ""})


def _may_match(c: ElementCondition, d: ElementDescriptor) -> bool:
    """No field that both ``c`` and ``d`` carry disagrees (what ``d`` does not carry is unknown)."""
    pairs = ((c.label, d.label), (c.placeholder, d.placeholder), (c.test_id, d.test_id), (c.name, d.name),
             (c.text, d.text or d.name))
    return all(normalize(want) == normalize(have) for want, have in pairs if want and have)


def known_on_recording(cond: ElementCondition, element: ElementDescriptor | None, obs: Observation | None,
                       complete: bool) -> bool | None:
    """Whether the recording's page had the element ``cond`` (bound) names - ``element`` being the one it matched
    at the failure: True, False, or None when that is unknown.

    Only recording elements of the element's role (or tag when it has none) are compared, with
    :func:`core.skills.trigger.condition_matches`, the runtime's matching: one that matches says True; one that
    lacks the fields that would tell (a baseline element has role and text only) makes it unknown; none at all
    says False only when ``complete`` (the recording's baseline lists every named element: fewer than
    :data:`core.state.change.MAX_KEY_ELEMENTS`), else unknown."""
    if obs is None:
        return None
    kind = _kind(element) if element is not None else cond.role
    same = [c for c in obs.candidates if not kind or _kind(c.descriptor) == kind]
    if any(condition_matches(cond, c) for c in same):
        return True
    if any(_may_match(cond, c.descriptor) for c in same):
        return None
    return False if complete else None


def _complete(recorded: Mapping[str, Any]) -> bool:
    from core.state.change import MAX_KEY_ELEMENTS

    base = recorded.get("baseline")
    return base is not None and len(base) < MAX_KEY_ELEMENTS


def skill_id(product: str, skill: Skill) -> str:
    """``sk-<12 hex>`` from the product, kind, trigger and actions: the same lesson learnt twice is one skill."""
    m = skill_to_mapping(skill)
    key = json.dumps([product, m["kind"], m["trigger"], [(a["kind"], a["value"], a["target"]) for a in m["actions"]]],
                     sort_keys=True)
    return "sk-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]



#: How a description names a placeholder of the flow step's target (``{target.label}`` -> "the step's field's label").
_PLACEHOLDER_WORDS = {"name": "accessible name", "label": "label", "text": "text", "placeholder": "placeholder"}


def _plain_placeholders(text: str) -> str:
    """``text`` with each quoted ``'{target.F}'`` placeholder in words: a description is read by a person, who never
    sees the placeholder's binding (the action keeps the placeholder itself)."""
    return re.sub(r"'\{target\.(\w+)\}'",
                  lambda m: f"the step's field's {_PLACEHOLDER_WORDS.get(m.group(1), m.group(1))}", text)


def extract(record: Any, *, corrected: Sequence[Mapping[str, Any]], failed: Sequence[Mapping[str, Any]],
            product: str, attribution: Any = None, meaning: str = "replace", correction_id: int = 0,
            heal_id: int = 0, now: datetime | None = None, extractor: str = "contrast") -> Candidate | NoSkill:
    """Contrast ``failed`` (flow step mappings around the failure point, the failing step among them) with
    ``corrected`` (the correction's steps) and make the candidate skill (see the module docstring).

    ``record`` is the failure record; ``attribution`` its :class:`~core.skills.attribution.Attribution`
    (or None); ``meaning`` the hand-back's (``replace`` / ``insert`` / ``done``).
    """
    if not corrected:
        return NoSkill("no action was recorded in the correction: nothing to learn")
    diff = differing(corrected, failed)
    if not diff:
        return NoSkill("the correction does what the flow's steps do (nothing differs): the failure did not "
                       "need a new action")
    point = next((f for f in failed if (f.get("index") == record.step_index and f.get("status") == "failed")),
                 None) or next((f for f in failed if str(f.get("step_id") or f.get("id")) == record.step_id), None)
    if point is None:
        return NoSkill(f"the failing step {record.step_id!r} is not in the failed segment")
    step = step_of(point)
    step_target = point.get("target") or {}
    unexpected = tuple(getattr(attribution, "unexpected", ()) or ())
    if (meaning == "replace" and len(diff) == 1 and not unexpected and diff[0].get("action") == point.get("action")
            and record.error_type in ("locator", "action_error")):
        return NoSkill("the correction only puts the step's action on another element: that is a heal of the "
                       "step (its flow edit is offered), not a new action")
    obs = failure_observation(record)
    first_target = generalise((diff[0].get("target") or {}), step_target)[0]
    if not find(bind_condition(_condition(first_target, in_dialog=False), bindings_for(step)), obs):
        obs = failure_observation(record, after=True)  # the popup the failed action opened
    recorded = (record.page or {}).get("recorded") or {}
    rec_obs = recording_observation(recorded, step_target)
    complete = _complete(recorded)
    bindings = bindings_for(step)
    actions: list[SkillAction] = []
    params: list[str] = []
    conds: list[ElementCondition] = []
    for d in diff:
        fields, used = generalise(d.get("target") or {}, step_target)
        params += used
        container = str((d.get("target") or {}).get("container") or "")
        in_dialog = bool(container) and any(normalize(container) == normalize(m) for m in obs.modal_titles)
        desc = ElementDescriptor(**{k: v for k, v in fields.items()}, anchor=_anchor(d.get("target") or {}))
        kind = str(d.get("action") or "click")
        actions.append(SkillAction(Action(kind, str(d.get("value") or "")), desc,  # type: ignore[arg-type]
                                   str(d.get("name") or "")))
        conds.append(_condition(fields, in_dialog=in_dialog))
    required: list[ElementCondition] = []
    absent: list[ElementCondition] = []
    differences: list[str] = []
    first = conds[0]
    if not first.is_empty:
        bound = bind_condition(first, bindings)
        hits = find(bound, obs)
        if len(hits) > 1:
            return NoSkill(f"the element the correction acted on ({bound.describe()}) is not unique on the page "
                           f"at the failure ({len(hits)} match)")
        if hits:
            required.append(first)
            had = known_on_recording(bound, hits[0].descriptor, rec_obs, complete)
            if had is False:
                differences.append(f"{bound.describe()} was on the page and not on the recording")
    dialog_name = unexpected[-1] if unexpected else ""
    if dialog_name:
        differences.append(f"the dialog {dialog_name!r} was open and not on the recording")
    own = _condition(generalise(step_target, step_target)[0], in_dialog=False)
    gone = ""
    if not own.is_empty and not find(bind_condition(own, bindings), obs, usable=False):
        had = known_on_recording(bind_condition(own, bindings), None, rec_obs, complete)
        if had:
            absent.append(own)
            params += [p for p in ("target.name", "target.label", "target.text", "target.placeholder")
                       if "{" + p + "}" in (own.name + own.label + own.text + own.placeholder)]
            gone = "the step's own target was on the recording and not on the page"
    if not differences:
        only = (" - only the step's own target is missing, next to elements the recording also had: that is "
                "what a slow or half-loaded page looks like") if gone else ""
        return NoSkill("nothing the page showed at the failure is known to be new against the recording (no "
                       f"dialog, no element the recording lacked){only}: the failure is not explained by the page")
    if gone:
        differences.append(gone)
    params += [p for a in actions for p in placeholders(a.action.value)]
    negative = any(is_negative(str(d.get("name") or "")) for d in diff)
    trigger = SkillTrigger(required=tuple(required), absent=tuple(absent), dialog=True if dialog_name else None,
                           dialog_name=dialog_name, step_action=point.get("action", "") if params else "")
    verify: tuple[VerifyRule, ...] = ()
    if required and required[0].in_dialog and not negative:
        verify = (VerifyRule("absent", required[0]),)
    what = "; ".join(f"{a.action.kind} {_condition(generalise(d.get('target') or {}, step_target)[0], in_dialog=False).describe()}"
                     for a, d in zip(actions, diff, strict=True))
    when = dialog_name and f"the dialog {dialog_name!r} is open" or "; ".join(differences)
    desc = _plain_placeholders(f"When {when}, never {what}" if negative else f"When {when}, {what} before "
                               f"{point.get('intent') or step.title!r}")
    cause = getattr(attribution, "cause", "")
    skill = Skill(
        id="", description=desc[:300], trigger=trigger, actions=tuple(actions), kind="deny" if negative else "do",
        verify=verify, recovery=(RecoveryRule("not_found", "abort", 1),),
        scope=SkillScope(product=product, component=dialog_name or str(step_target.get("role") or "")),
        params=tuple(dict.fromkeys(params)),
        provenance=SkillProvenance(
            source="heal" if heal_id else "correction", run_id=record.run_id, flow=record.flow,
            step_ids=(record.step_id,), step_index=record.step_index, correction_id=correction_id, heal_id=heal_id,
            failure_id=record.id, cause=cause, cause_confidence=float(getattr(attribution, "confidence", 0.0)),
            extractor=extractor, extracted_at=now or datetime.now(timezone.utc)),
        state="proposed")
    from dataclasses import replace

    return Candidate(replace(skill, id=skill_id(product, skill)), tuple(diff))


class ActionChoice(BaseModel):
    """The fixed schema of a model's answer: which differing actions (0-based) the skill needs."""

    keep: list[int] = Field(min_length=1, max_length=20)
    why: str = Field(default="", max_length=300)


def _line(i: int, m: Mapping[str, Any]) -> str:
    t = m.get("target") or {}
    words = t.get("name") or t.get("label") or t.get("text") or t.get("placeholder") or ""
    where = f" in the dialog {t.get('container')!r}" if t.get("container") else ""
    return f"{i}: {m.get('action', '?')} {t.get('role', '')} {words!r}{where}"


def choose_actions(corrected: Sequence[Mapping[str, Any]], failed: Sequence[Mapping[str, Any]], record: Any,
                   client: Any) -> list[Mapping[str, Any]] | None:
    """Ask a model (``client.complete_json(messages, ActionChoice)``) which differing actions the skill needs.

    Returns the kept actions (a subset, in order), or None when there is
    nothing to choose (fewer than two) or the answer is unusable.  Only
    texts already in the record and the correction (masked by the store)
    are sent.
    """
    diff = differing(corrected, failed)
    if len(diff) < 2:
        return None
    snap = (record.page or {}).get("before") or {}
    text = "\n".join([
        "A web flow step failed and a person fixed it by hand. Keep only the actions of the person that the "
        "fix needs (leave out stray clicks). Answer one JSON object {\"keep\": [indices], \"why\": \"...\"}.",
        f"Failure: {record.error_type}: {str(record.message)[:300]}",
        f"Dialogs open: {', '.join(snap.get('modal_titles') or ()) or 'none'}",
        "Flow steps around it: " + "; ".join(_line(i, m) for i, m in enumerate(failed)),
        "The person's actions that the flow does not do:", *(_line(i, m) for i, m in enumerate(diff)),
    ])
    try:
        answer, _usage = client.complete_json([{"role": "user", "content": text}], ActionChoice)
    except Exception:  # noqa: BLE001 - a model that fails chooses nothing
        return None
    keep = sorted({i for i in answer.keep if 0 <= i < len(diff)})
    if not keep or len(keep) != len(set(answer.keep)):
        return None  # an index that names no differing action: the answer is not trusted at all
    return [diff[i] for i in keep]
