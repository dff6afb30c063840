"""The table of takeover corrections: a NEW table, added by ``create_all`` on open.

A row is one manual segment of a takeover: what a person did on the
engine's own page between taking over at a step and handing back, recorded
with the same full descriptors as a recording (the steps as the flow file
holds them, :func:`core.project.loader.flow_to_mapping`), the page at the
takeover (URL, title, state signature digest, the screenshot path relative to
the store's media folder), what the hand-back said the actions were for
(``meaning``: ``replace`` the step / ``insert`` before it / the step is
``done``), and the flow-file edit offered from it (``diff``).  It is the raw
material of heal proposals and skills.

``state``: ``offered`` (a flow edit waits for review), ``accepted`` (the flow
file was changed), ``rejected`` (with ``review_reason``), ``kept`` (nothing
to edit: the step was done by hand, or no action was recorded).  Crops of
the recorded elements are PNG files under ``corrections/<id>/`` of the media
folder (``crops`` maps step id -> relative path).  Times are UTC.

No foreign key to ``runs``: a correction outlives the run that made it.
The schema version is not bumped (a new table needs no migration).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow

__all__ = ["CorrectionRow"]


class CorrectionRow(Base):
    """One manual segment of a takeover and the flow edit offered from it."""

    __tablename__ = "corrections"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), default="")
    project: Mapped[str] = mapped_column(String(200), default="")
    flow: Mapped[str] = mapped_column(String(200), default="")
    flow_file: Mapped[str] = mapped_column(Text, default="")
    step_index: Mapped[int] = mapped_column(Integer, default=0)
    step_id: Mapped[str] = mapped_column(String(200), default="")
    step_title: Mapped[str] = mapped_column(Text, default="")
    reason: Mapped[str] = mapped_column(Text, default="")
    page: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    screenshot: Mapped[str | None] = mapped_column(String(500), nullable=True)
    steps: Mapped[list[Any]] = mapped_column(JSON, default=list)
    crops: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    secrets: Mapped[list[Any]] = mapped_column(JSON, default=list)
    meaning: Mapped[str] = mapped_column(String(16), default="replace")
    continue_from: Mapped[int] = mapped_column(Integer, default=0)
    state: Mapped[str] = mapped_column(String(16), default="offered")
    flow_digest: Mapped[str] = mapped_column(String(64), default="")
    diff: Mapped[str] = mapped_column(Text, default="")
    review_reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    reviewed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (Index("ix_corrections_flow_state", "flow", "state"),)
