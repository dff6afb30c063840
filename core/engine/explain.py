"""Plain words for an escalation (R4): what a tester reads first, before the locator's jargon.

:func:`explain` turns the escalation kind, the engine's reason, the step's
recorded target, the resolution (its top candidates and per-level trace) and
the candidates of the page into one or two sentences such as
``'Department' was not found; the closest is 'Employee' (0.67), not close
enough to act on it.``  The engine's own ``reason`` stays available as the
detail.  The studio shows the sentence first; the command line prints it for
every escalation.

:func:`use_once_confirm` says why using a candidate once, by a person's choice,
still needs an explicit confirmation (an irreversible step, S6; a candidate of
another role than the recorded target, R2) - "" when it does not.
"""
from __future__ import annotations

from typing import Sequence

from core.domain import Candidate, ElementDescriptor, EscalationKind, Resolution, ScoredCandidate
from core.locate.roles import effective_role

__all__ = ["explain", "candidate_state", "use_once_confirm", "role_of", "TIE_MIN_SCORE", "FAR_SCORE"]

#: A best candidate at or above this score, with a runner-up within the margin, is a tie between look-alikes
#: rather than "not found" (the fuzzy threshold's neighbourhood, R2: 0.8).
TIE_MIN_SCORE = 0.8
#: Below this score nothing on the page resembles the target: the closest is not named as a near miss
#: (a third of the way to a match; no level of R2 accepts anything near it).
FAR_SCORE = 0.3

_KIND_PLAIN = {
    "breaker_open": "The run stopped itself after {n} failures in a row (the circuit breaker opened)",
    "budget": "The run used its whole step budget",
    "no_decision": "No decider could choose the next action",
    "crashed": "The browser or the page crashed",
    "loop": "The same action on the same page was about to be done again",
    "stagnation": "The last steps changed nothing real on the page",
    "page": "The page is broken, does not answer or keeps loading",
}


def role_of(d: ElementDescriptor) -> str:
    """The element's effective role (explicit, else implicit from tag and type); "" when unknown."""
    return effective_role(d.role, d.tag, d.type)


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    return f"'{text[:60]}\u2026'" if len(text) > 60 else f"'{text}'"


def _target_name(target: ElementDescriptor | None) -> str:
    if target is None or target.is_empty:
        return "The step's target"
    label = target.label_text
    if label:
        return _quoted(label)
    return f"The {role_of(target) or target.tag or 'element'}"


def _label(s: ScoredCandidate, by_ref: dict[str, Candidate]) -> str:
    c = by_ref.get(s.ref)
    label = s.label or (c.descriptor.label_text if c is not None else "")
    return _quoted(label) if label else f"an unnamed {role_of(c.descriptor) if c else 'element'}"


def candidate_state(c: Candidate | None) -> str:
    """``hidden`` / ``disabled`` / ``covered`` / ``enabled`` ("" when the element is not known), in that order."""
    if c is None:
        return ""
    if not c.visible:
        return "hidden"
    if not c.enabled:
        return "disabled"
    if c.covered:
        return "covered"
    return "enabled"


def _state(c: Candidate | None) -> str:
    """What keeps a candidate from being acted on, in words ("" when nothing does)."""
    state = candidate_state(c)
    return {"covered": "covered by another element", "enabled": ""}.get(state, state)


def _kind(c: Candidate | None) -> str:
    """``"link in B3, "``: the role and grid cell of a candidate, for telling look-alikes apart."""
    if c is None:
        return ""
    role = role_of(c.descriptor)
    where = f" in {c.grid_cell}" if c.grid_cell else ""
    return f"{role}{where}, " if role or where else ""


def _crosses(target: ElementDescriptor | None, c: Candidate | None) -> tuple[str, str]:
    """(target role, candidate role) when both are known and differ, else ("", "")."""
    if target is None or c is None:
        return "", ""
    t, r = role_of(target), role_of(c.descriptor)
    return (t, r) if t and r and t != r else ("", "")


def _strip(reason: str, *prefixes: str) -> str:
    for p in prefixes:
        if reason.startswith(p):
            return reason[len(p):]
    return reason


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _look_alikes(target: ElementDescriptor | None, by_ref: dict[str, Candidate]) -> list[Candidate]:
    """The visible candidates with the target's role and accessible name (spaces collapsed, case ignored)."""
    if target is None or not target.label_text:
        return []
    key = (role_of(target), " ".join(target.label_text.split()).casefold())
    return [c for c in by_ref.values() if c.visible
            and (role_of(c.descriptor), " ".join(c.descriptor.label_text.split()).casefold()) == key]


