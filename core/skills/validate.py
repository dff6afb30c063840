"""Validation before review (K5): legality, replay on similar stored states, and "did it reproduce?".

Pure logic over a candidate :class:`~core.domain.skill.Skill`, its failure
record and a few states (:class:`Case`): no browser.

* **Legality** (:func:`legality`): a description, a trigger that names
  something, at least one action for a ``do`` skill (at most
  :data:`MAX_ACTIONS`), engine action kinds only and never ``navigate``,
  ``back`` or ``upload`` (a skill goes nowhere a flow did not and reads no file),
  targets by meaning only (no id, CSS path, XPath, box or class), and the
  safety bar: an action of any kind with a target (click, check, select,
  press, input, hover...) on a control that may confirm, delete or submit
  (:func:`core.plan.guard.may_write` over every text of the target, and a
  select's option) is legal only when the trigger names it among its
  required elements (a select's option too); the reason names the action
  and the field.  Kinds the skill runtime does not run (``back``,
  ``assert``, ``screenshot``: :data:`core.skills.files.ALLOWED_ACTIONS`)
  are refused; a proposal is never approved for an irreversible step.
* **Replay** (:func:`replay`): on each case the trigger is checked as the
  runtime would (:func:`core.skills.trigger.check_trigger`, bound to the
  case's step).  A *positive* case (a stored state of this failure or of a
  similar one: the same flow step, or the same dialog) passes when the
  trigger holds and the first action's target is there exactly once; a
  *negative* case (the recording's state, a state where the step passed)
  passes when the trigger does not hold.  At most :data:`MAX_CASES` (5)
  cases are used; the pass rate is ``passed / cases``.  A negative case
  where the trigger holds drops the candidate outright, whatever the pass
  rate: the skill would fire on a page where the flow works.
* **Reproduction** (:func:`reproduced`): a failure that does not reproduce
  never becomes a skill.  It did not when the step passed on a retry by
  itself (the record is ``transient``), or when its only sign is a server
  error seen on one attempt.  A failure that a wait would have cured is
  transient however many attempts saw it (:func:`waited_out`): a timeout, a
  page that showed loading evidence at the failure, a target that showed up
  on a later picture of the page or a page that changed between attempts
  with nobody acting - unless a page difference explains it.  Otherwise it
  reproduced when it was seen on two attempts or more with the same error
  type, or when it is explained by a page difference: the trigger holds on
  the failure's states and on none where it must not.
* :func:`validate` puts it together: a :class:`~core.domain.skill.SkillValidation`
  and, when the candidate must be dropped, the reason (one line).  Below the
  threshold (:data:`DEFAULT_THRESHOLD`, 0.6) it is dropped; it also needs at
  least one positive and one negative case (a trigger never checked against
  a page where it must not fire could steer the agent anywhere).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from core.progress import counted
from core.domain import ACTION_KINDS, Candidate, ElementDescriptor, Observation, Step
from core.domain.skill import SKILL_KINDS, ElementCondition, Skill, SkillValidation
from core.plan.guard import may_write
from core.skills.trigger import bindings_for, bind_condition, check_trigger, condition_matches, find, UnboundPlaceholder

__all__ = ["Case", "legality", "replay", "reproduced", "waited_out", "validate", "DEFAULT_THRESHOLD", "MAX_CASES", "MIN_CASES",
           "MAX_ACTIONS", "action_condition"]

#: Pass rate below which a candidate is dropped (K5; the project file's ``skills: validation_threshold``).
DEFAULT_THRESHOLD = 0.6
#: Cases replayed at most (K5: "3-5 similar stored states").
MAX_CASES = 5
#: Cases needed at least: one where the trigger must hold, one where it must not.
MIN_CASES = 2
#: Actions one skill may have.
MAX_ACTIONS = 8
#: Action kinds a skill may not use: it goes nowhere a flow did not (not even back), and reads no file.
_FORBIDDEN = ("navigate", "upload", "back")
_NOT_SEMANTIC = ("id", "css_path", "xpath", "name_attr", "href", "classes", "bbox", "crop")
_TIMEOUT = re.compile(r"timed? ?out|timeout|still loading|slow", re.I)


@dataclass(frozen=True, slots=True)
class Case:
    """One state a candidate is replayed on.

    ``expect`` True: the trigger must hold there (a state of the failure);
    False: it must not (the recording, a passing state).  ``step`` is the
    flow step there (binds ``{target.*}``); ``label`` names the case in reasons.
    """

    observation: Observation
    expect: bool
    label: str
    step: Step | None = None


def action_condition(target: Any, *, in_dialog: bool = False) -> ElementCondition:
    """The element condition a skill action's target stands for (role and its strongest text)."""
    name = target.name or ("" if target.label or target.placeholder else target.text)
    return ElementCondition(role=target.role, name=name, label=target.label, placeholder=target.placeholder,
                            test_id=target.test_id, in_dialog=in_dialog)


