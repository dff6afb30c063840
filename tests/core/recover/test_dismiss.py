"""A popup is dismissed by a control whose meaning is close, else Escape - never by one of its options (kind 14)."""
from __future__ import annotations

import pytest

from core.recover.dismiss import choose_dismiss


def ov(*controls: dict) -> dict:
    return {"key": "0", "name": "Popup", "controls": [{"key": f"0.{i}", "enabled": True, **c}
                                                      for i, c in enumerate(controls)]}


def test_bootstrap_modal_closes_by_its_close_button_not_save() -> None:
    c = choose_dismiss(ov({"name": "Save changes"}, {"name": "Close", "cls": "btn btn-secondary", "dismiss": True},
                          {"name": "Close", "cls": "btn-close", "dismiss": True}))
    assert c.key == "0.1" and not c.escape


def test_close_is_preferred_to_not_now_and_a_choice_is_never_pressed() -> None:
    assert choose_dismiss(ov({"name": "Reject all"}, {"name": "Not now"})).name == "Not now"
    assert choose_dismiss(ov({"name": "Not now"}, {"name": "\u00d7"})).name == "\u00d7"
    assert choose_dismiss(ov({"name": "Cancel"}, {"name": "\u00d7"})).name == "\u00d7"


@pytest.mark.parametrize("names", [("Accept all", "Reject all"), ("Keep", "Delete"), ("OK", "Cancel"),
                                   ("Reject all", "No thanks", "Cancel"), ("Accept", "Decline"),
                                   ("Tout accepter", "Tout refuser"), ("Alle akzeptieren", "Ablehnen"),
                                   ("Aceptar todo", "Rechazar todo"), ("Start free trial", "That's ok")])
def test_a_popup_that_offers_a_choice_gets_escape_and_is_said_to_ask(names: tuple[str, ...]) -> None:
    c = choose_dismiss(ov(*({"name": n} for n in names)))
    assert c.escape and c.asks and set(c.choices) == set(names)


@pytest.mark.parametrize("name", ["Close", "close dialog", "Dismiss", "Not now", "\u00d7", "\u2715", "Fermer",
                                  "Fermer la fen\u00eatre", "Pas maintenant", "Schlie\u00dfen", "Dialog schlie\u00dfen",
                                  "Nicht jetzt", "Cerrar", "Ahora no", "Close the tour", "Close cookie notice"])
def test_close_words_in_four_languages_close(name: str) -> None:
    c = choose_dismiss(ov({"name": "Accept all"}, {"name": name}, {"name": "Reject all"}))
    assert c.key == "0.1" and not c.asks


def test_a_cancel_the_markup_declares_closing_is_the_pages_own_close() -> None:
    c = choose_dismiss(ov({"name": "Delete all data"}, {"name": "Cancel", "dismiss": True}))
    assert c.key == "0.1"
    assert choose_dismiss(ov({"name": "Delete all data"}, {"name": "Cancel"})).escape


@pytest.mark.parametrize("name", ["OK", "Accept", "Accept all", "Yes, delete", "Confirm", "Save", "Continue",
                                  "Cancel order", "Close account", "Allow cookies", "Submit",
                                  "Reject all", "Decline", "No thanks", "Cancel", "Close and accept"])
def test_a_confirming_button_is_never_chosen(name: str) -> None:
    c = choose_dismiss(ov({"name": name}))
    assert c.escape and c.name == "Escape"


def test_a_disabled_close_is_never_chosen_and_an_icon_only_close_is() -> None:
    assert choose_dismiss(ov({"name": "Close", "enabled": False})).escape
    assert choose_dismiss(ov({"name": "", "cls": "modal-close"})).key == "0.0"
    assert choose_dismiss(ov({"name": "", "cls": "btn btn-primary"})).escape
