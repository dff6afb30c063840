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
from typing import TYPE_CHECKING, Any, Mapping

from sqlalchemy import Connection, Integer, Table, bindparam, delete, func, insert, literal_column, or_, select, update

from core.state.graph import (
    DHASH_TOLERANCE_BITS, GraphChange, StateEdge, StateGraph, StateNode, StateSeen, Transition, from_records,
    matches,
)

from .graph_models import StateEdgeRow, StateNodeRow
from .models import utcnow
from .statements import insert_id, write

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
    #
    # Core statements on the write's connection (:meth:`Store._conn`): the nodes a transition may be are read in
    # one query, each node and the edge written by one statement; identification as :meth:`StateGraph.add`.

    def _pick(self, rows: list[dict[str, Any]], seen: StateSeen) -> dict[str, Any] | None:
        """The stored node ``seen`` is a sighting of, among ``rows`` (by id): the one of its key, else the first of
        its structure whose dHash is close (:func:`core.state.graph.matches`); None when none."""
        for r in rows:
            if r["key"] == seen.key:
                return r
        for r in rows:
            if r["structure"] == seen.structure and matches(_node_of(r), seen, self.tolerance):
                return r
        return None

    def _touch_node(self, conn: Connection, name: str, seen: StateSeen, at: datetime, *, visit: bool,
                    run_id: str, row: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
        """The node ``row`` (as found) updated, or a new one inserted for ``seen``: ``(node values, new)``."""
        t = self.store._t
        if row is None:
            row = dict(graph=name, key=seen.key, structure=seen.structure, dhash=seen.dhash, url=t(seen.url),
                       title=t(seen.title), screenshot=seen.screenshot, visits=1 if visit else 0, runs=1,
                       last_run_id=run_id, first_seen=at, last_seen=at)
            row["id"] = insert_id(conn, _INSERT_NODE, row)
            return row, True
        add_visits, add_runs = (1 if visit else 0), (1 if row["last_run_id"] != run_id else 0)
        shot = row["screenshot"] or seen.screenshot
        write(conn, _UPDATE_NODE, {"row_id": row["id"], "add_visits": add_visits, "add_runs": add_runs,
                                   "run": run_id, "shot": shot, "at": at})
        row.update(last_seen=at, visits=row["visits"] + add_visits, runs=row["runs"] + add_runs, last_run_id=run_id,
                   screenshot=shot)  # as the UPDATE left it: this transaction holds the write lock
        return row, False

    def add_transition(self, name: str, transition: Transition) -> GraphChange:
        """Add one transition to graph ``name`` (one write transaction); returns the nodes and edge as stored."""
        tr = transition
        at = tr.at or utcnow()
        t = self.store._t
        with self.store._conn() as conn:
            # every node either state may be (its key, or its structure), by id: one query for both
            rows = [dict(r._mapping) for r in conn.execute(_CANDIDATES, {
                "graph": name, "keys": [tr.before.key, tr.after.key],
                "structures": [tr.before.structure, tr.after.structure]})]
            known = self._pick(rows, tr.before)
            src, new_src = self._touch_node(conn, name, tr.before, at, visit=tr.start or known is None,
                                            run_id=tr.run_id, row=known)
            if new_src:
                rows.append(src)  # the newest id: last, as a query after its insert would list it
            after = self._pick(rows, tr.after)
            if after is not None and after["key"] == src["key"]:
                dst, new_dst = src, False
            else:
                dst, new_dst = self._touch_node(conn, name, tr.after, at, visit=True, run_id=tr.run_id, row=after)
            ek = tr.edge_key
            found = conn.execute(_FIND_EDGE, {"graph": name, "source": src["key"], "target": dst["key"],
                                              "edge_key": ek}).first()
            if found is None:
                edge = dict(graph=name, source=src["key"], target=dst["key"], edge_key=ek, kind=tr.kind,
                            target_summary=t(tr.target), step_id=t(tr.step_id), count=1,
                            verdicts={tr.verdict: 1} if tr.verdict else {}, last_verdict=tr.verdict or "",
                            last_run_id=tr.run_id, first_seen=at, last_seen=at)
                write(conn, _INSERT_EDGE, edge)
            else:
                edge = dict(found._mapping)
                verdicts = dict(edge["verdicts"] or {})
                if tr.verdict:
                    verdicts[tr.verdict] = int(verdicts.get(tr.verdict, 0)) + 1
                last = tr.verdict or edge["last_verdict"] or ""
                write(conn, _UPDATE_EDGE, {"row_id": edge["id"], "verdicts": verdicts, "last": last, "run": tr.run_id,
                                           "at": at})
                edge.update(verdicts=verdicts, count=(edge["count"] or 0) + 1, last_verdict=last, last_run_id=tr.run_id,
                            last_seen=at)
            return GraphChange(_node_of(src), _node_of(dst), _edge_of(edge), new_src, new_dst, found is None)


_NODES: Table = StateNodeRow.__table__  # type: ignore[assignment]
_EDGES: Table = StateEdgeRow.__table__  # type: ignore[assignment]
#: The nodes of graph ``graph`` whose key is one of ``keys`` or structure one of ``structures``, by id.
_CANDIDATES = select(_NODES).where(
    _NODES.c.graph == bindparam("graph"),
    or_(_NODES.c.key.in_(bindparam("keys", expanding=True)),
        _NODES.c.structure.in_(bindparam("structures", expanding=True)))).order_by(_NODES.c.id)
#: One edge by its unique key (parameters ``graph``, ``source``, ``target``, ``edge_key``).
_FIND_EDGE = select(_EDGES).where(_EDGES.c.graph == bindparam("graph"), _EDGES.c.source == bindparam("source"),
                                  _EDGES.c.target == bindparam("target"), _EDGES.c.edge_key == bindparam("edge_key"))
#: Prebuilt writes (compiled once; the parameters are the columns, and ``row_id`` for an update).
_INSERT_NODE = insert(_NODES)
#: A node seen again: its counts incremented in SQL (two writers on one graph add up).
_UPDATE_NODE = update(_NODES).where(_NODES.c.id == bindparam("row_id")).values(
    visits=_NODES.c.visits + bindparam("add_visits", type_=Integer()),
    runs=_NODES.c.runs + bindparam("add_runs", type_=Integer()),
    last_run_id=bindparam("run", type_=_NODES.c.last_run_id.type),
    screenshot=bindparam("shot", type_=_NODES.c.screenshot.type),
    last_seen=bindparam("at", type_=_NODES.c.last_seen.type))
_INSERT_EDGE = insert(_EDGES)
#: An edge taken again: its count incremented in SQL, its verdict counts as read and counted in this transaction.
_UPDATE_EDGE = update(_EDGES).where(_EDGES.c.id == bindparam("row_id")).values(
    count=_EDGES.c.count + literal_column("1", Integer()),
    verdicts=bindparam("verdicts", type_=_EDGES.c.verdicts.type),
    last_verdict=bindparam("last", type_=_EDGES.c.last_verdict.type),
    last_run_id=bindparam("run", type_=_EDGES.c.last_run_id.type),
    last_seen=bindparam("at", type_=_EDGES.c.last_seen.type))


def _node_of(r: Mapping[str, Any]) -> StateNode:
    return StateNode(key=r["key"], structure=r["structure"], dhash=r["dhash"], url=r["url"], title=r["title"],
                     screenshot=r["screenshot"] or "", first_seen=_utc(r["first_seen"]),
                     last_seen=_utc(r["last_seen"]), visits=r["visits"], runs=r["runs"], last_run_id=r["last_run_id"])


def _edge_of(r: Mapping[str, Any]) -> StateEdge:
    return StateEdge(source=r["source"], target=r["target"], key=r["edge_key"], kind=r["kind"],
                     target_summary=r["target_summary"], step_id=r["step_id"], count=r["count"],
                     verdicts={str(k): int(v) for k, v in (r["verdicts"] or {}).items()},
                     last_verdict=r["last_verdict"], first_seen=_utc(r["first_seen"]), last_seen=_utc(r["last_seen"]),
                     last_run_id=r["last_run_id"])
