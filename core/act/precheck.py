"""Pre-checks before acting (S4): is the resolved target fit for the action?

Driven by the action table (:mod:`core.act.space`): ``needs_enabled`` and
``needs_editable``.  A failed pre-check is reported instead of acting, so
the action is never sent to an element that cannot take it.
"""
from __future__ import annotations

from core.domain import Candidate
from core.domain.belief import Belief

from .space import spec

__all__ = ["precheck", "EDITABLE_ROLES"]

#: Roles that take typed text even when the element is not natively editable (custom widgets
#: drawn with ARIA roles; the driver types into them by click, select all, type - P5).
EDITABLE_ROLES = frozenset({"textbox", "combobox", "searchbox", "spinbutton"})


def precheck(kind: str, cand: Candidate | None, belief: Belief | None = None) -> str:
    """Why the target cannot take action ``kind`` now (S4); ``""`` when it can.

    Checks, in order: the target is visible; it is enabled when the kind
    ``needs_enabled``; it is an editable field (natively editable, or one of
    :data:`EDITABLE_ROLES`) when the kind ``needs_editable``.  No target
    (a targetless action) passes.

    With the engine's ``belief`` about the page (S3, :mod:`core.state.awareness`):
    a refusal says why ("target is disabled: Submit is disabled because Reason
    is empty"), and while the belief is "waiting for the server" after a submit
    an action that needs an enabled target is refused ("the page is waiting
    for the server ...": re-clicking a submit that is still saving is S1's
    mistimed action).

    Returns
    -------
    str
        ``""``, ``"target is not visible"``, ``"target is disabled"`` (with
        ``": <why>"`` when the belief explains it), ``"target is not an editable
        field"`` or ``"the page is waiting for the server (<evidence>)"``.

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
        why = belief.why_blocked(cand.ref) if belief is not None else ""
        return f"target is disabled: {why}" if why else "target is disabled"
    if row.needs_enabled and belief is not None and belief.state == "waiting_server" and belief.confidence >= 0.7:
        return f"the page is waiting for the server ({belief.evidence[0] if belief.evidence else 'loading'})"
    if row.needs_editable and not cand.editable and cand.descriptor.role not in EDITABLE_ROLES:
        return "target is not an editable field"
    return ""