_FIELD_ROLES = ("textbox", "searchbox", "combobox", "spinbutton")
#: Target fields the write guard reads, in the order it names them.
_GUARD_FIELDS = ("name", "label", "text", "title", "alt", "placeholder")


def _guarded(kind: str, t: Any, value: str) -> str:
    """Which text of a skill action makes it confirm, delete or submit ("" when none does): ``"label 'Also
    delete all saved addresses'"``, ``"option 'Delete all'"`` (a select's value), ``"an icon-only control"``.

    Every action kind with a target is read as a click would be (:func:`core.plan.guard.may_write`): a
    checkbox named "Also delete all saved addresses" deletes when checked, an option "Delete all" when
    chosen; a key pressed in a field may submit its form."""
    if kind == "press" and (t.role in _FIELD_ROLES or t.tag in ("input", "textarea")):
        return "a key pressed in a field (Enter submits its form)"
    if kind == "select" and value and may_write(Candidate("t", ElementDescriptor(text=value)), "click"):
        return f"option {value!r} (its value)"
    if t.is_empty or not may_write(Candidate("t", t), "click"):
        return ""
    for f in _GUARD_FIELDS:
        text = getattr(t, f, "")
        if text and may_write(Candidate("t", ElementDescriptor(**{f: text})), "click"):
            return f"{f} {text!r}"
    return "an icon-only control (no words say what it does)"


def legality(skill: Skill) -> list[str]:
    """Why the skill is not legal (empty: it is)."""
    from core.skills.files import ALLOWED_ACTIONS  # noqa: PLC0415 - one list of what a skill may run

    out: list[str] = []
    if not skill.description.strip():
        out.append("no description")
    if skill.kind not in SKILL_KINDS:
        out.append(f"unknown kind {skill.kind!r}")
    if skill.trigger.is_empty:
        out.append("the trigger names nothing")
    if skill.kind == "do" and not skill.actions:
        out.append("no action")
    if skill.kind == "deny" and not skill.actions:
        out.append("a deny rule that names no element")
    if len(skill.actions) > MAX_ACTIONS:
        out.append(f"{len(skill.actions)} actions (at most {MAX_ACTIONS})")
    if skill.irreversible_ok:
        out.append("a proposal is never approved for an irreversible step")
    for i, a in enumerate(skill.actions, 1):
        kind, t = a.action.kind, a.target
        if kind not in ACTION_KINDS:
            out.append(f"action {i}: {kind!r} is not an engine action")
            continue
        if kind in _FORBIDDEN:
            out.append(f"action {i}: a skill may not {kind}")
        elif kind not in ALLOWED_ACTIONS and skill.kind == "do":
            out.append(f"action {i}: a skill may not {kind} (the skill runtime runs {', '.join(ALLOWED_ACTIONS)})")
        bad = [f for f in _NOT_SEMANTIC if getattr(t, f, None)]
        if bad:
            out.append(f"action {i}: the target names {', '.join(bad)} (semantic fields only)")
        if (kind in ("click", "dblclick", "input", "select", "check", "uncheck", "hover") and action_condition(t).is_empty
                and not (a.choice and skill.trigger.popup)):  # a kind skill names its control by role (kinds.py)
            out.append(f"action {i}: {kind} without a target named by meaning")
        why = _guarded(kind, t, a.action.value) if skill.kind == "do" else ""
        if why:
            named = any(condition_matches(_loose(c), Candidate("t", t)) for c in skill.trigger.required)
            if kind == "select" and why.startswith("option "):
                named = named and any(_key_text(c) == _key_text(ElementCondition(text=a.action.value))
                                      for c in skill.trigger.required)
            if not named:
                out.append(f"action {i} ({kind}) on {action_condition(t).describe()}: {why} may confirm, delete "
                           "or submit, and the trigger does not name it among its required elements")
    return out


