"""Never repeat an effect (issue 19): the pure comparison of kept state and the retry decision."""
from __future__ import annotations

import pytest

from core.perception.effects import EffectSnapshot
from core.recover.effects import Effect, changed_keys, decide_repeat, effect_of, non_idempotent, undone

BEFORE = EffectSnapshot(url="http://127.0.0.1:1/list", local={"items": "a1", "heartbeat": "1"},
                        session={}, cookies={"sid@127.0.0.1/": "c0"}, idb={"shop/items": "0"},
                        items={"li": 0, "elements": 20}, values={"name": "x"})


def snap(**changes) -> EffectSnapshot:
    fields = {f: getattr(BEFORE, f) for f in BEFORE.__slots__}
    fields.update(changes)
    return EffectSnapshot(**fields)


def test_nothing_changed_is_no_effect() -> None:
    assert changed_keys(BEFORE, snap()) == []
    effect = effect_of(BEFORE, snap())
    assert not effect.seen and not effect.unknown


@pytest.mark.parametrize("now,expected", [
    (snap(local={"items": "b2", "heartbeat": "1"}), "localStorage 'items' changed"),
    (snap(session={"cart": "1"}), "sessionStorage 'cart' written"),
    (snap(cookies={}), "cookie 'sid@127.0.0.1/' removed"),
    (snap(idb={"shop/items": "1"}), "IndexedDB 'shop/items' changed"),
])
def test_every_kind_of_storage_write_is_a_lasting_effect(now: EffectSnapshot, expected: str) -> None:
    effect = effect_of(BEFORE, now)
    assert effect.storage == (expected,) and effect.lasting and effect.seen


def test_items_values_and_navigation_are_effects_a_rollback_may_undo() -> None:
    now = snap(items={"li": 1, "elements": 21}, values={"name": "y"}, url="http://127.0.0.1:1/done?x=1")
    effect = effect_of(BEFORE, now)
    assert effect.items == ("1 list item added",)  # the element count is not said twice
    assert effect.values == ("the value of 'name' changed",)
    assert effect.navigation == "went to http://127.0.0.1:1/done"
    assert effect.seen and not effect.lasting
    assert "1 list item added" in effect.describe()


def test_a_dialog_shown_is_an_effect_even_when_the_element_count_is_background() -> None:
    """A confirmation box already in the DOM is only displayed: no element is added, yet it opened."""
    now = snap(items={"li": 0, "elements": 20, "dialog": 1})
    effect = effect_of(snap(items={"li": 0, "elements": 20, "dialog": 0}), now, background={"items elements"})
    assert effect.items == ("1 dialog opened",) and effect.seen and not effect.lasting
    closed = effect_of(now, snap(items={"li": 0, "elements": 20, "dialog": 0}))
    assert closed.items == ("1 dialog closed",)


def test_background_keys_are_never_the_attempts_effect() -> None:
    now = snap(local={"items": "a1", "heartbeat": "2"})
    assert effect_of(BEFORE, now).seen
    assert not effect_of(BEFORE, now, background={"localStorage heartbeat"}).seen
    assert undone(BEFORE, now, background={"localStorage heartbeat"}) == []


def test_an_unreadable_page_is_unknown_and_never_undone() -> None:
    effect = effect_of(None, snap())
    assert effect.unknown and not effect.seen
    assert undone(BEFORE, None) == ["the page's state could not be read"]
    assert effect_of(None, None, writes=("POST /api/items 201",)).lasting


def test_undone_lists_what_a_rollback_left() -> None:
    assert undone(BEFORE, snap(local={"items": "b2", "heartbeat": "1"})) == ["localStorage 'items' changed"]
    assert undone(BEFORE, snap()) == []


@pytest.mark.parametrize("kind,value,name,typ,role,expected", [
    ("press", "Enter", "", "", "textbox", True),
    ("press", "Control+Enter", "", "", "textbox", True),
    ("press", " ", "", "", "button", True),
    ("press", "Tab", "", "", "textbox", False),
    ("click", "", "Add", "", "button", True),
    ("click", "", "Add to cart", "", "button", True),
    ("click", "", "+", "", "button", True),
    ("click", "", "Go", "submit", "button", True),
    ("click", "", "Ajouter", "", "button", True),
    ("click", "", "Show details", "button", "button", False),
    ("click", "", "Address", "", "link", False),  # "add" only as a whole word
    ("dblclick", "", "New row", "", "button", True),
    ("check", "", "Add milk", "checkbox", "checkbox", False),
    ("input", "x", "Name", "text", "textbox", False),
])
def test_which_actions_are_non_idempotent(kind, value, name, typ, role, expected) -> None:
    assert non_idempotent(kind, value, name=name, input_type=typ, role=role) is expected


def test_no_effect_retries_unless_a_non_idempotent_action_changed_the_page() -> None:
    none = Effect()
    assert decide_repeat(none, idempotent=True, page_changed=True, can_roll_back=True,
                         compensations=False).kind == "retry"
    assert decide_repeat(none, idempotent=False, page_changed=False, can_roll_back=True,
                         compensations=False).kind == "retry"
    assert decide_repeat(none, idempotent=False, page_changed=True, can_roll_back=True,
                         compensations=False).kind == "reverify"


def test_an_unreadable_page_blocks_only_non_idempotent_retries() -> None:
    unknown = Effect(unknown="the page's state could not be read")
    assert decide_repeat(unknown, idempotent=True, page_changed=False, can_roll_back=True,
                         compensations=False).kind == "retry"
    d = decide_repeat(unknown, idempotent=False, page_changed=False, can_roll_back=True, compensations=False)
    assert d.kind == "reverify" and "could not be read" in d.reason


def test_a_lasting_effect_is_never_repeated_unless_compensations_may_undo_it() -> None:
    stored = Effect(storage=("localStorage 'items' changed",))
    d = decide_repeat(stored, idempotent=True, page_changed=True, can_roll_back=True, compensations=False)
    assert d.kind == "reverify" and "rollback cannot undo" in d.reason and "'items'" in d.reason
    assert decide_repeat(stored, idempotent=True, page_changed=True, can_roll_back=True,
                         compensations=True).kind == "roll_back_then_check"
    assert decide_repeat(Effect(writes=("POST /api/items 201",)), idempotent=True, page_changed=True,
                         can_roll_back=True, compensations=False).kind == "reverify"


def test_a_page_effect_is_rolled_back_and_checked_when_a_checkpoint_exists() -> None:
    items = Effect(items=("1 list item added",))
    assert decide_repeat(items, idempotent=False, page_changed=True, can_roll_back=True,
                         compensations=False).kind == "roll_back_then_check"
    assert decide_repeat(items, idempotent=False, page_changed=True, can_roll_back=False,
                         compensations=False).kind == "reverify"
