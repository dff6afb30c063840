"""Roles and role families: which candidates may stand for a target.

An element's effective role is its ARIA role, else the implicit role of its
tag (HTML-AAM, simplified).  Roles fall into families (action, text,
choice, check, generic); FUZZY_TEXT trusts a label match fully only on the
same kind of element (:func:`kind_factor`), so a label that moved from a
button to a text box is never taken for it on its text alone.
"""
from __future__ import annotations

__all__ = [
    "implicit_role", "effective_role", "role_family", "kind_factor", "GENERIC",
]

#: Family of elements with no interactive meaning (div, span, li...).
GENERIC = "generic"

_INPUT_ROLES = {
    "button": "button", "submit": "button", "reset": "button", "image": "button",
    "checkbox": "checkbox", "radio": "radio", "range": "slider", "number": "spinbutton",
    "search": "searchbox", "select-one": "combobox", "select-multiple": "listbox",
    "file": "button", "color": "button",
}
_TAG_ROLES = {
    "a": "link", "button": "button", "textarea": "textbox", "select": "combobox",
    "option": "option", "img": "img", "h1": "heading", "h2": "heading", "h3": "heading",
    "h4": "heading", "h5": "heading", "h6": "heading", "summary": "button",
    "li": "listitem", "td": "cell", "th": "columnheader", "tr": "row", "label": "label",
}
_FAMILIES = {
    "button": "action", "link": "action", "menuitem": "action", "tab": "action",
    "treeitem": "action", "option": "action", "columnheader": "action",
    "textbox": "text", "searchbox": "text", "spinbutton": "text",
    "combobox": "choice", "listbox": "choice", "slider": "choice",
    "checkbox": "check", "radio": "check", "switch": "check",
    "menuitemcheckbox": "check", "menuitemradio": "check",
}


def implicit_role(tag: str, type_: str = "") -> str:
    """Implicit ARIA role of ``tag`` (lower-case) with input ``type_``; ``""`` if none."""
    tag = tag.lower()
    if tag == "input":
        return _INPUT_ROLES.get(type_.lower(), "textbox")
    return _TAG_ROLES.get(tag, "")


def effective_role(role: str, tag: str, type_: str = "") -> str:
    """Explicit role when given, else the implicit one."""
    return role.lower().strip() or implicit_role(tag, type_)


def role_family(role: str) -> str:
    """Family of an effective role: action, text, choice, check, or generic."""
    return _FAMILIES.get(role, GENERIC)


def kind_factor(t_tag: str, t_role: str, t_family: str, c_tag: str, c_role: str, c_family: str) -> float:
    """How far a label match on this candidate can be trusted, by element kind.

    1.0 for the same role and tag; 0.9 for another role or tag of the same
    family (a link that became a button, a ``span`` that became an ``li``);
    0.8 otherwise.  With FUZZY_TEXT's strict "> 0.8" threshold, an element of
    another kind can never win on its label alone, but it still counts as a
    runner-up, so a ``span`` inside a link, or a text box that became a combo
    box, sends the decision on to SEMANTIC.
    """
    if t_role == c_role and (t_tag == c_tag or not t_tag or not c_tag):
        return 1.0
    if t_family == c_family:
        return 0.9
    return 0.8
