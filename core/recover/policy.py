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
   failed after the action had its effect, the breaker is open) escalates;
4. an open breaker escalates (R4);
5. with attempts left: roll back first when the attempt acted, changed the
   page unexpectedly and a compensation exists; else retry;
6. otherwise escalate: retries are spent.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.domain import EscalationAnswerKind

__all__ = ["FailureKind", "Failure", "RecoveryKind", "Recovery", "decide_recovery", "human_answers"]

#: What went wrong in one attempt.
FailureKind = Literal["abstained", "breaker_open", "precondition", "action_error", "unchanged",
                      "changed_unexpectedly", "assertion", "no_decision", "budget", "crash", "page"]
RecoveryKind = Literal["retry", "roll_back", "escalate", "abort"]

#: Failures a retry cannot fix: a human is needed at once.
#: ``page``: the page broke the page library, stopped answering or kept loading past its bound
#: (:class:`core.perception.driver.PageError`); a retry would wait the same limit again.
_HUMAN_AT_ONCE = frozenset({"abstained", "breaker_open", "assertion", "no_decision", "budget", "page"})


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
                    breaker_state: str, can_roll_back: bool = False) -> Recovery:
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
        A compensation for the step's effects exists (R3).
    """
    if failure.kind == "crash":
        return Recovery("abort", f"the browser failed: {failure.reason}")
    if failure.acted and not reversible:
        return Recovery("escalate", f"aborted abnormally: irreversible step failed verification ({failure.reason})")
    if failure.kind in _HUMAN_AT_ONCE:
        return Recovery("escalate", failure.reason)
    if breaker_state == "open":
        return Recovery("escalate", f"circuit breaker opened: {failure.reason}")
    if attempts < max_attempts:
        if failure.acted and failure.kind == "changed_unexpectedly" and can_roll_back:
            return Recovery("roll_back", f"undo and retry: {failure.reason}")
        return Recovery("retry", failure.reason)
    return Recovery("escalate", f"failed after {attempts} attempt(s): {failure.reason}")


def human_answers(failure: Failure, *, reversible: bool) -> tuple[EscalationAnswerKind, ...]:
    """The answers a human may give when ``failure`` escalates.

    A spent step budget can only stop (P6: the run has looped); an
    irreversible step that acted is never retried (S6); otherwise retry,
    skip, stop and take over.
    """
    if failure.kind == "budget":
        return ("stop",)
    if failure.acted and not reversible:
        return ("skip", "stop", "take_over")
    return ("retry", "skip", "stop", "take_over")
