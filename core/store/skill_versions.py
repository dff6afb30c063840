"""A cheap read of which skills are in a state, and since when (the skill decider's re-read before each decision).

Only two columns are read - no JSON is decoded - so a retire made during
a run (the studio, ``steadyhand skills retire``) is seen by the next
decision at the cost of one small query (K6).
"""
from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select

from .skill_models import SkillRow

if TYPE_CHECKING:
    from .repository import Store

__all__ = ["skill_versions"]


def skill_versions(store: "Store", product: str, state: str = "approved") -> dict[str, datetime | None]:
    """Skill id -> the row's ``updated_at`` for every skill of ``product`` in ``state``.

    Raises :class:`~core.store.StoreClosedError` on a closed store.
    """
    q = select(SkillRow.id, SkillRow.updated_at).where(SkillRow.product == product, SkillRow.state == state)
    with store._read() as s:
        return {sid: at for sid, at in s.execute(q)}
