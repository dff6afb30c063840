"""The tables of state graphs (P4): NEW tables, added by ``create_all`` on open.

A graph has a name (``flow:<flow>`` for a flow's states, ``explore:<start>``
for an exploration; :func:`core.state.graph.flow_graph_name`) and lives in
one project's store.  ``state_nodes`` holds one row per state of a graph
(unique ``(graph, key)``), ``state_edges`` one row per distinct action
between two states (unique ``(graph, source, target, edge_key)``); later
runs count on the same rows.  ``structure`` and ``dhash`` identify a state
seen again with a few pixels changed (:func:`core.state.graph.matches`).
``screenshot`` is a path relative to the store's media folder; ``verdicts``
a JSON object ``{verdict kind: count}``.  Times are UTC.

No foreign key to ``runs``: a graph outlives the runs that grew it.  The
schema version is not bumped: new tables need no migration.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow

__all__ = ["StateNodeRow", "StateEdgeRow"]


class StateNodeRow(Base):
    """One state of one graph."""

    __tablename__ = "state_nodes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    graph: Mapped[str] = mapped_column(String(300))
    key: Mapped[str] = mapped_column(String(64))
    structure: Mapped[str] = mapped_column(String(64), default="")
    dhash: Mapped[str] = mapped_column(String(32), default="")
    url: Mapped[str] = mapped_column(Text, default="")
    title: Mapped[str] = mapped_column(Text, default="")
    screenshot: Mapped[str] = mapped_column(String(500), default="")
    visits: Mapped[int] = mapped_column(Integer, default=0)
    runs: Mapped[int] = mapped_column(Integer, default=0)
    last_run_id: Mapped[str] = mapped_column(String(64), default="")
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (
        UniqueConstraint("graph", "key", name="uq_state_nodes_graph_key"),
        Index("ix_state_nodes_graph_structure", "graph", "structure"),
    )


class StateEdgeRow(Base):
    """One distinct action between two states of one graph, with its counts."""

    __tablename__ = "state_edges"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    graph: Mapped[str] = mapped_column(String(300))
    source: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(64))
    edge_key: Mapped[str] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(32), default="")
    target_summary: Mapped[str] = mapped_column(Text, default="")
    step_id: Mapped[str] = mapped_column(String(200), default="")
    count: Mapped[int] = mapped_column(Integer, default=0)
    verdicts: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    last_verdict: Mapped[str] = mapped_column(String(32), default="")
    last_run_id: Mapped[str] = mapped_column(String(64), default="")
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (
        UniqueConstraint("graph", "source", "target", "edge_key", name="uq_state_edges_graph_edge"),
        Index("ix_state_edges_graph", "graph"),
    )