def _key_text(c: ElementCondition) -> str:
    return " ".join((c.name or c.text or c.label).lower().split())


def _loose(c: ElementCondition) -> ElementCondition:
    return ElementCondition(role=c.role, name=c.name, label=c.label, text=c.text, placeholder=c.placeholder,
                            test_id=c.test_id)


def _one(skill: Skill, case: Case) -> str:
    """"" when the case passes, else why not."""
    check = check_trigger(skill.trigger, case.observation, step=case.step)
    if not case.expect:
        return f"{case.label}: the trigger holds where it must not ({check.reason})" if check.holds else ""
    if not check.holds:
        return f"{case.label}: {check.reason}"
    if not skill.actions:
        return ""
    first = skill.actions[0]
    cond = action_condition(first.target, in_dialog=any(c.in_dialog for c in skill.trigger.required[:1]))
    if cond.is_empty:
        return ""
    try:
        bound = bind_condition(cond, bindings_for(case.step))
    except UnboundPlaceholder as exc:
        return f"{case.label}: no value for {{{exc.args[0]}}}"
    hits = find(bound, case.observation, usable=skill.kind == "do")
    if skill.kind == "do" and len(hits) != 1:
        return f"{case.label}: {bound.describe()} matches {len(hits)} usable elements (needs exactly one)"
    if skill.kind == "deny" and not hits:
        return f"{case.label}: {bound.describe()} is not on the page"
    return ""


def replay(skill: Skill, cases: Sequence[Case]) -> tuple[int, int, list[str]]:
    """Replay on at most :data:`MAX_CASES` cases (positives first, then negatives, alternating);
    returns ``(cases, passed, reasons)``."""
    pos = [c for c in cases if c.expect]
    neg = [c for c in cases if not c.expect]
    chosen: list[Case] = []
    while (pos or neg) and len(chosen) < MAX_CASES:
        if pos:
            chosen.append(pos.pop(0))
        if neg and len(chosen) < MAX_CASES:
            chosen.append(neg.pop(0))
    reasons = [r for r in (_one(skill, c) for c in chosen) if r]
    return len(chosen), len(chosen) - len(reasons), reasons


def _target_on(snap: Mapping[str, Any], target: Mapping[str, Any]) -> bool:
    from core.skills.capture import observation_of

    cond = ElementCondition(role=str(target.get("role") or ""), name=str(target.get("name") or ""),
                            label=str(target.get("label") or ""), placeholder=str(target.get("placeholder") or ""),
                            test_id=str(target.get("test_id") or ""))
    return not cond.is_empty and bool(find(cond, observation_of(snap), usable=False))


