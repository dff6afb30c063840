"""A popup is dismissed by its close or cancel control, else Escape - never by its confirming button (kind 14)."""
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


def test_close_is_preferred_to_cancel_and_cancel_to_no_thanks_and_reject() -> None:
    assert choose_dismiss(ov({"name": "Reject all"}, {"name": "No thanks"}, {"name": "Cancel"})).name == "Cancel"
    assert choose_dismiss(ov({"name": "Reject all"}, {"name": "Not now"})).name == "Not now"
    assert choose_dismiss(ov({"name": "Accept all"}, {"name": "Reject all"})).name == "Reject all"
    assert choose_dismiss(ov({"name": "Cancel"}, {"name": "\u00d7"})).name == "\u00d7"


@pytest.mark.parametrize("name", ["OK", "Accept", "Accept all", "Yes, delete", "Confirm", "Save", "Continue",
                                  "Cancel order", "Close account", "Allow cookies", "Submit"])
def test_a_confirming_button_is_never_chosen(name: str) -> None:
    c = choose_dismiss(ov({"name": name}))
    assert c.escape and c.name == "Escape"


def test_a_disabled_close_is_never_chosen_and_an_icon_only_close_is() -> None:
    assert choose_dismiss(ov({"name": "Close", "enabled": False})).escape
    assert choose_dismiss(ov({"name": "", "cls": "modal-close"})).key == "0.0"
    assert choose_dismiss(ov({"name": "", "cls": "btn btn-primary"})).escape
