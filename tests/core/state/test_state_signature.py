"""light_signature (S2): equal for volatile-only changes, different for real state changes."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from core.state.signature import light_signature, state_hash


def page(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "url": "http://127.0.0.1:8000/orders#top",
        "title": "Orders",
        "items": [
            {"tag": "input", "role": "textbox", "text": "", "name": "Search", "value": "", "checked": None,
             "enabled": True},
            {"tag": "button", "role": "button", "text": "Export report", "name": "Export report", "value": "",
             "checked": None, "enabled": True},
            {"tag": "input", "role": "checkbox", "text": "", "name": "Only open", "value": "on", "checked": False,
             "enabled": True},
        ],
        "text": "Orders Last refreshed 10:42:07 Request 123e4567-e89b-12d3-a456-426614174000 Export report",
        "modals": [],
        "loading": False,
        "errors": 0,
        "focus": "",
    }
    raw.update(copy.deepcopy(changes))
    return raw


BASE = light_signature(page())


def test_fields_of_the_signature() -> None:
    assert BASE.url == "http://127.0.0.1:8000/orders"  # fragment dropped
    assert BASE.title == "Orders"
    assert BASE.interactive_count == 3
    assert BASE.modal_count == 0
    assert BASE.loading is False and BASE.error_count == 0
    assert all(len(d) == 40 for d in (BASE.text_digest, BASE.elements_digest, BASE.values_digest, BASE.digest))


def test_deterministic() -> None:
    assert light_signature(page()) == BASE


@pytest.mark.parametrize("changes", [
    {"text": "Orders Last refreshed 11:03:59 Request 00000000-1111-2222-3333-444444444444 Export report"},
    {"url": "http://127.0.0.1:8000/orders#bottom"},
    {"title": "Orders"},
    {"text": "Orders   Last refreshed 10:42:07\n Request 123e4567-e89b-12d3-a456-426614174000   Export report"},
    {"focus": "input#search[textbox]"},  # focus is noise (S5), not part of the digest
])
def test_equal_when_only_volatile_text_differs(changes: dict[str, Any]) -> None:
    assert light_signature(page(**changes)).digest == BASE.digest


def test_volatile_text_inside_element_labels_is_normalized() -> None:
    a = page()
    b = page()
    a["items"][1]["text"] = "Job 2024-05-01T10:00:00Z"
    b["items"][1]["text"] = "Job 2025-01-02T03:04:05Z"
    assert light_signature(a).digest == light_signature(b).digest


def test_modal_opening_changes_it() -> None:
    opened = page(modals=["Confirm export"],
                  items=page()["items"] + [{"tag": "button", "role": "button", "text": "OK", "name": "OK"}])
    sig = light_signature(opened)
    assert sig.modal_count == 1
    assert sig.digest != BASE.digest


def test_modal_alone_changes_it() -> None:
    assert light_signature(page(modals=["Confirm"])).digest != BASE.digest


def test_value_change_changes_values_digest_only() -> None:
    raw = page()
    raw["items"][0]["value"] = "widgets"
    sig = light_signature(raw)
    assert sig.values_digest != BASE.values_digest
    assert sig.elements_digest == BASE.elements_digest
    assert sig.text_digest == BASE.text_digest
    assert sig.digest != BASE.digest


@pytest.mark.parametrize("field, value", [("checked", True), ("enabled", False)])
def test_checked_and_enabled_states_count_as_values(field: str, value: Any) -> None:
    raw = page()
    raw["items"][2][field] = value
    assert light_signature(raw).values_digest != BASE.values_digest


def test_url_change_changes_it() -> None:
    sig = light_signature(page(url="http://127.0.0.1:8000/orders/7"))
    assert sig.url.endswith("/orders/7")
    assert sig.digest != BASE.digest


@pytest.mark.parametrize("changes", [
    {"text": "Orders No orders yet Export report"},
    {"title": "Order 7"},
    {"loading": True},
    {"errors": 1},
    {"items": page()["items"][:2]},
])
def test_real_changes_change_it(changes: dict[str, Any]) -> None:
    assert light_signature(page(**changes)).digest != BASE.digest


def test_element_label_change_changes_elements_digest() -> None:
    raw = page()
    raw["items"][1]["text"] = raw["items"][1]["name"] = "Export report (E)"
    sig = light_signature(raw)
    assert sig.elements_digest != BASE.elements_digest


def test_only_the_first_500_chars_of_text_count() -> None:
    long = "x" * 500
    assert light_signature(page(text=long + " one")).text_digest == light_signature(page(text=long + " two")).text_digest


def test_state_hash_without_screenshot_depends_on_elements_and_text() -> None:
    assert state_hash(BASE) == state_hash(light_signature(page(focus="button")))
    assert state_hash(BASE) != state_hash(light_signature(page(text="other")))