def _abstained(name: str, target: ElementDescriptor | None, resolution: Resolution | None,
               by_ref: dict[str, Candidate], margin: float) -> str:
    top = tuple(resolution.top) if resolution is not None else ()
    looked = resolution.considered if resolution is not None else 0
    if not top or top[0].score < FAR_SCORE:
        seen = f" ({looked} elements looked at)" if looked else ""
        closest = f"; the closest, {_label(top[0], by_ref)} ({top[0].score:.2f}), is far from it" if top else ""
        return f"{name} was not found: nothing on the page resembles it{seen}{closest}."
    best = top[0]
    cand = by_ref.get(best.ref)
    runner = top[1] if len(top) > 1 else None
    if resolution is not None and "the step is irreversible and no second independent" in resolution.reason:
        return (f"{name} probably is {_label(best, by_ref)} ({best.score:.2f}), but the step is irreversible and "
                f"only one way of finding it agrees: it is not acted on without your confirmation.")
    t_role, c_role = _crosses(target, cand)
    named_alike = (cand is not None and target is not None and bool(target.name.strip())
                   and " ".join(cand.descriptor.name.split()).lower() == " ".join(target.name.split()).lower())
    if t_role and (best.score >= TIE_MIN_SCORE or named_alike):  # the words match, the kind of control does not
        return (f"{name} ({t_role}) was not found; the closest is a {c_role} {_label(best, by_ref)} "
                f"({best.score:.2f}), another kind of control: it is not used without your confirmation.")
    state = _state(cand)
    if state and best.score >= TIE_MIN_SCORE:
        return f"{name} is on the page but {state}: it cannot be used now ({_label(best, by_ref)}, {best.score:.2f})."
    if state:
        return (f"{name} was not found; the closest, {_label(best, by_ref)} ({best.score:.2f}), is {state} "
                f"and not close enough anyway.")
    twins = _look_alikes(target, by_ref)
    if len(twins) >= 2:  # the real cause: the page has it more than once, and which one was recorded is unclear
        where = " and ".join(_kind(c).rstrip(", ") or "an element" for c in twins[:3])
        more = f" (and {len(twins) - 3} more)" if len(twins) > 3 else ""
        return (f"{name} is on the page {len(twins)} times ({where}{more}): they look the same and the ways of "
                f"finding it disagree on which one was recorded, so none is pressed until you choose.")
    if runner is not None and best.score >= TIE_MIN_SCORE and best.score - runner.score < margin:
        a, b = _label(best, by_ref), _label(runner, by_ref)
        if a == b:  # same words: tell them apart by kind and place
            a, b = (f"{lab} ({_kind(by_ref.get(s.ref))}{s.score:.2f})" for lab, s in ((a, best), (b, runner)))
        else:
            a, b = f"{a} ({best.score:.2f})", f"{b} ({runner.score:.2f})"
        return f"{name} matches more than one element about equally: {a} and {b}; which one is meant?"
    closest = f"a {c_role} {_label(best, by_ref)}" if t_role else _label(best, by_ref)
    text = f"{name} was not found; the closest is {closest} ({best.score:.2f}), not close enough to act on it"
    if t_role:  # the best is another kind of control: name the closest of the recorded kind too
        same = next((s for s in top[1:] if s.ref in by_ref and role_of(by_ref[s.ref].descriptor) == t_role), None)
        if same is not None:
            text += f"; the closest {t_role} is {_label(same, by_ref)} ({same.score:.2f})"
    return text + "."


