"""The state graph (P4): states an app went through and the actions between them.

API in brief
------------
``StateSeen.of(signature, screenshot_png=b"", screenshot="")``
    One observed state: its P4 state hash (``key``), the hash without the
    screenshot's dHash (``structure``), the dHash itself, URL, title and the
    stored screenshot path (relative to the store's media folder).
``Transition(before, after, kind, target, step_id, verdict, ...)``
    One action: from ``before`` to ``after``, what was done (action kind,
    :func:`target_summary` of the element) and its verdict (S5).
``StateGraph(name)``
    A ``networkx.MultiDiGraph`` (``.nx``) of :class:`StateNode` (node
    attribute ``"state"``) and :class:`StateEdge` (edge attribute
    ``"action"``, edge key :attr:`StateEdge.key`).
    ``graph.add(transition) -> GraphChange`` adds (or counts again) both
    states and the action edge; ``graph.identify(seen)`` finds the node a
    state belongs to; ``graph.loops()`` lists the cycles (self-loops
    included); ``first_repeat(keys)`` finds a state seen again on one path
    (P4 "a state already seen in this path = loop"); ``stable_layout(graph)``
    positions the nodes (kamada-kawai, fixed seed, previous positions kept).
Persistence: :mod:`core.store.graphs` (``GraphTable(store).load_state_graph(name)``,
``.add_transition(name, transition)``); a flow's graph is named
:func:`flow_graph_name` so later runs add to the same graph.

Identity of a state
-------------------
The node key is the P4 state hash of the first sighting: SHA1 of the
interactive elements (tag, role, first 20 chars of text), the first 500
chars of visible text - both after volatile text (UUIDs, timestamps,
tokens) was normalized (:mod:`core.state.normalize`) - and the 64-bit dHash
of the screenshot.  A later sighting belongs to an existing node when its
key is equal, or when its ``structure`` (the same hash without pixels) is
equal and the dHashes differ by at most :data:`DHASH_TOLERANCE_BITS` bits
(or one side has no screenshot): a clock or a caret changing a few pixels
does not split a state.  Form values are not part of the identity (P4):
typing into a field is a self-loop on the form's state.

Counts: ``visits`` of a node = arrivals from another state plus the starts
of paths there (a self-loop is counted on its edge, not as a visit);
``runs`` = how many runs (distinct ``run_id``) reached it; a node with more
visits than runs was revisited: some run came back to it (P4 loop).  An edge is one distinct action between two
states (same kind, target summary and step id); ``count`` is how often it
was taken and ``verdicts`` how often each verdict was reached.

Pure: no browser, no store, no Qt.  Times are timezone-aware UTC.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, Mapping, Sequence

import networkx as nx

from core.domain import StateSignature

from .signature import dhash64, state_hash

__all__ = [
    "DHASH_TOLERANCE_BITS", "LAYOUT_SEED", "MAX_CYCLE_LENGTH", "KAMADA_KAWAI_MAX_NODES", "StateSeen", "StateNode", "StateEdge", "Transition",
    "GraphChange", "StateGraph", "flow_graph_name", "target_summary", "edge_key", "dhash_distance", "matches",
    "first_repeat", "stable_layout", "layered_layout",
]

#: Largest dHash distance (bits of 64) between two sightings of one state.  P4 gives no tolerance; 6 bits
#: (< 10 %) absorbs a clock, a caret or an anti-aliasing change, while a new panel or page moves far more.
DHASH_TOLERANCE_BITS = 6
#: Seed of the layout (same graph -> same picture between updates and launches).
LAYOUT_SEED = 7
#: Kamada-kawai (O(n^2) per iteration) only up to this many states; a bigger graph gets the seeded spring layout.
KAMADA_KAWAI_MAX_NODES = 40
#: Longest cycle :meth:`StateGraph.loops` looks for (bounds the search on big exploration graphs).
MAX_CYCLE_LENGTH = 8


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def _sha1(*parts: str) -> str:
    h = hashlib.sha1()
    for p in parts:
        h.update(p.encode("utf-8", "replace"))
        h.update(b"\x1f")
    return h.hexdigest()


def flow_graph_name(flow: str) -> str:
    """Name of a flow's state graph in the store: ``"flow:<flow>"`` (exploration uses ``"explore:<start>"``)."""
    return f"flow:{flow}"


