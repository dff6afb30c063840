"""The table of what the model cost in each run (P9): calls, tokens, latency, cache hits, the P7 judge share.

One row per run that used the model: ``usage`` is the counters' JSON
(``calls``, ``cache_hits``, ``rule_decisions``, ``errors``, ``prompt_tokens``,
``completion_tokens``, ``latency_ms``, ``goals_passed``, ``goals_judged``...),
``judged_share`` 0..1 and ``alarm`` whether it was above the P7 limit.
No foreign key to ``runs``.  A new table: an Alembic revision creates it.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow

__all__ = ["ModelUsageRow"]


class ModelUsageRow(Base):
    """What the model cost in one run."""

    __tablename__ = "model_usage"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64))
    flow: Mapped[str] = mapped_column(String(200), default="")
    model: Mapped[str] = mapped_column(String(200), default="")
    usage: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    judged_share: Mapped[float] = mapped_column(Float, default=0.0)
    alarm: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_model_usage_run", "run_id"),)
