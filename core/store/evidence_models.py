"""The table of step evidence: a NEW table, added by ``create_all`` on open (no schema version bump).

One row per step of a run (replaced when the step is recorded again): the
before/after image difference (regions in CSS px), the console errors and
failed requests while the step ran, the assertions as checked, the action
kind, and the step's active and wall time (ms) with its time per phase.
The screenshots themselves are the step's ``observations`` rows.  Texts
pass the store's redactor like every other row.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base

__all__ = ["StepEvidenceRow"]


class StepEvidenceRow(Base):
    """The evidence of one step of one run (:class:`core.domain.evidence.StepEvidence`)."""

    __tablename__ = "step_evidence"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), ForeignKey("runs.id", ondelete="CASCADE"))
    step_index: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    action: Mapped[str] = mapped_column(String(32), default="")
    #: None when no diff was made; else {"regions": [[x, y, w, h], ...], "ratio", "width", "height", "dpr",
    #: "truncated", "ms", "note"} (CSS px)
    diff: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    console: Mapped[list[Any]] = mapped_column(JSON, default=list)
    failed_requests: Mapped[list[Any]] = mapped_column(JSON, default=list)
    assertions: Mapped[list[Any]] = mapped_column(JSON, default=list)
    phase_ms: Mapped[list[Any]] = mapped_column(JSON, default=list)
    active_ms: Mapped[float] = mapped_column(Float, default=0.0)
    wall_ms: Mapped[float] = mapped_column(Float, default=0.0)

    __table_args__ = (Index("ix_step_evidence_run_step", "run_id", "step_index"),)
