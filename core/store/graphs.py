"""Read and grow stored state graphs (``state_nodes``, ``state_edges``; :mod:`core.store.graph_models`).

``GraphTable(store).load_state_graph(name)`` returns a
:class:`core.state.graph.StateGraph` of everything stored under ``name``;
``GraphTable(store).add_transition(name, transition)`` adds one step in one
write transaction, identifying its states among the stored ones exactly as
:meth:`StateGraph.add` does, so an engine that keeps a graph in memory and
the store agree.  Counts are incremented in the database (two writers on
one graph add up; nothing is overwritten).  Texts (URL, title, target
summary) pass the store's redactor.

Raises (every method): :class:`~core.store.StoreClosedError`, and for
writes on a read-only store :class:`~core.store.StoreReadOnlyError`.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from core.state.graph import (
    DHASH_TOLERANCE_BITS, GraphChange, StateEdge, StateGraph, StateNode, StateSeen, Transition, from_records,
    matches,
)

from .graph_models import StateEdgeRow, StateNodeRow
from .models import utcnow

if TYPE_CHECKING:
    from .repository import Store

__all__ = ["GraphTable"]


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def _node(r: StateNodeRow) -> StateNode:
    return StateNode(key=r.key, structure=r.structure, dhash=r.dhash, url=r.url, title=r.title,
                     screenshot=r.screenshot or "", first_seen=_utc(r.first_seen), last_seen=_utc(r.last_seen),
                     visits=r.visits, runs=r.runs, last_run_id=r.last_run_id)


def _edge(r: StateEdgeRow) -> StateEdge:
    return StateEdge(source=r.source, target=r.target, key=r.edge_key, kind=r.kind, target_summary=r.target_summary,
                     step_id=r.step_id, count=r.count, verdicts={str(k): int(v) for k, v in (r.verdicts or {}).items()},
                     last_verdict=r.last_verdict, first_seen=_utc(r.first_seen), last_seen=_utc(r.last_seen),
                     last_run_id=r.last_run_id)


class GraphTable:
    """The state graphs of one store."""

    def __init__(self, store: "Store", *, tolerance: int = DHASH_TOLERANCE_BITS) -> None:
        self.store = store
        self.tolerance = tolerance

    def names(self) -> list[str]:
        """Names of the stored graphs, sorted."""
        with self.store._read() as s:
            return sorted(set(s.scalars(select(StateNodeRow.graph).distinct())))

    def load_state_graph(self, name: str) -> StateGraph:
        """The stored graph ``name`` (empty when nothing was stored under it)."""
        with self.store._read() as s:
            nodes = [_node(r) for r in s.scalars(select(StateNodeRow).where(StateNodeRow.graph == name)
                                                 .order_by(StateNodeRow.id))]
            edges = [_edge(r) for r in s.scalars(select(StateEdgeRow).where(StateEdgeRow.graph == name)
                                                 .order_by(StateEdgeRow.id))]
        return from_records(name, nodes, edges, tolerance=self.tolerance)

    def counts(self, name: str) -> tuple[int, int]:
        """``(nodes, edges)`` stored under ``name``."""
        with self.store._read() as s:
            n = s.scalar(select(func.count()).select_from(StateNodeRow).where(StateNodeRow.graph == name)) or 0
            e = s.scalar(select(func.count()).select_from(StateEdgeRow).where(StateEdgeRow.graph == name)) or 0
        return int(n), int(e)

    def forget(self, name: str) -> int:
        """Delete graph ``name`` (nodes and edges); returns how many nodes were deleted."""
        with self.store._write() as s:
            s.execute(delete(StateEdgeRow).where(StateEdgeRow.graph == name))
            return int(s.execute(delete(StateNodeRow).where(StateNodeRow.graph == name)).rowcount or 0)

    # -- writing ---------------------------------------------------------------------------

    def _find(self, s: Session, name: str, seen: StateSeen) -> StateNodeRow | None:
        row = s.scalar(select(StateNodeRow).where(StateNodeRow.graph == name, StateNodeRow.key == seen.key))
        if row is not None:
            return row
        for r in s.scalars(select(StateNodeRow).where(StateNodeRow.graph == name,
                                                      StateNodeRow.structure == seen.structure)
                           .order_by(StateNodeRow.id)):
            if matches(_node(r), seen, self.tolerance):
                return r
        return None

    def _touch(self, s: Session, name: str, seen: StateSeen, at: datetime, *, visit: bool,
               run_id: str, found: StateNodeRow | None | bool = False) -> tuple[StateNodeRow, bool]:
        """The node of ``seen`` updated, or a new one added: ``(row, new)``; ``found`` is what :meth:`_find`
        answered for ``seen`` in this session already (False: not looked up yet)."""
        t = self.store._t
        row = self._find(s, name, seen) if found is False else found
        if row is None:
            row = StateNodeRow(graph=name, key=seen.key, structure=seen.structure, dhash=seen.dhash, url=t(seen.url),
                               title=t(seen.title), screenshot=seen.screenshot, visits=1 if visit else 0,
                               runs=1, last_run_id=run_id, first_seen=at, last_seen=at)
            s.add(row)
            s.flush()
            return row, True
        row.last_seen = at
        row.visits += 1 if visit else 0
        if row.last_run_id != run_id:
            row.runs += 1
            row.last_run_id = run_id
        row.screenshot = row.screenshot or seen.screenshot
        return row, False

    def add_transition(self, name: str, transition: Transition) -> GraphChange:
        """Add one transition to graph ``name`` (one write transaction); returns the nodes and edge as stored."""
        tr = transition
        at = tr.at or utcnow()
        t = self.store._t
        with self.store._write() as s:
            known = self._find(s, name, tr.before)
            src, new_src = self._touch(s, name, tr.before, at, visit=tr.start or known is None, run_id=tr.run_id,
                                       found=known)
            after = self._find(s, name, tr.after)
            if after is not None and after.key == src.key:
                dst, new_dst = src, False
            else:
                dst, new_dst = self._touch(s, name, tr.after, at, visit=True, run_id=tr.run_id, found=after)
            ek = tr.edge_key
            row = s.scalar(select(StateEdgeRow).where(StateEdgeRow.graph == name, StateEdgeRow.source == src.key,
                                                      StateEdgeRow.target == dst.key, StateEdgeRow.edge_key == ek))
            new_edge = row is None
            if row is None:
                row = StateEdgeRow(graph=name, source=src.key, target=dst.key, edge_key=ek, kind=tr.kind,
                                   target_summary=t(tr.target), step_id=t(tr.step_id), count=0, verdicts={},
                                   first_seen=at)
                s.add(row)
            verdicts = dict(row.verdicts or {})
            if tr.verdict:
                verdicts[tr.verdict] = int(verdicts.get(tr.verdict, 0)) + 1
            row.verdicts = verdicts  # a new object: SQLAlchemy sees the JSON change
            row.count = (row.count or 0) + 1
            row.last_verdict = tr.verdict or row.last_verdict or ""
            row.last_run_id = tr.run_id
            row.last_seen = at
            s.flush()
            return GraphChange(_node(src), _node(dst), _edge(row), new_src, new_dst, new_edge)
