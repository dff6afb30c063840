"""SQLAlchemy ORM models of the run store.

Kept separate from the domain dataclasses (``core.domain``): rows are what is
persisted, the dataclasses are what the engine works with; the repository
(:mod:`core.store.repository`) converts between them.

Only portable column types are used (``String``, ``Text``, ``Integer``,
``Float``, ``Boolean``, ``DateTime``, generic ``JSON``) so the same models
run on SQLite (the embedded default) and PostgreSQL (architecture rule 4).
Columns that would be SQL keywords are renamed: the step index is
``step_index`` everywhere and the before/after moment of an observation is
``moment``.  Times are UTC; durations are in the unit their name says
(``seconds``, ``ms``).
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "SCHEMA_VERSION", "Base", "SchemaMeta", "RunRow", "StepRow", "ObservationRow",
    "ResolutionRow", "VerdictRow", "EscalationRow", "ScreenBaselineRow", "ScreenChangeRow", "CheckpointRow",
    "utcnow",
]

#: Version of the schema these models describe: the number of the head Alembic revision
#: (``core/store/schema/versions/NNNN_*.py``); bump it together with a new revision.
SCHEMA_VERSION = 4


def utcnow() -> datetime:
    """Current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    """Declarative base of the store's tables."""


def _run_fk() -> ForeignKey:
    """A fresh foreign key to ``runs.id`` (a ForeignKey object belongs to one column)."""
    return ForeignKey("runs.id", ondelete="CASCADE")


class SchemaMeta(Base):
    """One row per schema version applied to this database (migration log)."""

    __tablename__ = "schema_meta"

    version: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    applied_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    description: Mapped[str] = mapped_column(String(200), default="")


class RunRow(Base):
    """A run of one flow: inserted as ``running`` at start, completed at finish.

    ``owner`` identifies the writing process (``host|pid|start token``) so
    that runs left ``running`` by a dead process can be marked
    ``interrupted``; ``updated_at`` is the time of the run's last write.
    """

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    project: Mapped[str] = mapped_column(String(200), default="")
    flow: Mapped[str] = mapped_column(String(200), default="")
    status: Mapped[str] = mapped_column(String(32), default="running")
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    heals: Mapped[int] = mapped_column(Integer, default=0)
    invalid_actions: Mapped[int] = mapped_column(Integer, default=0)
    reward: Mapped[float | None] = mapped_column(Float, nullable=True)
    error: Mapped[str] = mapped_column(Text, default="")
    heals_by_strategy: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    owner: Mapped[str] = mapped_column(String(300), default="")
    schema_version: Mapped[int] = mapped_column(Integer, default=SCHEMA_VERSION)
    #: Steps in the flow file as the run ran it (None: not finished, or stored before schema 4).
    steps_total: Mapped[int | None] = mapped_column(Integer, nullable=True)

    __table_args__ = (
        Index("ix_runs_started_at", "started_at"),
        Index("ix_runs_status", "status"),
        Index("ix_runs_flow", "flow"),
    )


class StepRow(Base):
    """Outcome of one executed step; one row per ``(run_id, step_index)``."""

    __tablename__ = "steps"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), _run_fk())
    step_index: Mapped[int] = mapped_column(Integer)
    step_id: Mapped[str] = mapped_column(String(200), default="")
    title: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(32), default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    ms: Mapped[float] = mapped_column(Float, default=0.0)
    error: Mapped[str] = mapped_column(Text, default="")

    __table_args__ = (UniqueConstraint("run_id", "step_index", name="uq_steps_run_index"),)


class ObservationRow(Base):
    """One observation (before or after a step's action).

    ``screenshot`` is the PNG's path relative to the store's media folder
    (``screenshots/<run_id>/0003_before_1.png``), or None when no
    screenshot was taken.  ``viewport_w``/``viewport_h`` are CSS px.
    """

    __tablename__ = "observations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), _run_fk())
    step_index: Mapped[int] = mapped_column(Integer)
    moment: Mapped[str] = mapped_column(String(16))
    url: Mapped[str] = mapped_column(Text, default="")
    title: Mapped[str] = mapped_column(Text, default="")
    signature_digest: Mapped[str] = mapped_column(String(64), default="")
    element_count: Mapped[int] = mapped_column(Integer, default=0)
    viewport_w: Mapped[int] = mapped_column(Integer, default=0)
    viewport_h: Mapped[int] = mapped_column(Integer, default=0)
    device_pixel_ratio: Mapped[float] = mapped_column(Float, default=1.0)
    timestamp_ms: Mapped[float] = mapped_column(Float, default=0.0)
    screenshot: Mapped[str | None] = mapped_column(String(500), nullable=True)

    __table_args__ = (Index("ix_observations_run_step", "run_id", "step_index"),)


