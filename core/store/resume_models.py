"""The tables of resumed runs and of actions under way (schema 3, Alembic revision 0003).

One row per run that continued another one (``steadyhand run --resume``):
the run it resumed, and what the resume did with the earlier run's steps -
``plan`` is :meth:`core.engine.resume.ResumePlan.to_mapping` (step indexes
0-based: ``done`` not done again, ``replayed`` replayed to bring the page
back, ``in_flight`` the step that was running when the earlier run ended,
and how it was judged).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow

__all__ = ["RunResumeRow", "StepActRow"]


class RunResumeRow(Base):
    """Run ``run_id`` resumed run ``resumed_from`` (both rows of ``runs``)."""

    __tablename__ = "run_resumes"

    run_id: Mapped[str] = mapped_column(String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    resumed_from: Mapped[str] = mapped_column(String(64), ForeignKey("runs.id", ondelete="CASCADE"))
    plan: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_run_resumes_from", "resumed_from"),)


class StepActRow(Base):
    """An action of a step was about to be performed (attempt ``attempt``): written before the browser is told
    to act, so that a run killed meanwhile is known to have perhaps acted (a resume never repeats a write
    blindly, :mod:`core.engine.resume`).  Only for actions that may write."""

    __tablename__ = "step_acts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), ForeignKey("runs.id", ondelete="CASCADE"))
    step_index: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_step_acts_run_step", "run_id", "step_index"),)
