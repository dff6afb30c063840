"""Pre-checks before acting (S4): is the resolved target fit for the action?

Driven by the action table (:mod:`core.act.space`): ``needs_enabled`` and
``needs_editable``.  A failed pre-check is reported instead of acting, so
the action is never sent to an element that cannot take it.
"""
from __future__ import annotations

from core.domain import Candidate

from .space import spec

__all__ = ["precheck", "EDITABLE_ROLES"]

#: Roles that take typed text even when the element is not natively editable (custom widgets
#: drawn with ARIA roles; the driver types into them by click, select all, type - P5).
EDITABLE_ROLES = frozenset({"textbox", "combobox", "searchbox", "spinbutton"})


def precheck(kind: str, cand: Candidate | None) -> str:
    """Why the target cannot take action ``kind`` now (S4); ``""`` when it can.

    Checks, in order: the target is visible; it is enabled when the kind
    ``needs_enabled``; it is an editable field (natively editable, or one of
    :data:`EDITABLE_ROLES`) when the kind ``needs_editable``.  No target
    (a targetless action) passes.

    Returns
    -------
    str
        ``""``, ``"target is not visible"``, ``"target is disabled"`` or
        ``"target is not an editable field"``.

    Raises
    ------
    KeyError
        When ``kind`` is outside the closed action space (with a target).
    """
    if cand is None:
        return ""
    if not cand.visible:
        return "target is not visible"
    row = spec(kind)
    if row.needs_enabled and not cand.enabled:
        return "target is disabled"
    if row.needs_editable and not cand.editable and cand.descriptor.role not in EDITABLE_ROLES:
        return "target is not an editable field"
    return ""
