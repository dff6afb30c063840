"""Escalations to a human and checkpoints before a step (R3, R4): plain records, no behaviour."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .element import BBox

__all__ = ["EscalationKind", "EscalationAnswerKind", "EscalationCandidate", "BreakerFailure", "BreakerContext",
           "Escalation", "Checkpoint", "FieldValue"]

#: Why the engine asks a human: the locator abstained; the breaker is open (R4); a pre-check failed
#: (S4) and retries were spent; the action or its verification failed and retries were spent; an
#: irreversible step failed verification (S6, never retried); an assertion did not hold after the
#: action had its effect; the run hit ``max_steps`` (P6); no decider of the chain chose an action;
#: the browser or page crashed; the same action on the same page state was about to be done again
#: (``loop``, P8); rounds in a row changed nothing real (``stagnation``, K2); the page broke the page
#: library, stopped answering or kept loading (``page``); a decider (the model) chose an action that may
#: write data and waits for a person's approval (``approval``: answering retry approves it).
EscalationKind = Literal["abstained", "breaker_open", "precondition", "failed", "irreversible", "assertion",
                         "budget", "no_decision", "crashed", "loop", "stagnation", "page", "approval"]

#: What a human may answer: try the step again (the breaker half-opens, R4), skip it, stop the run,
#: take over the page and later hand back with "continue from step N", or - offered only for an
#: irreversible step that acted and failed verification and declares compensations - approve running
#: its compensations (R3: they never run on such a step without a person's approval).
EscalationAnswerKind = Literal["retry", "skip", "stop", "take_over", "compensate", "use_candidate"]


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
    role : str
        Its effective role ("" when unknown).
    confirm : str
        Why using it once needs an explicit confirmation (an irreversible step, a
        role crossing); "" when a plain choice is enough.
    """

    ref: str
    label: str
    score: float
    box: BBox | None = None
    role: str = ""
    confirm: str = ""


@dataclass(frozen=True, slots=True)
class BreakerFailure:
    """One failed attempt the circuit breaker counted (R4).

    Attributes
    ----------
    index : int
        0-based step index (-1 when not known).
    step_title : str
        The step's title (placeholders unbound: no secret in it).
    attempt : int
        1-based attempt of that step.
    reason : str
        Why it failed, one sentence, secrets masked.
    risk : str
        ``read_only`` / ``reversible`` / ``write``: the step's risk class.
    """

    index: int
    step_title: str
    attempt: int
    reason: str
    risk: str = "reversible"


@dataclass(frozen=True, slots=True)
class BreakerContext:
    """The circuit breaker's state as a human needs it when it opens (R4).

    Attributes
    ----------
    state : str
        ``closed`` / ``open`` / ``half_open``.
    failures : int
        Consecutive failures counted (never above ``threshold`` while open).
    threshold : int
        The limit that applied (by the risk of the step that failed last).
    failures_seen : tuple[BreakerFailure, ...]
        The consecutive failures that opened it (and failed probes), oldest first.
    seconds_to_half_open : float | None
        Seconds until it half-opens by itself (R4: 300 s after opening);
        None when it is not open.
    failed_probes : int
        Half-open probes that failed in a row.
    """

    state: str
    failures: int
    threshold: int
    failures_seen: tuple[BreakerFailure, ...] = ()
    seconds_to_half_open: float | None = None
    failed_probes: int = 0


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
    breaker : BreakerContext | None
        The circuit breaker's state when it is open (R4): the failures that
        opened it and the time until half-open; None otherwise.  ``reason``
        says the same in words.
    plain : str
        The same in plain words, said first (:func:`core.engine.explain.explain`):
        "'Department' was not found; the closest is 'Employee' (0.67)..."; ``reason``
        is the detail.  "" when not computed.
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
    breaker: BreakerContext | None = None
    plain: str = ""


@dataclass(frozen=True, slots=True)
class FieldValue:
    """One form control's value in a checkpoint (R3), never a secret in clear (architecture rule 7).

    Attributes
    ----------
    key : str
        Where the control is in its document (``#id``, ``[name=...]`` or a
        CSS path), as the restoring script finds it again.
    label : str
        Its label or name, for messages.
    value : str
        The value ("" for a secret: see ``digest``).
    checked : bool | None
        Checked state of a checkbox or radio; None for other controls.
    digest : str
        HMAC-SHA-256 hex of the value under a random key of the process
        (:func:`core.recover.rollback.digest`) when it is secret (a password
        field, or a value equal to a declared secret); restored only from a
        bound parameter with the same digest.
    """

    key: str
    label: str = ""
    value: str = ""
    checked: bool | None = None
    digest: str = ""

    @property
    def secret(self) -> bool:
        """True when the value is kept by digest only."""
        return bool(self.digest)


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
    screenshot : str
        Media path (relative to the store's media root) of the screenshot
        of the page before the action; "" when none was stored.
    modal_titles : tuple[str, ...]
        Titles of the dialogs open before the action, outermost first: a
        rollback closes any dialog beyond these.
    fields : tuple[FieldValue, ...]
        Form values of the main document before the action (secrets by digest).
    step_state : str
        R3's step state: ``pending`` / ``running`` / ``success`` /
        ``failed`` / ``rolled_back``.
    """

    run_id: str
    flow: str
    index: int
    step_id: str
    url: str
    state: str
    reversible: bool
    side_effects: tuple[str, ...] = ()
    screenshot: str = ""
    modal_titles: tuple[str, ...] = ()
    fields: tuple[FieldValue, ...] = ()
    step_state: str = "pending"