def target_summary(role: str = "", label: str = "", *, tag: str = "", selector: str = "", limit: int = 40) -> str:
    """Short human description of an action's target: ``'button "Sign in"'``, ``'#email'``, ``""`` for none.

    ``label`` is cut to ``limit`` chars (40: fits an edge label).  Never pass a secret value here.
    """
    kind = role or tag
    label = " ".join(label.split())
    if len(label) > limit:
        label = label[: limit - 1] + "\u2026"
    if label:
        return f'{kind} "{label}"' if kind else f'"{label}"'
    return selector[:limit] if selector else kind


def edge_key(kind: str, target: str, step_id: str) -> str:
    """Key of an action edge between two states: 16 hex chars of SHA1(kind, target summary, step id)."""
    return _sha1(kind, target, step_id)[:16]


def dhash_distance(a: str, b: str) -> int | None:
    """Hamming distance in bits of two 16-hex-char dHashes; None when either is missing or malformed."""
    if not a or not b:
        return None
    try:
        return bin(int(a, 16) ^ int(b, 16)).count("1")
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class StateSeen:
    """One sighting of a state.

    Attributes
    ----------
    key : str
        P4 state hash (SHA1 hex) of elements, text and the screenshot's dHash.
    structure : str
        The P4 hash without the dHash (elements and text only).
    dhash : str
        16 hex chars, ``""`` without a screenshot.
    url, title : str
        Of the page (URL without fragment, as in the signature).
    screenshot : str
        Stored screenshot path relative to the store's media folder, ``""`` when none.
    """

    key: str
    structure: str
    dhash: str = ""
    url: str = ""
    title: str = ""
    screenshot: str = ""

    @classmethod
    def of(cls, signature: StateSignature, *, screenshot_png: bytes = b"", screenshot: str = "") -> "StateSeen":
        """The sighting of a page from its light signature (S2) and its (masked) screenshot PNG."""
        dh = dhash64(screenshot_png) if screenshot_png else ""
        return cls(key=state_hash(signature, dhash=dh), structure=state_hash(signature),
                   dhash=dh, url=signature.url, title=signature.title, screenshot=screenshot)


@dataclass(frozen=True, slots=True)
class StateNode:
    """A state of the graph (see the module doc for identity and counts)."""

    key: str
    structure: str
    dhash: str = ""
    url: str = ""
    title: str = ""
    screenshot: str = ""
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    visits: int = 0
    runs: int = 0
    last_run_id: str = ""

    @property
    def revisited(self) -> bool:
        """True when some run (or path) reached the state more than once: more visits than runs that saw it."""
        return self.visits > max(self.runs, 1)

    @property
    def label(self) -> str:
        """Short label: the title, else the URL's path."""
        if self.title:
            return self.title
        path = self.url.split("://", 1)[-1]
        return "/" + path.split("/", 1)[1] if "/" in path else path


@dataclass(frozen=True, slots=True)
class StateEdge:
    """One distinct action between two states.

    ``verdicts`` maps a verdict kind (``as_expected``, ``changed_unexpectedly``,
    ``unchanged``, ``failed``) to how often it was reached; ``last_verdict``
    is that of the latest time it was taken.
    """

    source: str
    target: str
    key: str
    kind: str
    target_summary: str = ""
    step_id: str = ""
    count: int = 0
    verdicts: Mapping[str, int] = field(default_factory=dict)
    last_verdict: str = ""
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    last_run_id: str = ""

    @property
    def self_loop(self) -> bool:
        return self.source == self.target

    @property
    def label(self) -> str:
        """``'click button "Sign in"'`` (``x3`` appended when taken three times)."""
        text = f"{self.kind} {self.target_summary}".strip()
        return f"{text} x{self.count}" if self.count > 1 else text


