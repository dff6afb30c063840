"""Is a skill's trigger true on this page? (K6: "check the trigger against the live page").

Pure logic over one :class:`~core.domain.Observation`: no browser.  A
trigger holds only when every part that is set holds; when some parts hold
and others do not it *half holds*, and a skill whose trigger half holds
never fires (a false trigger is a possible wrong click).  Texts are compared
normalised (:func:`core.locate.textsim.normalize`: case, punctuation and
whitespace ignored) and exactly: no fuzzy match may make a trigger true.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Mapping

from core.domain import Candidate, Observation, Step
from core.domain.skill import TARGET_FIELDS, ElementCondition, SkillTrigger
from core.locate.textsim import normalize

__all__ = ["TriggerCheck", "bindings_for", "bind_text", "bind_condition", "condition_matches", "find",
           "check_trigger", "UnboundPlaceholder"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")


class UnboundPlaceholder(LookupError):
    """A placeholder of a skill names a value this step does not have."""


def bindings_for(step: Step | None, params: Mapping[str, str] | None = None) -> dict[str, str]:
    """Values placeholders may name: the flow's parameters and ``target.<field>`` of the current step.

    Secret values are included (actions may type them); callers never log a
    bound text.
    """
    out = {str(k): str(v) for k, v in (params or {}).items()}
    if step is not None:
        for f in TARGET_FIELDS:
            v = getattr(step.target, f, "")
            if v:
                out[f"target.{f}"] = v
        out["step.action"] = step.action.kind
    return out


def bind_text(text: str, bindings: Mapping[str, str]) -> str:
    """``text`` with ``{name}`` replaced from ``bindings``.

    Raises
    ------
    UnboundPlaceholder
        A placeholder has no value (the skill does not apply to this step).
    """
    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in bindings:
            raise UnboundPlaceholder(key)
        return bindings[key]
    return _PLACEHOLDER.sub(sub, text or "")


def bind_condition(c: ElementCondition, bindings: Mapping[str, str]) -> ElementCondition:
    """The condition with its placeholders bound (raises :class:`UnboundPlaceholder`)."""
    return ElementCondition(role=c.role, name=bind_text(c.name, bindings), label=bind_text(c.label, bindings),
                            text=bind_text(c.text, bindings), placeholder=bind_text(c.placeholder, bindings),
                            test_id=bind_text(c.test_id, bindings), in_dialog=c.in_dialog)


def _key(text: str) -> str:
    """Normalised text; a text of punctuation only is compared as written (``"?"`` is not ``"!"``)."""
    return normalize(text) or " ".join(text.split())


def _in_dialog(cand: Candidate, obs: Observation) -> bool:
    container = normalize(cand.descriptor.container)
    return bool(container) and any(normalize(m) == container for m in obs.modal_titles)


def condition_matches(c: ElementCondition, cand: Candidate, obs: Observation | None = None) -> bool:
    """True when every set field of the (bound) condition matches ``cand``.

    ``name`` matches the accessible name or, when the element has none, its
    text; ``text`` the visible text or the accessible name (a button's name
    is usually its text).  ``in_dialog`` needs ``obs``.  An empty condition
    matches nothing.
    """
    if c.is_empty:
        return False
    d = cand.descriptor
    if c.role and c.role != d.role:
        return False
    pairs = ((c.label, (d.label,)), (c.placeholder, (d.placeholder,)), (c.test_id, (d.test_id,)),
             (c.name, (d.name,) if d.name else (d.text,)), (c.text, (d.text, d.name)))
    for want, have in pairs:
        if want and _key(want) not in {_key(h) for h in have if h}:
            return False
    if c.in_dialog and (obs is None or not _in_dialog(cand, obs)):
        return False
    return True


def find(c: ElementCondition, obs: Observation, *, usable: bool = True) -> tuple[Candidate, ...]:
    """Candidates of ``obs`` matching ``c``; with ``usable``, only visible, enabled, uncovered ones."""
    return tuple(cand for cand in obs.candidates
                 if condition_matches(c, cand, obs)
                 and (not usable or (cand.visible and cand.enabled and not cand.covered)))


@dataclass(frozen=True, slots=True)
class TriggerCheck:
    """The result of :func:`check_trigger`.

    ``holds``: every set part holds; ``half``: some set parts hold and some
    do not (never fire); ``met`` / ``missed``: one short text per part, for
    the studio and the use log; ``ambiguous``: a required element matched
    more than one usable element (the trigger then does not hold: the skill
    could not know which one to act on).
    """

    holds: bool
    half: bool
    met: tuple[str, ...] = ()
    missed: tuple[str, ...] = ()
    ambiguous: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        """One sentence: what held and what did not."""
        if self.holds:
            return "trigger holds: " + "; ".join(self.met)
        return "trigger does not hold: " + "; ".join(self.missed + self.ambiguous)


def check_trigger(trigger: SkillTrigger, obs: Observation, *, step: Step | None = None,
                  params: Mapping[str, str] | None = None) -> TriggerCheck:
    """Check ``trigger`` on ``obs`` for the current flow ``step`` (or none).

    Returns a :class:`TriggerCheck`; an empty trigger, or one whose
    placeholders this step cannot bind, never holds (and does not half hold).
    """
    if trigger.is_empty:
        return TriggerCheck(False, False, missed=("the trigger names nothing",))
    bindings = bindings_for(step, params)
    met: list[str] = []
    missed: list[str] = []
    ambiguous: list[str] = []
    try:
        if trigger.step_action:
            (met if step is not None and step.action.kind == trigger.step_action else missed).append(
                f"step action {trigger.step_action}")
        if trigger.step_target is not None:
            want = bind_condition(trigger.step_target, bindings)
            ok = step is not None and condition_matches(want, Candidate("step", step.target))
            (met if ok else missed).append(f"step target {want.describe()}")
        for c in trigger.required:
            bc = bind_condition(c, bindings)
            found = find(bc, obs)
            if len(found) == 1:
                met.append(f"{bc.describe()} present")
            elif not found:
                missed.append(f"{bc.describe()} not present")
            else:
                ambiguous.append(f"{bc.describe()} matches {len(found)} elements")
        for c in trigger.absent:
            bc = bind_condition(c, bindings)
            (missed if find(bc, obs, usable=False) else met).append(f"{bc.describe()} absent")
    except UnboundPlaceholder as exc:
        return TriggerCheck(False, False, missed=(f"this step has no value for {{{exc.args[0]}}}",))
    if trigger.url_pattern:
        (met if fnmatch.fnmatch(obs.url, trigger.url_pattern) else missed).append(f"URL {trigger.url_pattern}")
    if trigger.title:
        (met if normalize(trigger.title) in normalize(obs.title) else missed).append(f"title has {trigger.title!r}")
    if trigger.dialog is not None:
        (met if bool(obs.modal_titles) == trigger.dialog else missed).append(
            "a dialog is open" if trigger.dialog else "no dialog is open")
    if trigger.dialog_name:
        ok = any(normalize(trigger.dialog_name) in normalize(m) for m in obs.modal_titles)
        (met if ok else missed).append(f"dialog {trigger.dialog_name!r} open")
    holds = not missed and not ambiguous
    return TriggerCheck(holds, bool(met) and not holds, tuple(met), tuple(missed), tuple(ambiguous))
