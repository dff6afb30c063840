"""The recovery policy: what to do after a failed attempt - pure, no browser (R3, R4, S6, P6).

Given what failed, the step's reversibility, how many attempts were made and
the breaker's state, decide one of:

- ``retry``: try the step again after the retry delay (P6: 2 retries, 300 ms);
- ``roll_back``: undo the step's front-end effects through its compensation,
  then retry (R3; only when a compensation is available);
- ``escalate``: stop and ask a human, with context (R4);
- ``abort``: end the run now (the browser crashed; nothing can be retried).

Rules, first match wins:

1. a crash aborts;
2. an irreversible step that acted and then failed verification escalates
   and is never retried: it may have written data (S6, "aborted abnormally");
3. a failure that needs a human at once (the locator abstained, an assertion
   failed after the action had its effect, the breaker is open, the same
   action on the same state again (P8), rounds without change (K2)) escalates;
4. an open breaker escalates (R4);
5. with attempts left: roll back first when a checkpoint of the step exists
   (R3: compensations, close dialogs, restore URL and form values, verify,
   reload) and either the attempt acted and its verification failed
   (unchanged, changed unexpectedly, the action raised) or a popup covers
   the page (a pre-check failed under an unexpected dialog, failure kind
   14); else retry;
6. otherwise escalate: retries are spent.

An irreversible step's compensations never run on their own: the human
answer ``compensate`` (:func:`human_answers`) approves them (R3, S6).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.progress import counted
from core.domain import EscalationAnswerKind

__all__ = ["FailureKind", "Failure", "RecoveryKind", "Recovery", "decide_recovery", "human_answers"]

#: What went wrong in one attempt.
FailureKind = Literal["abstained", "breaker_open", "precondition", "action_error", "unchanged",
                      "changed_unexpectedly", "assertion", "no_decision", "budget", "crash", "loop", "stagnation",
                      "page"]
RecoveryKind = Literal["retry", "roll_back", "escalate", "abort"]

#: Failures after acting that a rollback to the checkpoint undoes (R3).
_ROLL_BACK_AFTER_ACTING = frozenset({"unchanged", "changed_unexpectedly", "action_error"})
#: Failures a retry cannot fix: a human is needed at once.
#: ``loop`` (P8) and ``stagnation`` (K2): repeating the attempt is what they forbid.
#: ``page``: the page broke the page library, stopped answering or kept loading past its bound
#: (:class:`core.perception.driver.PageError`); a retry would wait the same limit again.
_HUMAN_AT_ONCE = frozenset({"abstained", "breaker_open", "assertion", "no_decision", "budget", "loop", "stagnation",
                            "page"})


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed attempt.

    Attributes
    ----------
    kind : FailureKind
        What went wrong.
    reason : str
        One sentence, secrets masked.
    acted : bool
        The action was performed before the failure (so it may have had effects).
    """

    kind: FailureKind
    reason: str
    acted: bool = False


@dataclass(frozen=True, slots=True)
class Recovery:
    """What the loop does next, and why (shown in escalations and reports)."""

    kind: RecoveryKind
    reason: str


def decide_recovery(failure: Failure, *, reversible: bool, attempts: int, max_attempts: int,
                    breaker_state: str, can_roll_back: bool = False, popup: bool = False) -> Recovery:
    """Decide what follows a failed attempt (rules in the module docstring).

    Parameters
    ----------
    failure : Failure
        The failed attempt.
    reversible : bool
        The step's reversibility label (S6).
    attempts : int
        Attempts made so far, this one included (>= 1).
    max_attempts : int
        1 + retries for a reversible step (P6), 1 for an irreversible one.
    breaker_state : str
        ``closed`` / ``open`` / ``half_open`` after recording this failure (R4).
    can_roll_back : bool
        A checkpoint of the step exists to roll back to (R3).
    popup : bool
        A dialog or overlay that the step did not expect is open (failure kind 14).
    """
    if failure.kind == "crash":
        return Recovery("abort", f"the browser failed: {failure.reason}")
    if failure.acted and not reversible:
        return Recovery("escalate", f"aborted abnormally: irreversible step failed verification ({failure.reason})")
    if failure.kind == "abstained" and popup and can_roll_back and attempts == 1:
        # the target may be behind the popup: dismiss it (never by its confirming button) and look once more
        return Recovery("roll_back", f"dismiss the popup the step does not expect and look again: {failure.reason}")
    if failure.kind in _HUMAN_AT_ONCE:
        return Recovery("escalate", failure.reason)
    if breaker_state == "open":
        return Recovery("escalate", f"circuit breaker opened: {failure.reason}")
    if attempts < max_attempts:
        if can_roll_back and ((failure.acted and failure.kind in _ROLL_BACK_AFTER_ACTING)
                              or (popup and failure.kind in ("precondition", "action_error"))):
            return Recovery("roll_back", f"roll back to the checkpoint and retry: {failure.reason}")
        return Recovery("retry", failure.reason)
    return Recovery("escalate", f"failed after {counted(attempts, 'attempt')}: {failure.reason}")


def human_answers(failure: Failure, *, reversible: bool,
                  compensations: bool = False) -> tuple[EscalationAnswerKind, ...]:
    """The answers a human may give when ``failure`` escalates.

    A spent step budget can only stop (P6: the run has looped); an
    irreversible step that acted is never retried (S6), and when it declares
    compensations the human may approve running them (``compensate``, R3);
    otherwise retry, skip, stop and take over.
    """
    if failure.kind == "budget":
        return ("stop",)
    if failure.acted and not reversible:
        return ("compensate", "skip", "stop", "take_over") if compensations else ("skip", "stop", "take_over")
    return ("retry", "skip", "stop", "take_over")
