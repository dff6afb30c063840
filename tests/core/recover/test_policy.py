"""The recovery policy is a pure function: every rule, without a browser (R3, R4, S6, P6)."""
from __future__ import annotations

import pytest

from core.recover.policy import Failure, decide_recovery, human_answers


def decide(kind: str, *, acted: bool = False, reversible: bool = True, attempts: int = 1, max_attempts: int = 3,
           breaker: str = "closed", can_roll_back: bool = False) -> tuple[str, str]:
    r = decide_recovery(Failure(kind, "why", acted=acted), reversible=reversible, attempts=attempts,  # type: ignore[arg-type]
                        max_attempts=max_attempts, breaker_state=breaker, can_roll_back=can_roll_back)
    return r.kind, r.reason


def test_a_crash_aborts_whatever_else_holds() -> None:
    assert decide("crash", attempts=1, max_attempts=3)[0] == "abort"
    assert decide("crash", acted=True, reversible=False)[0] == "abort"


def test_an_irreversible_step_that_acted_escalates_and_is_never_retried() -> None:
    kind, reason = decide("unchanged", acted=True, reversible=False, attempts=1, max_attempts=3)
    assert kind == "escalate" and reason.startswith("aborted abnormally: irreversible step failed verification")


def test_an_irreversible_step_that_did_not_act_may_be_retried() -> None:
    assert decide("action_error", acted=False, reversible=False, attempts=1, max_attempts=3)[0] == "retry"


@pytest.mark.parametrize("kind", ["abstained", "breaker_open", "assertion", "no_decision", "budget"])
def test_failures_a_retry_cannot_fix_escalate_at_once(kind: str) -> None:
    assert decide(kind, attempts=1, max_attempts=3) == ("escalate", "why")


def test_an_open_breaker_escalates_even_with_attempts_left() -> None:
    kind, reason = decide("unchanged", attempts=1, max_attempts=10, breaker="open")
    assert kind == "escalate" and "circuit breaker opened" in reason


@pytest.mark.parametrize("kind", ["precondition", "action_error", "unchanged", "changed_unexpectedly"])
def test_reversible_failures_are_retried_while_attempts_last(kind: str) -> None:
    assert decide(kind, attempts=2, max_attempts=3)[0] == "retry"
    exhausted = decide(kind, attempts=3, max_attempts=3)
    assert exhausted == ("escalate", "failed after 3 attempt(s): why")


def test_roll_back_only_with_a_compensation_after_an_unexpected_change() -> None:
    assert decide("changed_unexpectedly", acted=True, can_roll_back=True)[0] == "roll_back"
    assert decide("changed_unexpectedly", acted=True, can_roll_back=False)[0] == "retry"
    assert decide("unchanged", acted=True, can_roll_back=True)[0] == "retry"
    assert decide("changed_unexpectedly", acted=True, can_roll_back=True, attempts=3)[0] == "escalate"


def test_what_a_human_may_answer() -> None:
    assert human_answers(Failure("budget", "looped"), reversible=True) == ("stop",)
    assert human_answers(Failure("unchanged", "x", acted=True), reversible=False) == ("skip", "stop", "take_over")
    assert human_answers(Failure("unchanged", "x", acted=False), reversible=False) == ("retry", "skip", "stop",
                                                                                      "take_over")
    assert human_answers(Failure("abstained", "tie"), reversible=True) == ("retry", "skip", "stop", "take_over")
