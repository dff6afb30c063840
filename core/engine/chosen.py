"""A person's choice among an escalation's candidates (R4): use it once, or propose it as a heal.

When the locator abstains (R2) the escalation offers its top candidates.  The
person may:

* **use one once** (:class:`core.engine.events.UseCandidate`, answer
  ``use_candidate``): the step is tried again and its target is the chosen
  element - found again on the new observation by its ref and descriptor, or
  by the exact level on its descriptor; gone, the step abstains again with that
  reason.  The step's source is then ``human`` (a person decided the target),
  so no heal is proposed from it and the flow file is untouched.  The
  pre-check (S4), verification (S5) and every safety rule of acting still
  apply.  A use-once on an irreversible step (S6) or of a candidate of another
  role than the recorded target (a role crossing) needs ``confirmed``: the
  escalation's candidate says why in its ``confirm``, and an unconfirmed
  command is not taken as an answer (the engine keeps waiting).
* **propose one as a heal** (:class:`core.engine.events.ProposeHeal`): a heal
  proposal (kind ``heal``, strategy :data:`CHOSEN`) in the store's heal table,
  the recorded descriptor -> the chosen element's, reviewed like any other
  (``steadyhand heals``, the studio's heal review).  Not an answer: the
  escalation keeps waiting.  Without a store nothing is proposed and
  :class:`HealProposed` says so.

:class:`ChosenPlugin` joins this to the step kernel (:mod:`core.engine.hooks`):
``escalation_offer`` (candidates, answers, plain sentence),
``escalation_answered`` (a use-once is kept for the next attempt, or
refused), ``resolve_first`` (``tryfirst``: the kept choice is the next
attempt's target, before any fast path) and ``heal_proposal``.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.domain import (
    BreakerContext, Candidate, EscalationAnswerKind, EscalationCandidate, EscalationKind, Resolution, ScoredCandidate,
)
from core.locate import resolve

from .control import Answer
from .events import HealProposed, ProposeHeal
from .explain import explain, role_of, use_once_confirm
from .hooks import (
    EscalationAnswered, EscalationOffer, FlowBegins, HealProposal, Offer, Ports, ResolveFirst, Resolved, hookimpl,
)
from .step import StepContext

__all__ = ["CHOSEN", "ChosenPlugin", "accepts", "escalation_offer", "resolve_chosen", "propose_heal"]

#: Strategy of a target a person chose (a use-once, or a heal proposed from an escalation).
CHOSEN = "chosen"

#: Escalation kinds whose candidates a person may use once: the locator could not pick the target itself.
_USABLE: tuple[str, ...] = ("abstained",)


def escalation_offer(ex: Ports, ctx: StepContext, reason: str, kind: EscalationKind,
                     answers: tuple[EscalationAnswerKind, ...], breaker: BreakerContext | None
                     ) -> tuple[tuple[EscalationCandidate, ...], tuple[EscalationAnswerKind, ...], str]:
    """The escalation's candidates (with role and confirm), its answers (plus ``use_candidate`` when
    a candidate may be used once) and its plain sentence (:func:`core.engine.explain.explain`)."""
    by_ref = {c.ref: c for c in (ctx.before.candidates if ctx.before else ())}
    target = ctx.decided.target if ctx.decided is not None else None  # placeholders unbound: no secret
    irreversible = ctx.step is not None and not ctx.step.reversible
    top = []
    for s in (ctx.resolution.top if ctx.resolution else ()):
        c = by_ref.get(s.ref)
        top.append(EscalationCandidate(s.ref, s.label, s.score, c.descriptor.bbox if c else None,
                                       role_of(c.descriptor) if c else "",
                                       use_once_confirm(target, c, irreversible=irreversible) if c else ""))
    if kind == "approval" and ctx.candidate is not None:  # the element the decider would act on, boxed
        c = ctx.candidate
        top = [EscalationCandidate(c.ref, c.descriptor.label_text[:80], 1.0, c.descriptor.bbox,
                                   role_of(c.descriptor), "")]
    if kind in _USABLE and any(c.ref in by_ref for c in top) and "use_candidate" not in answers:
        answers = (*answers, "use_candidate")
    plain = explain(kind, reason, target=target, resolution=ctx.resolution,
                    candidates=ctx.before.candidates if ctx.before else (), margin=ex.settings.locator.margin,
                    failures=breaker.failures if breaker is not None else 0)
    return tuple(top), answers, ex.redact(plain)


def accepts(escalation: Any, answer: Answer) -> bool:
    """False for a ``use_candidate`` answer the escalation cannot take: one meant for another step, an
    unknown ref or one whose label is not the one the person chose, or a choice that needs confirming
    (``EscalationCandidate.confirm``) and was not confirmed."""
    if answer.kind != "use_candidate":
        return True
    if answer.index >= 0 and answer.index != getattr(escalation, "index", answer.index):
        return False  # meant for another escalation
    cand = next((c for c in escalation.candidates if c.ref == answer.ref), None)
    if cand is None or (answer.label and cand.label != answer.label):
        return False  # the ref names another element than the one the person chose
    return answer.confirmed or not cand.confirm


def _same(a: Candidate, b: Candidate) -> bool:
    da, db = a.descriptor, b.descriptor
    return (da.label_text, role_of(da), da.id, da.css_path) == (db.label_text, role_of(db), db.id, db.css_path)


def resolve_chosen(ex: Ports, ctx: StepContext, chosen: Candidate) -> tuple[Resolution, Candidate | None]:
    """The element ``chosen`` by a person, on this attempt's page: found again by ref with the same
    descriptor, else by the exact level alone on its descriptor; not found, an abstention that says so."""
    label = chosen.descriptor.label_text or chosen.ref
    cands = ctx.before.candidates if ctx.before is not None else ()
    cand = next((c for c in cands if c.ref == chosen.ref and _same(c, chosen)), None)
    if cand is None:
        r = resolve(chosen.descriptor, cands, config=replace(ex.settings.locator, strategies=("exact",)))
        cand = next((c for c in cands if c.ref == r.ref), None) if not r.abstained and r.ref else None
    if cand is None:
        return Resolution("", None, 0.0, 0.0, 0.0, abstained=True,
                          reason=f"the element chosen for this step ({label!r}) is no longer on the page"), None
    return Resolution(CHOSEN, cand.ref, 1.0, 1.0, 0.0, reason=f"chosen by a person for this step, once: {label!r}",
                      top=(ScoredCandidate(cand.ref, 1.0, cand.descriptor.label_text),), considered=len(cands)), cand


def propose_heal(ex: Ports, ctx: StepContext, command: ProposeHeal) -> HealProposed:
    """Propose the escalation's candidate ``command.ref`` as the heal of this step; emits and returns the event."""
    from core.heal.chosen import propose_chosen

    run = ctx.run
    cand = next((c for c in (ctx.before.candidates if ctx.before else ()) if c.ref == command.ref), None)
    step = run.flow.steps[ctx.index] if 0 <= ctx.index < len(run.flow.steps) else None
    pid, note = 0, ""
    if cand is None or step is None or ctx.source != "flow":
        note = "nothing proposed: that element is not on the step's page" if cand is None else \
            "nothing proposed: this step is not the flow file's"
    elif ex.heals is None:
        note = "nothing proposed: the run has no store"
    else:
        try:
            pid, note = propose_chosen(ex.heals, run.flow, run.run_id, ctx.index, step, cand, ctx.resolution)
        except Exception as exc:  # noqa: BLE001 - a store failure never breaks a run; it is said
            note = f"nothing proposed: {type(exc).__name__}: {exc}"
    event = HealProposed(run.run_id, run.flow.name, ctx.index, command.ref, pid, ex.redact(note))
    ex.emit(event)
    return event


