"""The plain sentence of an escalation (core.engine.explain), from resolutions the real locator chain made."""
from __future__ import annotations

from core.domain import BBox, Candidate, ElementDescriptor, EscalationCandidate, Resolution, ScoredCandidate
from core.engine.control import Answer
from core.engine.chosen import accepts
from core.engine.events import EscalationRaised
from core.engine.explain import escalation_lines, explain, use_once_confirm
from core.locate import resolve

TARGET = ElementDescriptor(tag="button", role="button", name="Department")


def _c(ref: str, name: str, *, role: str = "button", tag: str = "button", y: float = 0, **kw) -> Candidate:
    return Candidate(ref=ref, descriptor=ElementDescriptor(tag=tag, role=role, name=name, bbox=BBox(10, y, 100, 30)),
                     **kw)


def _say(cands: list[Candidate], kind: str = "abstained", target: ElementDescriptor = TARGET) -> str:
    r = resolve(target, cands)
    return explain(kind, f"locator abstained: {r.reason}", target=target, resolution=r, candidates=cands)


def test_no_candidate_at_all() -> None:
    text = _say([])
    assert text == "'Department' was not found: nothing on the page resembles it."


def test_nothing_close_names_no_near_miss_as_the_closest() -> None:
    text = _say([_c("0:1", "Logout")])
    assert text.startswith("'Department' was not found: nothing on the page resembles it")
    assert "far from it" in text and "'Logout'" in text


def test_a_close_one_below_the_threshold_is_named_with_its_score() -> None:
    cands = [_c("0:1", "Employee"), _c("0:2", "Logout", y=50)]
    r = resolve(TARGET, cands)
    assert r.abstained and r.top[0].label == "Employee"
    text = explain("abstained", r.reason, target=TARGET, resolution=r, candidates=cands)
    assert text == f"'Department' was not found; the closest is 'Employee' ({r.top[0].score:.2f}), not close enough to act on it."


def test_two_look_alikes_within_the_margin_are_a_question() -> None:
    text = _say([_c("0:1", "Departments"), _c("0:2", "Departmentz", y=50)])
    assert text.startswith("'Department' matches more than one element about equally: 'Departments' (0.")
    assert text.endswith("which one is meant?")


def test_hidden_best() -> None:
    text = _say([_c("0:1", "Department", visible=False), _c("0:2", "Logout", y=50)])
    assert text == "'Department' is on the page but hidden: it cannot be used now ('Department', 1.00)."


def test_covered_best_far_below_is_said_not_close_enough() -> None:
    cands = [_c("0:1", "Employee", covered=True)]
    res = Resolution("", None, 0.0, 0.0, 0.0, abstained=True, reason="r", top=(ScoredCandidate("0:1", 0.55, "Employee"),))
    text = explain("abstained", "r", target=TARGET, resolution=res, candidates=cands)
    assert "the closest, 'Employee' (0.55), is covered by another element" in text


def test_role_crossing_says_another_kind_of_control_and_needs_a_confirmation() -> None:
    link = _c("0:1", "Department", role="link", tag="a")
    text = _say([link, _c("0:2", "Logout", y=50)])
    assert text.startswith("'Department' (button) was not found; the closest is a link 'Department' (0.")
    assert "not used without your confirmation" in text
    assert use_once_confirm(TARGET, link, irreversible=False) == "it is a link, the step recorded a button"
    assert use_once_confirm(TARGET, _c("0:3", "Department"), irreversible=False) == ""
    assert "irreversible" in use_once_confirm(TARGET, _c("0:3", "Department"), irreversible=True)


def test_other_kinds_are_said_plainly() -> None:
    assert explain("precondition", "precondition not met: target is disabled", target=TARGET) == \
        "'Department' was found but is disabled."
    assert explain("breaker_open", "x", failures=3).startswith("The run stopped itself after 3 failures in a row")
    assert explain("assertion", "assertion failed: text 'Saved': not found", target=TARGET) == \
        "A check after the step did not hold: text 'Saved': not found."
    assert explain("no_decision", "chain empty") == "No decider could choose the next action."
    assert explain("abstained", "r", target=ElementDescriptor()) == \
        "The step's target was not found: nothing on the page resembles it."


