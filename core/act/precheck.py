"""Pre-check before acting (S4): the target is visible, enabled and, for typing, editable."""
from __future__ import annotations

from core.act.space import spec
from core.domain import Candidate

__all__ = ["precheck", "EDITABLE_ROLES"]

#: Roles that take typed text even when the element is not a native editable field.
EDITABLE_ROLES = frozenset({"textbox", "combobox", "searchbox", "spinbutton"})


def precheck(kind: str, cand: Candidate | None) -> str:
    """Return "" when ``kind`` may act on ``cand`` now, else why not (S4); None targets pass."""
    if cand is None:
        return ""
    row = spec(kind)
    if not cand.visible:
        return "target is not visible"
    if row.needs_enabled and not cand.enabled:
        return "target is disabled"
    if row.needs_editable and not cand.editable and cand.descriptor.role not in EDITABLE_ROLES:
        return "target is not an editable field"
    return ""