class ResolutionRow(Base):
    """How a step's target was resolved (R2); one row per attempt.

    ``top`` is a JSON list of ``{"ref", "score", "label"}``, best first.
    """

    __tablename__ = "resolutions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), _run_fk())
    step_index: Mapped[int] = mapped_column(Integer)
    strategy: Mapped[str] = mapped_column(String(64), default="")
    ref: Mapped[str | None] = mapped_column(String(64), nullable=True)
    score: Mapped[float] = mapped_column(Float, default=0.0)
    margin: Mapped[float] = mapped_column(Float, default=0.0)
    ms: Mapped[float] = mapped_column(Float, default=0.0)
    abstained: Mapped[bool] = mapped_column(Boolean, default=False)
    reason: Mapped[str] = mapped_column(Text, default="")
    top: Mapped[list[Any]] = mapped_column(JSON, default=list)

    __table_args__ = (Index("ix_resolutions_run_step", "run_id", "step_index"),)


class VerdictRow(Base):
    """Post-verification of one action (S5); one row per attempt.

    ``observed`` is a JSON list of the observed delta names.
    """

    __tablename__ = "verdicts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), _run_fk())
    step_index: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(32))
    expected: Mapped[str] = mapped_column(Text, default="")
    observed: Mapped[list[Any]] = mapped_column(JSON, default=list)
    reason: Mapped[str] = mapped_column(Text, default="")

    __table_args__ = (Index("ix_verdicts_run_step", "run_id", "step_index"),)


class EscalationRow(Base):
    """The engine asked for a human (R4): where, why, and side effects so far."""

    __tablename__ = "escalations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), _run_fk())
    flow: Mapped[str] = mapped_column(String(200), default="")
    step_index: Mapped[int] = mapped_column(Integer)
    step_title: Mapped[str] = mapped_column(Text, default="")
    reason: Mapped[str] = mapped_column(Text, default="")
    candidates: Mapped[list[Any]] = mapped_column(JSON, default=list)
    side_effects: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: The escalation kind (``core.domain.EscalationKind``) and its plain sentence; schema 3 ("" before).
    kind: Mapped[str] = mapped_column(String(32), default="", server_default="")
    plain: Mapped[str] = mapped_column(Text, default="", server_default="")

    __table_args__ = (Index("ix_escalations_run", "run_id"),)


class ScreenBaselineRow(Base):
    """The R1 baseline of the screen seen before one flow step; one row per ``(flow, step_id)``.

    A table of schema version 1 (stores that predate it gain it on open).
    ``phash`` is 16 hex chars (``""`` without a screenshot), ``layout`` a SHA1
    hex digest, ``elements`` a JSON list of ``{"key", "role", "text", "box":
    [x, y, w, h]}`` (CSS px, page coordinates).  ``refreshed`` counts the
    refreshes after passing runs; ``alert`` is set when a run saw the screen
    changed beyond the R1 threshold (``alert_report`` says how) and cleared
    by the next refresh.  Flow files are never touched by these rows.
    """

    __tablename__ = "screen_baselines"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    flow: Mapped[str] = mapped_column(String(200))
    step_id: Mapped[str] = mapped_column(String(200))
    screen_key: Mapped[str] = mapped_column(Text, default="")
    phash: Mapped[str] = mapped_column(String(64), default="")
    layout: Mapped[str] = mapped_column(String(64), default="")
    elements: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    refreshed: Mapped[int] = mapped_column(Integer, default=0)
    alert: Mapped[bool] = mapped_column(Boolean, default=False)
    alert_reason: Mapped[str] = mapped_column(Text, default="")
    alert_report: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    alert_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    alert_run_id: Mapped[str] = mapped_column(String(64), default="")
    schema_version: Mapped[int] = mapped_column(Integer, default=1)

    __table_args__ = (UniqueConstraint("flow", "step_id", name="uq_screen_baselines_flow_step"),)


class ScreenChangeRow(Base):
    """A screen that differed from its baseline in a run (R1): the per-element change report.

    ``report`` is :meth:`core.domain.change.ChangeReport.to_mapping`.
    """

    __tablename__ = "screen_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), _run_fk())
    step_index: Mapped[int] = mapped_column(Integer)
    flow: Mapped[str] = mapped_column(String(200), default="")
    step_id: Mapped[str] = mapped_column(String(200), default="")
    screen_key: Mapped[str] = mapped_column(Text, default="")
    similarity: Mapped[float | None] = mapped_column(Float, nullable=True)
    layout_changed: Mapped[bool] = mapped_column(Boolean, default=False)
    report: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_screen_changes_run", "run_id"),)


class CheckpointRow(Base):
    """The state before a step acted (R3): where a rollback returns to.  Form values of secret fields are
    kept by their keyed digest only (HMAC-SHA-256, a random key per process, never written; architecture rule 7); the screenshot is a media path."""

    __tablename__ = "checkpoints"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), _run_fk())
    step_index: Mapped[int] = mapped_column(Integer)
    step_id: Mapped[str] = mapped_column(String(200), default="")
    url: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(64), default="")
    reversible: Mapped[bool] = mapped_column(Boolean, default=True)
    step_state: Mapped[str] = mapped_column(String(16), default="pending")
    screenshot: Mapped[str | None] = mapped_column(Text, nullable=True)
    modal_titles: Mapped[list[Any]] = mapped_column(JSON, default=list)
    fields: Mapped[list[Any]] = mapped_column(JSON, default=list)
    side_effects: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (UniqueConstraint("run_id", "step_index", name="uq_checkpoints_run_step"),)
