"""The model's guard judges what is known of an action's effect, never the words of the page or of the goal."""
from __future__ import annotations

import pytest

from core.domain import Candidate, ElementDescriptor
from core.plan.guard import EffectBook, control_of, is_allowed, may_write, needs_approval


def _c(**d) -> Candidate:  # noqa: ANN003
    editable = d.pop("editable", False)
    return Candidate(ref="0:1", descriptor=ElementDescriptor(**d), editable=editable)


@pytest.mark.parametrize("name", ["Trash", "Yes, do it", "Supprimer", "Deletion", "Löschen", "Show archived", "OK",
                                  "\U0001f5d1", "Next"])
def test_a_button_never_used_waits_for_a_person_whatever_it_is_called(name: str) -> None:
    assert "effect is unknown" in needs_approval(_c(tag="button", role="button", name=name), "click")


def test_a_link_to_an_address_a_tab_and_form_edits_have_a_known_effect() -> None:
    assert needs_approval(_c(tag="a", role="link", name="Help", href="/help"), "click") == ""
    assert needs_approval(_c(tag="button", role="tab", name="Details"), "click") == ""
    assert needs_approval(_c(tag="input", role="textbox", name="Reason", editable=True), "input") == ""
    assert needs_approval(_c(tag="select", role="combobox", name="Kind"), "select") == ""
    # a link with no address runs a script, and one whose words say it writes is held too (words only add caution)
    assert needs_approval(_c(tag="a", role="link", name="Corbeille", href="#"), "click")
    assert needs_approval(_c(tag="a", role="link", name="Delete report", href="/r/3/delete"), "click")
    assert needs_approval(_c(tag="a", role="link", name="Run", href="javascript:go()"), "click")
    assert "submit its form" in needs_approval(_c(tag="input", role="textbox", name="Reason", editable=True), "press")


def test_only_the_exact_control_the_step_allows_goes_on_and_what_wrote_is_never_repeated() -> None:
    save = _c(tag="button", role="button", name="  Save ")
    allow = (("button", "save"),)
    assert control_of(save) == ("button", "save") and is_allowed(save, allow)
    assert not is_allowed(_c(tag="button", role="button", name="Save all"), allow)
    assert not is_allowed(_c(tag="a", role="link", name="Save"), allow)
    assert needs_approval(save, "click", allowed=True) == ""
    assert "wrote data" in needs_approval(save, "click", known="wrote", allowed=True, allow_all=True)
    assert "opened a dialog" in needs_approval(save, "click", known="dialog")
    assert "dialog is open" in needs_approval(_c(tag="button", role="button", name="Yes, do it"), "click",
                                              dialog_open=True)
    assert needs_approval(save, "click", known="none") == ""


def test_the_effect_book_keeps_writes_everywhere_and_harmless_uses_on_their_page_only() -> None:
    book = EffectBook()
    book.learn("r1", ("button", "show"), "none", "http://a/inbox?x=1")
    assert book.known("r1", ("button", "show"), "http://a/inbox") == "none"
    assert book.known("r1", ("button", "show"), "http://a/other") is None
    assert book.known("r2", ("button", "show"), "http://a/inbox") is None
    book.learn("r1", ("button", "show"), "wrote", "http://a/inbox")
    assert book.known("r1", ("button", "show"), "http://a/other") == "wrote"


def test_may_write_is_a_hint_read_from_every_text() -> None:
    assert may_write(_c(tag="button", role="button", name="\u00d7\U0001f5d1"), "click")
    assert may_write(_c(tag="button", role="button", name="\U0001f5d1", title="Delete report"), "click")
    assert not may_write(_c(tag="input", role="textbox", name="Reason", editable=True), "input")