@dataclass(frozen=True, slots=True)
class Transition:
    """One step: the action ``kind`` on ``target`` (a :func:`target_summary`) led from ``before`` to ``after``.

    ``verdict`` is the S5 verdict kind (``""`` when none was reached);
    ``start`` marks the first transition of a path (its ``before`` counts a visit).
    """

    before: StateSeen
    after: StateSeen
    kind: str
    target: str = ""
    step_id: str = ""
    verdict: str = ""
    run_id: str = ""
    step_index: int = -1
    start: bool = False
    at: datetime | None = None

    @property
    def edge_key(self) -> str:
        return edge_key(self.kind, self.target, self.step_id)


@dataclass(frozen=True, slots=True)
class GraphChange:
    """What :meth:`StateGraph.add` changed: both nodes and the edge as they are now, and what is new."""

    source: StateNode
    target: StateNode
    edge: StateEdge
    new_source: bool
    new_target: bool
    new_edge: bool

    @property
    def revisit(self) -> bool:
        """The action led back to a state this run (path) had reached before (not a self-loop)."""
        return not self.edge.self_loop and not self.new_target and self.target.revisited


def matches(node: StateNode | StateSeen, seen: StateSeen, tolerance: int = DHASH_TOLERANCE_BITS) -> bool:
    """True when ``seen`` is a sighting of ``node``'s state (equal key, or equal structure and close dHash)."""
    if node.key == seen.key:
        return True
    if node.structure != seen.structure:
        return False
    d = dhash_distance(node.dhash, seen.dhash)
    return d is None or d <= tolerance


def first_repeat(keys: Iterable[str]) -> int | None:
    """Index in ``keys`` of the first state already seen earlier on the same path (P4 loop), None if none."""
    seen: set[str] = set()
    for i, k in enumerate(keys):
        if k in seen:
            return i
        seen.add(k)
    return None