def explain(kind: EscalationKind | str, reason: str, *, target: ElementDescriptor | None = None,
            resolution: Resolution | None = None, candidates: Sequence[Candidate] = (),
            margin: float = 0.1, failures: int = 0) -> str:
    """One or two plain sentences saying why the engine asks a human; never empty.

    Parameters
    ----------
    kind : EscalationKind
        The escalation's kind (``abstained``, ``precondition``, ``breaker_open``...).
    reason : str
        The engine's reason (secrets already masked); the fallback wording.
    target : ElementDescriptor | None
        The step's recorded target (its accessible name is what the sentence names).
    resolution : Resolution | None
        The step's resolution: its ``top`` candidates (best first) give the closest match.
    candidates : Sequence[Candidate]
        The page's candidates the resolution's refs point into (for hidden / disabled /
        covered and role).
    margin : float
        The locator's margin (R2, 0.1 by default): a runner-up closer than it is a tie.
    failures : int
        Consecutive failures counted by the circuit breaker (``breaker_open``).
    """
    by_ref = {c.ref: c for c in candidates}
    name = _target_name(target)
    if kind == "abstained" or (kind == "breaker_open" and resolution is not None and resolution.abstained
                               and not failures):
        return _abstained(name, target, resolution, by_ref, margin)
    if kind == "precondition":
        why = _strip(reason, "precondition not met: ")
        state = _strip(why, "the target is ", "target is ")
        if state != why:
            return _sentence(f"{name} was found but is {state}")
        return _sentence(f"{name} was found but cannot be used now: {why}")
    if kind in ("assertion", "irreversible"):
        what = _strip(reason, "assertion failed: ")
        if kind == "irreversible":
            # the policy's words ("aborted abnormally: irreversible step failed verification (WHY)") say it
            # twice: WHY alone, in the sentence that says what it means
            inner = _strip(what, "aborted abnormally: irreversible step failed verification (")
            if inner != what and inner.endswith(")"):
                what = inner[:-1]
            return _sentence(f"This step may have written data and its result was not the one expected "
                             f"({what.split(';')[0]}); it is never done twice")
        return _sentence(f"A check after the step did not hold: {what}")
    if kind == "approval":
        what = reason.split(": ", 1)[1] if ": " in reason else reason
        chose = what.split(", which may write data")[0]
        return _sentence(f"{chose[:1].upper()}{chose[1:]}, which may write data: approve it to go on, "
                         "or skip, take over or stop")
    if kind == "failed":
        return _sentence(f"The step did not have the expected effect: {reason.split(';')[0]}")
    if kind in _KIND_PLAIN:
        return _sentence(_KIND_PLAIN[kind].format(n=failures or "several"))
    return _sentence(reason or "The engine needs a person here")


def use_once_confirm(target: ElementDescriptor | None, candidate: Candidate | None, *, irreversible: bool) -> str:
    """Why using ``candidate`` once for this step needs an explicit confirmation; "" when it does not.

    An irreversible step (S6) and a candidate of another role than the recorded target
    (a role crossing, R2) are never acted on by a single click: the person confirms first.
    """
    why = []
    if irreversible:
        why.append("the step is irreversible (it writes data)")
    t_role, c_role = _crosses(target, candidate)
    if t_role:
        why.append(f"it is a {c_role}, the step recorded a {t_role}")
    return "; ".join(why)


def recovery_line(event: object) -> str | None:
    """The command line's progress line for a :class:`~core.engine.events.Recovered` event, else None: what
    the engine did on the page that no step of the flow says (a popup closed, a rollback, compensations).

    ``  leave_request step 4: closed a popup in the way: clicked 'Close' in 'What's new' - the step is tried
    again``
    """
    from core.engine.events import Recovered

    if not isinstance(event, Recovered):
        return None
    what = {"dismiss": ("closed a popup in the way", "could not close a popup in the way"),
            "rollback": ("rolled the page back to the step's checkpoint", "could not roll the page all the way back"),
            "compensate": ("ran the step's compensations", "the step's compensations did not all run")}[event.how]
    detail = f": {event.detail}" if event.detail else ""
    return f"  {event.flow} step {event.index + 1}: {what[0] if event.ok else what[1]}{detail}"


def escalation_lines(event: object) -> list[str]:
    """Progress lines of the command line for an escalation event: the plain sentence, then the detail.

    ``  export_report step 4: needs a human: 'Export' was not found; the closest is ...``
    ``    detail: locator abstained: exact: no candidate ...``
    ``    candidate 1: 'Export report' (0.67) button``; [] for any other event.
    """
    from core.domain import Escalation

    if not isinstance(event, Escalation):
        return []
    lines = [f"  {event.flow} step {event.index + 1}: needs a human: {event.plain or event.reason}"]
    if event.plain and event.reason:
        lines.append(f"    detail: {event.reason}")
    for i, c in enumerate(event.candidates[:3], 1):
        lines.append(f"    candidate {i}: {_quoted(c.label) if c.label else c.ref} ({c.score:.2f})"
                     + (f" {c.role}" if c.role else ""))
    return lines
