"""What the engine refuses or holds for approval from a model, read from every text an element carries."""
from __future__ import annotations

from core.domain import Candidate, ElementDescriptor
from core.plan.guard import contradicts_goal, may_write


def _c(**d) -> Candidate:  # noqa: ANN003
    editable = d.pop("editable", False)
    return Candidate(ref="0:1", descriptor=ElementDescriptor(**d), editable=editable)


def test_an_icon_button_whose_title_deletes_is_refused_and_one_that_says_nothing_may_write() -> None:
    trash = _c(tag="button", role="button", name="\U0001f5d1", title="Delete report")
    assert contradicts_goal(trash, "Open the quarterly report")
    assert may_write(_c(tag="button", role="button", name="\u00d7\U0001f5d1"), "click")


def test_a_destructive_phrase_whose_verb_is_harmless_alone() -> None:
    close = _c(tag="button", role="button", name="Close account")
    assert contradicts_goal(close, "Open the help") and may_write(close, "click")
    assert not contradicts_goal(_c(tag="button", role="button", name="Close"), "Open the help")
    assert not contradicts_goal(close, "Close account of the test user")


def test_a_key_in_a_field_may_submit_its_form_and_plain_controls_do_not_write() -> None:
    assert may_write(_c(tag="input", role="textbox", name="Reason", editable=True), "press")
    assert not may_write(_c(tag="a", role="link", name="Help"), "click")
    assert not may_write(_c(tag="input", role="textbox", name="Reason", editable=True), "input")