class ChosenPlugin:
    """A person's choice among an escalation's candidates, at the kernel's hooks (see the module doc).

    Parameters
    ----------
    ports : Ports
        Uses ``settings`` (locator), ``redact``, ``emit`` and ``heals``.
    """

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        #: The use-once choice for the next attempt: (run id, step index, element), or None.
        self.choice: tuple[str, int, Candidate] | None = None

    @hookimpl
    def flow_begins(self, p: FlowBegins) -> None:
        self.choice = None

    @hookimpl
    def escalation_offer(self, p: EscalationOffer) -> Offer:
        top, answers, plain = escalation_offer(self.ports, p.step, p.reason, p.kind, p.answers, p.breaker)
        return Offer(top, answers, plain)

    @hookimpl
    def escalation_answered(self, p: EscalationAnswered) -> bool | None:
        """A ``use_candidate`` answer: True when kept for the next attempt, False when it cannot be (an unknown
        ref, an unconfirmed choice that needs confirming - the kernel stops the flow then); None for others."""
        answer, ctx = p.answer, p.step
        if getattr(answer, "kind", "") != "use_candidate":
            return None
        if not accepts(p.escalation, answer):
            return False
        cand = next((c for c in (ctx.before.candidates if ctx.before else ()) if c.ref == answer.ref), None)
        if cand is None:
            return False
        self.choice = (ctx.run.run_id, ctx.index, cand)
        return True

    @hookimpl(tryfirst=True)
    def resolve_first(self, p: ResolveFirst) -> Resolved | None:
        """The kept choice is this attempt's target (used once: forgotten whatever happens); the step's
        source becomes ``human`` (no heal proposal from it, the flow file untouched)."""
        ctx, choice = p.step, self.choice
        if choice is None or ctx.before is None or choice[:2] != (ctx.run.run_id, ctx.index):
            return None
        self.choice = None
        res, cand = resolve_chosen(self.ports, ctx, choice[2])
        return Resolved(res, cand, "human")

    @hookimpl
    def heal_proposal(self, p: HealProposal) -> HealProposed:
        return propose_heal(self.ports, p.step, p.command)
