"""S4 pre-checks read from the action table: visible, enabled, editable."""
from __future__ import annotations

import itertools

import pytest

from core.act.precheck import EDITABLE_ROLES, precheck
from core.domain import ACTION_KINDS, Candidate, ElementDescriptor


def old_precheck(kind: str, cand: Candidate | None) -> str:
    """The executor's pre-check before the table took it over (the reference)."""
    if cand is None:
        return ""
    if not cand.visible:
        return "target is not visible"
    if kind in ("click", "dblclick", "input", "select", "check", "uncheck", "upload") and not cand.enabled:
        return "target is disabled"
    if kind == "input" and not cand.editable and cand.descriptor.role not in ("textbox", "combobox", "searchbox",
                                                                                "spinbutton"):
        return "target is not an editable field"
    return ""


def cand(role: str = "button", *, visible: bool = True, enabled: bool = True, editable: bool = False) -> Candidate:
    return Candidate("0:1", ElementDescriptor(tag="div", role=role, name="x"), enabled=enabled, visible=visible,
                     editable=editable)


ROLES = ("button", "textbox", "combobox", "searchbox", "spinbutton", "checkbox", "")


@pytest.mark.parametrize("kind", ACTION_KINDS)
def test_precheck_is_the_executors_old_rule(kind: str) -> None:
    assert precheck(kind, None) == old_precheck(kind, None) == ""
    for role, visible, enabled, editable in itertools.product(ROLES, (True, False), (True, False), (True, False)):
        c = cand(role, visible=visible, enabled=enabled, editable=editable)
        assert precheck(kind, c) == old_precheck(kind, c), (role, visible, enabled, editable)


@pytest.mark.parametrize(("kind", "c", "why"), [
    ("click", None, ""),
    ("click", cand(), ""),
    ("hover", cand(visible=False), "target is not visible"),
    ("click", cand(visible=False, enabled=False), "target is not visible"),  # visibility is checked first
    ("click", cand(enabled=False), "target is disabled"),
    ("upload", cand(enabled=False), "target is disabled"),
    ("hover", cand(enabled=False), ""),  # hovering a disabled button is fine
    ("press", cand(enabled=False), ""),
    ("input", cand("button"), "target is not an editable field"),
    ("input", cand("button", editable=True), ""),  # contenteditable
    ("input", cand("combobox"), ""),  # a custom widget with a text role
    ("input", cand("textbox", enabled=False), "target is disabled"),
    ("select", cand("button"), ""),  # custom listboxes are opened by a click
])
def test_precheck_cases(kind: str, c: Candidate | None, why: str) -> None:
    assert precheck(kind, c) == why


def test_the_editable_roles() -> None:
    assert EDITABLE_ROLES == {"textbox", "combobox", "searchbox", "spinbutton"}


def test_an_unknown_kind_with_a_target_is_refused() -> None:
    with pytest.raises(KeyError, match="unknown action 'drag'"):
        precheck("drag", cand())
