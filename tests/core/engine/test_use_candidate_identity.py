"""A use-once answer is taken only by the escalation it was meant for, and only for the element the person saw."""
from __future__ import annotations

from core.domain import Escalation, EscalationCandidate
from core.engine.chosen import accepts
from core.engine.control import Answer

ESC = Escalation("r1", "f", 3, "Click Save", "locator abstained",
                 candidates=(EscalationCandidate("0:4", "Save", 0.7), EscalationCandidate("0:5", "Delete", 0.6,
                                                                                          confirm="irreversible")),
                 kind="abstained", answers=("retry", "skip", "stop", "take_over", "use_candidate"))


def test_the_right_escalation_and_element_are_accepted() -> None:
    assert accepts(ESC, Answer("use_candidate", ref="0:4", index=3, label="Save"))
    assert accepts(ESC, Answer("use_candidate", ref="0:4"))  # identity not said: the ref alone (CLI, scripts)


def test_an_answer_meant_for_another_step_or_element_is_not_taken() -> None:
    assert not accepts(ESC, Answer("use_candidate", ref="0:4", index=2, label="Save"))  # another escalation
    assert not accepts(ESC, Answer("use_candidate", ref="0:4", index=3, label="Delete"))  # the ref moved
    assert not accepts(ESC, Answer("use_candidate", ref="0:9", index=3))  # not a candidate
    assert not accepts(ESC, Answer("use_candidate", ref="0:5", index=3, label="Delete"))  # needs confirming
    assert accepts(ESC, Answer("use_candidate", ref="0:5", index=3, label="Delete", confirmed=True))
