"""Escalations to a human and checkpoints before a step (R3, R4): plain records, no behaviour."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .element import BBox

__all__ = ["EscalationKind", "EscalationAnswerKind", "EscalationCandidate", "Escalation", "Checkpoint"]

#: Why the engine asks a human: the locator abstained; the breaker is open (R4); a pre-check failed
#: (S4) and retries were spent; the action or its verification failed and retries were spent; an
#: irreversible step failed verification (S6, never retried); an assertion did not hold after the
#: action had its effect; the run hit ``max_steps`` (P6); no decider of the chain chose an action;
#: the browser or page crashed; the page broke the page library, stopped answering or kept loading (``page``).
EscalationKind = Literal["abstained", "breaker_open", "precondition", "failed", "irreversible", "assertion",
                         "budget", "no_decision", "crashed", "page"]

#: What a human may answer: try the step again (the breaker half-opens, R4), skip it, stop the run,
#: or take over the page and later hand back with "continue from step N".
EscalationAnswerKind = Literal["retry", "skip", "stop", "take_over"]


@dataclass(frozen=True, slots=True)
class EscalationCandidate:
    """One element the locator considered, as offered to the human.

    Attributes
    ----------
    ref : str
        Candidate ref in the observation the step was resolved on.
    label : str
        Its accessible name or best label ("" when it has none).
    score : float
        The locator's score, 0..1.
    box : BBox | None
        Bounding box in CSS px of that observation's viewport, when known.
    """

    ref: str
    label: str
    score: float
    box: BBox | None = None


@dataclass(frozen=True, slots=True)
class Escalation:
    """The engine needs a human, with context (R4): which step, why, what was already done.

    Attributes
    ----------
    run_id, flow : str
        The run and flow.
    index : int
        0-based index of the step in the flow.
    step_title : str
        The step's title.
    reason : str
        One sentence, secrets masked.
    candidates : tuple[EscalationCandidate, ...]
        The locator's top candidates, best first (empty when it did not run).
    side_effects : tuple[str, ...]
        Irreversible steps already done in this run ("step 3 'Submit' wrote data").
    kind : EscalationKind
        Why, as a kind.
    answers : tuple[EscalationAnswerKind, ...]
        The answers the engine accepts here (no "retry" after an irreversible
        step acted, S6).
    """

    run_id: str
    flow: str
    index: int
    step_title: str
    reason: str
    candidates: tuple[EscalationCandidate, ...] = ()
    side_effects: tuple[str, ...] = ()
    kind: EscalationKind = "failed"
    answers: tuple[EscalationAnswerKind, ...] = ("retry", "skip", "stop", "take_over")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The state before a step is acted on (R3): where a rollback returns to.

    Attributes
    ----------
    run_id, flow : str
        The run and flow.
    index : int
        0-based step index.
    step_id : str
        The step's id.
    url : str
        Page URL before the action.
    state : str
        Light-signature digest of the page before the action (S2).
    reversible : bool
        The step's reversibility label (S6).
    side_effects : tuple[str, ...]
        Irreversible steps already done in the run before this one.
    """

    run_id: str
    flow: str
    index: int
    step_id: str
    url: str
    state: str
    reversible: bool
    side_effects: tuple[str, ...] = ()
