"""The tables of skills (K1), their uses (K6) and the failure records they come from (K2).

``skills``: one row per skill of a skill space (``product`` = the project
name, K7); ``data`` is the whole skill as :func:`core.domain.skill.skill_to_mapping`
gives it (redacted like every text of the store), and the columns beside it
are copies the queries filter and sort on (state, quality, counters, times).

``skill_uses``: one row per time the runtime considered or ran a skill at
a step: ``outcome`` is ``passed`` (it ran and its verify rules held),
``failed`` (it ran and did not), ``precondition`` (its trigger did not hold
when it was about to act: a negative sample, K6), ``half`` (the trigger only
half held: it did not fire), ``denied`` (a deny rule kept the agent off an
element).  ``ms`` is its wall time in ms.

``failure_records``: one row per captured failure (K2): the flow, the run,
the failure point (step index and id), the error type, the page's state
signature digest, the actions and intents of the trajectory (``trajectory``:
a list of ``{"index", "step_id", "action", "intent", "target", "state_before",
"state_after", "status"}``), the screenshots (paths relative to the media
folder; secrets masked), the attribution (K3, ``attribution``) and what the
failure became (``outcome``: ``open``, ``skill``, ``transient``, ``dropped``).

No foreign key to ``runs``: these rows outlive the runs they name.  Times are UTC.
A table added to the models needs an Alembic revision (:mod:`core.store.schema`).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow

__all__ = ["SkillRow", "SkillUseRow", "FailureRecordRow"]


class SkillRow(Base):
    """One skill of a skill space."""

    __tablename__ = "skills"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    product: Mapped[str] = mapped_column(String(200), default="")
    kind: Mapped[str] = mapped_column(String(16), default="do")
    state: Mapped[str] = mapped_column(String(16), default="proposed")
    description: Mapped[str] = mapped_column(Text, default="")
    quality: Mapped[float] = mapped_column(Float, default=0.0)
    successes: Mapped[int] = mapped_column(Integer, default=0)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    review_reason: Mapped[str] = mapped_column(Text, default="")
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    reviewed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (Index("ix_skills_product_state", "product", "state"),)


class SkillUseRow(Base):
    """One use (or refused use) of a skill at one step of one run."""

    __tablename__ = "skill_uses"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    skill_id: Mapped[str] = mapped_column(String(64))
    run_id: Mapped[str] = mapped_column(String(64), default="")
    flow: Mapped[str] = mapped_column(String(200), default="")
    step_index: Mapped[int] = mapped_column(Integer, default=0)
    step_id: Mapped[str] = mapped_column(String(200), default="")
    outcome: Mapped[str] = mapped_column(String(16), default="passed")
    reason: Mapped[str] = mapped_column(Text, default="")
    ms: Mapped[float] = mapped_column(Float, default=0.0)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_skill_uses_skill", "skill_id"), Index("ix_skill_uses_run", "run_id"))


class FailureRecordRow(Base):
    """One captured failure (K2) and its attribution (K3)."""

    __tablename__ = "failure_records"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    project: Mapped[str] = mapped_column(String(200), default="")
    run_id: Mapped[str] = mapped_column(String(64), default="")
    flow: Mapped[str] = mapped_column(String(200), default="")
    step_index: Mapped[int] = mapped_column(Integer, default=0)
    step_id: Mapped[str] = mapped_column(String(200), default="")
    error_type: Mapped[str] = mapped_column(String(32), default="")
    message: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(64), default="")
    url: Mapped[str] = mapped_column(Text, default="")
    trajectory: Mapped[list[Any]] = mapped_column(JSON, default=list)
    page: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    screenshots: Mapped[list[Any]] = mapped_column(JSON, default=list)
    attribution: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    outcome: Mapped[str] = mapped_column(String(16), default="open")
    correction_id: Mapped[int] = mapped_column(Integer, default=0)
    skill_id: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_failure_records_run", "run_id"),)