class StateGraph:
    """States and actions of one flow (or one exploration), over a ``networkx.MultiDiGraph``.

    Parameters
    ----------
    name : str
        The graph's name in the store (:func:`flow_graph_name`, ``"explore:<start>"``).
    tolerance : int
        :data:`DHASH_TOLERANCE_BITS` unless given.
    """

    def __init__(self, name: str = "", *, tolerance: int = DHASH_TOLERANCE_BITS) -> None:
        self.name = name
        self.tolerance = int(tolerance)
        self.nx: nx.MultiDiGraph = nx.MultiDiGraph(name=name)
        self._by_structure: dict[str, list[str]] = {}

    # -- reading -------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.nx.number_of_nodes()

    def __contains__(self, key: object) -> bool:
        return key in self.nx

    def node(self, key: str) -> StateNode:
        """The node of ``key``; KeyError when unknown."""
        return self.nx.nodes[key]["state"]

    def nodes(self) -> list[StateNode]:
        """All nodes, in insertion order."""
        return [d["state"] for _, d in self.nx.nodes(data=True)]

    def edges(self) -> list[StateEdge]:
        """All edges, in insertion order."""
        return [d["action"] for _, _, d in self.nx.edges(data=True)]

    def edge(self, source: str, target: str, key: str) -> StateEdge | None:
        data = self.nx.get_edge_data(source, target, key)
        return data["action"] if data else None

    def identify(self, seen: StateSeen) -> str | None:
        """Key of the node ``seen`` belongs to (see the module doc), None for a new state."""
        if seen.key in self.nx:
            return seen.key
        for key in self._by_structure.get(seen.structure, ()):
            if matches(self.node(key), seen, self.tolerance):
                return key
        return None

    def revisited(self) -> list[StateNode]:
        """Nodes reached more than once."""
        return [n for n in self.nodes() if n.revisited]

    def self_loops(self) -> list[StateEdge]:
        """Actions that left the state as it was (form fills, or an action that did nothing)."""
        return [e for e in self.edges() if e.self_loop]

    def loops(self, max_length: int = MAX_CYCLE_LENGTH) -> list[list[str]]:
        """Cycles of states (node keys, each cycle once), self-loops included, up to ``max_length`` states."""
        simple = nx.DiGraph(self.nx)
        return [list(c) for c in nx.simple_cycles(simple, length_bound=max_length)]

    def loop_edges(self) -> list[StateEdge]:
        """Arrows between two states that lie on a loop (both in one strongly connected part): linear time,
        unlike :meth:`loops`, so a front end can ask after every step."""
        part: dict[str, int] = {}
        for i, comp in enumerate(nx.strongly_connected_components(self.nx)):
            for k in comp:
                part[k] = i
        return [e for e in self.edges() if not e.self_loop and part[e.source] == part[e.target]]

    def successors(self, key: str) -> list[str]:
        return list(dict.fromkeys(self.nx.successors(key)))

    # -- writing -------------------------------------------------------------------------

    def put_node(self, node: StateNode) -> None:
        """Insert or replace a node as given (used when loading a stored graph)."""
        if node.key not in self.nx:
            self._by_structure.setdefault(node.structure, []).append(node.key)
        self.nx.add_node(node.key, state=node)

    def put_edge(self, edge: StateEdge) -> None:
        """Insert or replace an edge as given; both nodes must exist (KeyError otherwise)."""
        if edge.source not in self.nx or edge.target not in self.nx:
            raise KeyError(f"edge {edge.key} joins unknown states {edge.source[:8]} -> {edge.target[:8]}")
        self.nx.add_edge(edge.source, edge.target, key=edge.key, action=edge)

    def _touch(self, seen: StateSeen, at: datetime, *, visit: bool, run_id: str) -> tuple[StateNode, bool]:
        key = self.identify(seen)
        if key is None:
            node = StateNode(key=seen.key, structure=seen.structure, dhash=seen.dhash, url=seen.url, title=seen.title,
                             screenshot=seen.screenshot, first_seen=at, last_seen=at, visits=1 if visit else 0,
                             runs=1, last_run_id=run_id)
            self.put_node(node)
            return node, True
        old = self.node(key)
        node = replace(old, last_seen=at, visits=old.visits + (1 if visit else 0),
                       screenshot=old.screenshot or seen.screenshot, url=old.url or seen.url,
                       title=old.title or seen.title, runs=old.runs + (1 if run_id != old.last_run_id else 0),
                       last_run_id=run_id)
        self.nx.nodes[key]["state"] = node
        return node, False

    def add(self, t: Transition) -> GraphChange:
        """Add one transition: both states (new or counted again) and the action edge (new or counted again).

        Returns the :class:`GraphChange` with the nodes and the edge as they are now.
        """
        at = t.at or _utcnow()
        src, new_src = self._touch(t.before, at, visit=t.start or new_is(self, t.before), run_id=t.run_id)
        if self.identify(t.after) == src.key:  # a self-loop: counted on the edge only
            dst, new_dst = src, False
        else:
            dst, new_dst = self._touch(t.after, at, visit=True, run_id=t.run_id)
        ek = t.edge_key
        old = self.edge(src.key, dst.key, ek)
        verdicts = dict(old.verdicts) if old else {}
        if t.verdict:
            verdicts[t.verdict] = verdicts.get(t.verdict, 0) + 1
        edge = StateEdge(source=src.key, target=dst.key, key=ek, kind=t.kind, target_summary=t.target,
                         step_id=t.step_id, count=(old.count if old else 0) + 1, verdicts=verdicts,
                         last_verdict=t.verdict or (old.last_verdict if old else ""),
                         first_seen=old.first_seen if old else at, last_seen=at, last_run_id=t.run_id)
        self.put_edge(edge)
        return GraphChange(self.node(src.key), self.node(dst.key), edge, new_src, new_dst, old is None)

    def __iter__(self) -> Iterator[StateNode]:
        return iter(self.nodes())