def waited_out(record: Any) -> str:
    """Why a wait would have cured this failure ("" when nothing says so): a timeout; loading evidence on the
    page at the failure; for a target that was not found or not usable, the target on a later picture of the
    page (the page after the failed action, a later attempt) or a page that changed between attempts with
    nobody acting (its state digest moved) - it was still loading."""
    page: Mapping[str, Any] = record.page or {}
    attempts = [a for a in page.get("attempts") or () if isinstance(a, Mapping)]
    if _TIMEOUT.search(record.message or "") or any(_TIMEOUT.search(str(a.get("message") or "")) for a in attempts):
        return "a timeout"
    snaps = [a.get("before") or {} for a in attempts] or [page.get("before") or {}]
    loading = next((e for s in snaps for e in s.get("loading") or ()), "")
    if loading:
        return f"the page was still loading ({loading})"
    if record.error_type not in ("locator", "precondition", "action_error"):
        return ""
    traj = list(record.trajectory or ())
    point = next((e for e in reversed(traj) if e.get("index") == record.step_index), {})
    target = page.get("target") or point.get("target") or {}
    if target and (page.get("after") or {}).get("candidates") and _target_on(page["after"], target) \
            and not any(_target_on(s, target) for s in snaps if s):
        return "the target appeared after the failed attempt"
    if target and len(snaps) >= 2 and not _target_on(snaps[0], target) and _target_on(snaps[-1], target):
        return "the target appeared on a later attempt"
    states = [str(a.get("state") or "") for a in attempts if a.get("state")]
    if record.error_type == "locator" and len(set(states)) > 1:
        return "the page changed between attempts with nobody acting (it was still loading)"
    return ""


def reproduced(record: Any, *, explained: bool) -> tuple[bool, str]:
    """Did the failure reproduce?  ``(yes, why)``; ``explained`` says the page difference holds
    (the trigger holds on the failure's states and on none where it must not)."""
    page: Mapping[str, Any] = record.page or {}
    if record.outcome == "transient":
        return False, "did not reproduce: the step passed on a retry by itself (a transient failure)"
    attempts = [a for a in page.get("attempts") or () if a.get("error_type") == record.error_type]
    http = [h for h in (page.get("signals") or {}).get("http") or () if (h.get("status") or 0) >= 500]
    wait = waited_out(record)
    if wait and not explained:
        return False, (f"did not reproduce: {wait} - a wait would have cured it (a slow page, not a new one), "
                       f"seen on {counted(len(attempts), 'attempt')}")
    if http and len(attempts) < 2 and not explained:
        return False, (f"did not reproduce: HTTP {http[0].get('status')} seen on one attempt only (a slow server "
                       "or a transient error)")
    if len(attempts) >= 2:
        return True, f"seen on {len(attempts)} attempts"
    if explained:
        return True, "explained by a page difference (the trigger holds on the failure's page, not on the recording's)"
    return False, "did not reproduce: seen once, and no page difference explains it"


def validate(skill: Skill, record: Any, cases: Sequence[Case], *, threshold: float = DEFAULT_THRESHOLD,
             now: datetime | None = None) -> tuple[SkillValidation, str]:
    """The K5 result of ``skill`` and the reason to drop it ("" when it may reach review)."""
    at = now or datetime.now(timezone.utc)
    illegal = legality(skill)
    n, passed, reasons = replay(skill, cases)
    pos_ok = any(c.expect and not _one(skill, c) for c in cases)
    fired = [r for r in (_one(skill, c) for c in cases if not c.expect) if r]
    neg_ok = any(not c.expect for c in cases) and not fired
    again, why = reproduced(record, explained=pos_ok and neg_ok)
    for r in fired:
        if r not in reasons:
            reasons.append(r)
    result = SkillValidation(cases=n, passed=passed, reproduced=again,
                             reasons=tuple(illegal + reasons + ([] if again else [why])), checked_at=at)
    if illegal:
        return result, "not legal: " + "; ".join(illegal)
    if fired:
        return result, "the trigger holds where it must not, so the skill would act on a page where the flow " \
                       "works: " + "; ".join(fired[:2])
    if not again:
        return result, why
    if not any(c.expect for c in cases) or not any(not c.expect for c in cases) or n < MIN_CASES:
        return result, ("not validated: it needs a stored state where its trigger must hold and one where it must "
                        "not (the recording's page is not known)")
    if result.pass_rate < threshold:
        return result, (f"pass rate {result.pass_rate:.0%} on {n} stored states is below the threshold "
                        f"{threshold:.0%}: " + "; ".join(reasons[:3]))
    return result, ""