def test_the_command_line_prints_the_plain_sentence_then_the_detail() -> None:
    e = EscalationRaised("r", "f", 3, "Export", "locator abstained: exact: ...",
                         (EscalationCandidate("0:3", "Export report", 0.52, None, "button"),), (), "abstained",
                         ("retry", "stop"), None, "'Department' was not found; the closest is 'Export report' (0.52)...")
    assert escalation_lines(e) == [
        "  f step 4: needs a human: 'Department' was not found; the closest is 'Export report' (0.52)...",
        "    detail: locator abstained: exact: ...",
        "    candidate 1: 'Export report' (0.52) button"]
    assert escalation_lines(object()) == []


def test_an_unconfirmed_use_is_not_an_answer_when_the_candidate_needs_a_confirmation() -> None:
    e = EscalationRaised("r", "f", 3, "Submit", "x", (EscalationCandidate("0:1", "Submit", 0.7, None, "button",
                                                                          "the step is irreversible"),
                                                      EscalationCandidate("0:2", "Send", 0.6)), (), "abstained",
                         ("stop", "use_candidate"))
    assert not accepts(e, Answer("use_candidate", ref="0:1"))
    assert accepts(e, Answer("use_candidate", ref="0:1", confirmed=True))
    assert accepts(e, Answer("use_candidate", ref="0:2"))
    assert not accepts(e, Answer("use_candidate", ref="9:9", confirmed=True))  # not one of its candidates
    assert accepts(e, Answer("stop"))


def test_look_alikes_with_the_same_words_are_told_apart_by_kind_and_place() -> None:
    cands = [Candidate("0:1", ElementDescriptor(tag="a", role="link", name="Unlock account", bbox=BBox(0, 0, 90, 20)),
                       grid_cell="G6"),
             Candidate("0:2", ElementDescriptor(tag="button", role="button", name="Unlock account",
                                                bbox=BBox(0, 500, 90, 30)), grid_cell="J10")]
    target = ElementDescriptor(name="Unlock account")
    r = resolve(target, cands)
    assert r.abstained
    text = explain("abstained", r.reason, target=target, resolution=r, candidates=cands)
    assert text.startswith("'Unlock account' matches more than one element about equally: 'Unlock account' (")
    assert "link in G6" in text and "button in J10" in text


def test_a_weak_best_of_another_kind_names_the_closest_of_the_recorded_kind_too() -> None:
    cands = [_c("0:1", "Last reward:", role="", tag="label"), _c("0:2", "Click Me!", y=50)]
    target = ElementDescriptor(tag="button", role="button", name="Submit the order")
    res = Resolution("", None, 0.0, 0.0, 0.0, abstained=True, reason="r",
                     top=(ScoredCandidate("0:1", 0.36, "Last reward:"), ScoredCandidate("0:2", 0.31, "Click Me!")))
    text = explain("abstained", "r", target=target, resolution=res, candidates=cands)
    assert text == ("'Submit the order' was not found; the closest is a label 'Last reward:' (0.36), not close "
                    "enough to act on it; the closest button is 'Click Me!' (0.31).")


def test_an_irreversible_step_held_back_by_the_second_level_rule_says_so() -> None:
    target = ElementDescriptor(tag="button", role="button", name="Submit", text="Submit")
    cands = [_c("0:1", "Submit request"), _c("0:2", "Cancel", y=50)]
    # the chain's words when one level found it and no second independent one agreed (core/locate/chain.py)
    r = Resolution("", None, 0.0, 0.0, 0.0, abstained=True, top=(ScoredCandidate("0:1", 0.85, "Submit request"),),
                   reason="fuzzy_text: best 0.85, but the step is irreversible and no second independent level agrees")
    text = explain("abstained", r.reason, target=target, resolution=r, candidates=cands)
    assert text.startswith("'Submit' probably is 'Submit request' (0.85)")
    assert "the step is irreversible" in text and "not close enough" not in text


def test_an_action_waiting_for_approval_says_what_was_chosen_not_that_nothing_was() -> None:
    reason = ("goal 'Delete the account': the model chose click 'Delete account', which may write data "
              "(irreversible): a person approves it (answer retry to approve, or set allow_irreversible: true)")
    text = explain("approval", reason)
    assert text.startswith("The model chose click 'Delete account', which may write data: approve it")
    assert "No decider" not in text


def test_a_write_that_failed_verification_is_told_once_in_plain_words() -> None:
    from core.engine.explain import explain

    text = explain("irreversible", "aborted abnormally: irreversible step failed verification (the step reached "
                                   "/customers/insert/ instead of /customers/content/)")
    assert text == ("This step may have written data and its result was not the one expected (the step reached "
                    "/customers/insert/ instead of /customers/content/); it is never done twice."), text
    assert "aborted abnormally" not in text