def new_is(graph: StateGraph, seen: StateSeen) -> bool:
    """True when ``seen`` is a state ``graph`` does not hold yet (its first sighting counts a visit)."""
    return graph.identify(seen) is None


def stable_layout(graph: StateGraph, previous: Mapping[str, tuple[float, float]] | None = None, *,
                  seed: int = LAYOUT_SEED) -> dict[str, tuple[float, float]]:
    """Node positions in [-1, 1] x [-1, 1], stable between updates.

    Kamada-kawai from a spring start with a fixed ``seed`` (spring only above
    :data:`KAMADA_KAWAI_MAX_NODES` states); when
    ``previous`` positions are given, known nodes start where they were and
    the spring layout moves only the new ones (``fixed``), so a growing graph
    does not jump.  Disconnected parts are laid out on one undirected view.
    """
    g = nx.Graph(graph.nx)
    g.remove_edges_from(nx.selfloop_edges(g))
    n = g.number_of_nodes()
    if n == 0:
        return {}
    if n == 1:
        return {next(iter(g.nodes)): (0.0, 0.0)}
    prev = {k: v for k, v in (previous or {}).items() if k in g}
    if prev and len(prev) < n:
        pos = nx.spring_layout(g, pos=dict(prev), fixed=list(prev), seed=seed, k=1.2 / max(n, 1) ** 0.5)
    elif prev:
        pos = dict(prev)
    else:
        start = nx.spring_layout(g, seed=seed)
        pos = nx.kamada_kawai_layout(g, pos=start) if n <= KAMADA_KAWAI_MAX_NODES and nx.is_connected(g) else start
    return _normalize({k: (float(v[0]), float(v[1])) for k, v in pos.items()})


def layered_layout(graph: StateGraph) -> dict[str, tuple[int, float]]:
    """``(layer, row)`` per node: the layer is the number of actions from the first state (BFS over the
    graph's arrows, networkx), rows are centred on 0 and ordered by first sighting within a layer.

    Made for flows (mostly chains with a few branches and returns): read left to right, a return is an
    arrow back.  States not reachable from the first one start new roots after it.  Deterministic:
    the same graph gives the same positions, and a growing flow keeps the positions it had.
    """
    order = [n.key for n in graph.nodes()]
    layer: dict[str, int] = {}
    for root in order:
        if root in layer:
            continue
        for key, d in nx.single_source_shortest_path_length(graph.nx, root).items():
            layer.setdefault(key, d)
    rows: dict[int, list[str]] = {}
    for key in order:
        rows.setdefault(layer[key], []).append(key)
    out: dict[str, tuple[int, float]] = {}
    for lay, keys in rows.items():
        for i, key in enumerate(keys):
            out[key] = (lay, i - (len(keys) - 1) / 2)
    return out


def _normalize(pos: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9) / 2
    return {k: ((x - cx) / span, (y - cy) / span) for k, (x, y) in pos.items()}


def _sorted_nodes(nodes: Sequence[StateNode]) -> list[StateNode]:
    return sorted(nodes, key=lambda n: n.first_seen or datetime.min.replace(tzinfo=timezone.utc))  # stable: ties keep order


def from_records(name: str, nodes: Iterable[StateNode], edges: Iterable[StateEdge], **kw: Any) -> StateGraph:
    """A graph from stored nodes and edges (nodes by first sighting, so identification order is stable)."""
    g = StateGraph(name, **kw)
    for n in _sorted_nodes(list(nodes)):
        g.put_node(n)
    for e in edges:
        g.put_edge(e)
    return g
