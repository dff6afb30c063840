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
    assert exhausted == ("escalate", "failed after 3 attempts: why")


@pytest.mark.parametrize("kind", ["changed_unexpectedly", "unchanged", "action_error"])
def test_a_reversible_step_that_acted_rolls_back_to_its_checkpoint_before_a_retry(kind: str) -> None:
    assert decide(kind, acted=True, can_roll_back=True)[0] == "roll_back"
    assert decide(kind, acted=True, can_roll_back=False)[0] == "retry"
    assert decide(kind, acted=True, can_roll_back=True, attempts=3)[0] == "escalate"


def test_a_failure_before_acting_rolls_back_only_under_a_popup() -> None:
    def d(kind: str, popup: bool) -> str:
        return decide_recovery(Failure(kind, "covered"), reversible=True, attempts=1, max_attempts=3,  # type: ignore[arg-type]
                               breaker_state="closed", can_roll_back=True, popup=popup).kind
    assert d("precondition", True) == "roll_back"
    assert d("precondition", False) == "retry"
    assert d("abstained", True) == "roll_back"  # once: dismiss the unexpected popup, look again
    assert d("abstained", False) == "escalate"


def test_an_irreversible_step_is_never_rolled_back_nor_retried() -> None:
    r = decide_recovery(Failure("changed_unexpectedly", "x", acted=True), reversible=False, attempts=1,
                        max_attempts=3, breaker_state="closed", can_roll_back=True, popup=True)
    assert r.kind == "escalate" and "aborted abnormally" in r.reason


def test_compensation_is_offered_only_to_a_person_for_an_irreversible_step_that_acted() -> None:
    acted = Failure("changed_unexpectedly", "x", acted=True)
    assert human_answers(acted, reversible=False, compensations=True) == ("compensate", "skip", "stop", "take_over")
    assert "compensate" not in human_answers(acted, reversible=False, compensations=False)
    assert "compensate" not in human_answers(acted, reversible=True, compensations=True)
    assert "compensate" not in human_answers(Failure("unchanged", "x"), reversible=False, compensations=True)


def test_what_a_human_may_answer() -> None:
    assert human_answers(Failure("budget", "looped"), reversible=True) == ("stop",)
    assert human_answers(Failure("unchanged", "x", acted=True), reversible=False) == ("skip", "stop", "take_over")
    assert human_answers(Failure("unchanged", "x", acted=False), reversible=False) == ("retry", "skip", "stop",
                                                                                      "take_over")
    assert human_answers(Failure("abstained", "tie"), reversible=True) == ("retry", "skip", "stop", "take_over")


def test_an_abstention_behind_an_unexpected_popup_dismisses_it_once_then_asks() -> None:
    f = Failure("abstained", "locator abstained: best candidate is covered")
    first = decide_recovery(f, reversible=True, attempts=1, max_attempts=3, breaker_state="closed",
                            can_roll_back=True, popup=True)
    assert first.kind == "roll_back"
    assert decide_recovery(f, reversible=True, attempts=2, max_attempts=3, breaker_state="closed",
                           can_roll_back=True, popup=True).kind == "escalate"
    assert decide_recovery(f, reversible=True, attempts=1, max_attempts=3, breaker_state="closed",
                           can_roll_back=False, popup=False).kind == "escalate"
