"""The table of heal proposals (issue 9 part 4): a table of schema version 1 (stores that predate it gain it on open, :mod:`core.store.migrations`).

A row is one proposed change of one step's target in one flow file: the
descriptor the file holds (``old_target``) and the one the engine acted on
instead (``new_target``), with the evidence of the run that first saw it.
``key`` identifies the change (flow, step, identity of old and new; see
:mod:`core.heal.identity`) and is unique: a change seen again counts
(``seen``) on the same row, and a rejected change stays rejected.
``old_key`` (flow, step, identity of old) finds the pending heals of a step.

``status``: ``pending`` (waiting for review, reused by later runs),
``accepted`` (the flow file was changed), ``rejected`` (never proposed
again), ``applied`` (a "filled in" descriptor of a selector-only step,
written at once and reported as filled in).  ``kind``: ``heal`` or
``filled_in``.  Screenshot paths are relative to the store's media folder;
``flow_digest`` is the SHA-256 hex of the flow file as the last run that saw
the change read it.  Times are UTC.

No foreign key to ``runs``: a proposal outlives the run that made it.
A table added to the models needs an Alembic revision that creates it
(:mod:`core.store.schema`).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow

__all__ = ["HealProposalRow"]


class HealProposalRow(Base):
    """One heal proposal (or one filled-in descriptor)."""

    __tablename__ = "heal_proposals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    old_key: Mapped[str] = mapped_column(String(64))
    project: Mapped[str] = mapped_column(String(200), default="")
    flow: Mapped[str] = mapped_column(String(200), default="")
    flow_file: Mapped[str] = mapped_column(Text, default="")
    step_id: Mapped[str] = mapped_column(String(200), default="")
    step_index: Mapped[int] = mapped_column(Integer, default=0)
    step_title: Mapped[str] = mapped_column(Text, default="")
    kind: Mapped[str] = mapped_column(String(32), default="heal")
    status: Mapped[str] = mapped_column(String(32), default="pending")
    old_target: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    new_target: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    strategy: Mapped[str] = mapped_column(String(64), default="")
    score: Mapped[float] = mapped_column(Float, default=0.0)
    margin: Mapped[float] = mapped_column(Float, default=0.0)
    top: Mapped[list[Any]] = mapped_column(JSON, default=list)
    resolution_reason: Mapped[str] = mapped_column(Text, default="")
    before_screenshot: Mapped[str | None] = mapped_column(String(500), nullable=True)
    after_screenshot: Mapped[str | None] = mapped_column(String(500), nullable=True)
    run_id: Mapped[str] = mapped_column(String(64), default="")
    last_run_id: Mapped[str] = mapped_column(String(64), default="")
    seen: Mapped[int] = mapped_column(Integer, default=1)
    reused: Mapped[int] = mapped_column(Integer, default=0)
    reuse_failed: Mapped[int] = mapped_column(Integer, default=0)
    flow_digest: Mapped[str] = mapped_column(String(64), default="")
    reason: Mapped[str] = mapped_column(Text, default="")
    diff: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    reviewed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (
        Index("ix_heal_proposals_old_key", "old_key"),
        Index("ix_heal_proposals_flow_status", "flow", "status"),
    )
