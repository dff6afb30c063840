"""The state graph of a flow, growing live (P4): states as boxes, actions as arrows coloured by verdict.

Fed by :class:`core.engine.events.StateGraphChanged` (and ``FlowStarted``,
which loads the flow's stored graph, so a new run grows the graph earlier
runs left) or loaded from the store directly (:meth:`StateGraphView.load_stored`).
Nothing here decides anything: nodes and edges are the engine's records,
the positions come from :func:`core.state.graph.stable_layout` (networkx,
fixed seed, known nodes keep their place when the graph grows).

What the picture says:

* a box per state: title, path and ``xN`` visits; the current state has a
  thick accent border; a state reached more than once (a revisit) is violet;
* an arrow per distinct action, labelled ``kind target`` (``x3`` when taken
  three times), thicker the more it was taken, coloured by its last verdict
  (:data:`VERDICT_COLORS`); a self-loop (an action that left the state as it
  was, e.g. typing into a field) is a small loop above its box;
* an arrow on a loop (it can lead back to where it started) is dashed;
* the header counts states, actions (and how many left the state as it
  was), revisited states and arrows on a loop.

Clicking a box shows that state's stored screenshot and its details on the
right (:attr:`StateGraphView.state_selected` carries the node key).
"""
from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QImage, QMouseEvent, QPainter, QPainterPath, QPen, QPixmap, QPolygonF, \
    QResizeEvent, QShowEvent, QWheelEvent
from PySide6.QtWidgets import (
    QComboBox, QGraphicsItem, QGraphicsPathItem, QGraphicsRectItem, QGraphicsScene, QGraphicsSimpleTextItem,
    QGraphicsView, QHBoxLayout, QLabel, QSizePolicy, QSplitter, QVBoxLayout, QWidget,
)

from core.progress import counted
from core.engine.events import FlowStarted, StateGraphChanged
from core.state.graph import StateEdge, StateGraph, StateNode, flow_graph_name, layered_layout, stable_layout
from core.store import GraphTable, Store

from ..coalesce import ImageLoader
from ..offthread import OffThreadReads, ReadsOffThread
from ..theme import COLORS, TAKEOVER_COLOR

__all__ = ["VERDICT_COLORS", "StateGraphView", "GraphCanvas", "NODE_W", "NODE_H"]

#: Verdict kind (S5) -> arrow colour: as expected green, changed unexpectedly amber, unchanged grey, failed red.
VERDICT_COLORS = {
    "as_expected": "#3fb96b",
    "changed_unexpectedly": "#f5a524",
    "unchanged": "#9aa0aa",
    "failed": "#f0524f",
    "": "#7d838d",
}
#: Box size of a state in scene px.
NODE_W, NODE_H = 168.0, 50.0
#: Distance between layers / rows of the layered layout, scene px (room for an edge label between boxes).
LAYER_GAP, ROW_GAP, BAND_GAP = NODE_W + 124.0, NODE_H + 52.0, 64.0
#: Smallest zoom the canvas fits to (below it labels are unreadable): larger graphs scroll, centred on the current state.
MIN_FIT_SCALE = 0.8
#: Longest edge label, chars (fits between two layers).
LABEL_CHARS = 26
#: Layout modes offered: layered (BFS layers from the first state, left to right) or force-directed.
LAYOUTS = ("layered", "force")
_REVISIT_FILL = "#3b3350"
_FILL = "#2b303a"


def _elide(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _path_of(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"


class _NodeItem(QGraphicsRectItem):
    """One state's box (selectable; a click selects the state)."""

    def __init__(self, node: StateNode, number: int, current: bool, selected: bool) -> None:
        super().__init__(-NODE_W / 2, -NODE_H / 2, NODE_W, NODE_H)
        self.key = node.key
        self.setBrush(QBrush(QColor(_REVISIT_FILL if node.revisited else _FILL)))
        border = QColor(COLORS["accent"]) if current else QColor("#ffffff" if selected else COLORS["border"])
        self.setPen(QPen(border, 3.5 if current else (2.0 if selected else 1.2)))
        self.setZValue(2)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAcceptHoverEvents(True)
        # each text cut to its own room in the box (by width, not characters): the title to the box, the path
        # line to what the visit badge leaves; none runs into another or out of the box
        room = NODE_W - 16
        f = QFont()
        f.setPointSizeF(9.5)
        f.setBold(True)
        title_text = node.title.split(" \u2013 ")[0] or _path_of(node.url)
        title = QGraphicsSimpleTextItem(QFontMetricsF(f).elidedText(title_text, Qt.TextElideMode.ElideRight, room),
                                        self)
        title.setFont(f)
        title.setBrush(QColor(COLORS["text"]))
        title.setPos(-NODE_W / 2 + 8, -NODE_H / 2 + 5)
        f2 = QFont()
        f2.setPointSizeF(8.0)
        badge = QGraphicsSimpleTextItem(f"x{node.visits}", self)
        badge.setFont(f2)
        badge.setBrush(QColor(TAKEOVER_COLOR if node.revisited else COLORS["muted"]))
        badge_w = badge.boundingRect().width()
        badge.setPos(NODE_W / 2 - 8 - badge_w, -NODE_H / 2 + 26)
        sub = QGraphicsSimpleTextItem(QFontMetricsF(f2).elidedText(
            f"S{number} \u00b7 {_path_of(node.url)}", Qt.TextElideMode.ElideMiddle, room - badge_w - 8), self)
        sub.setFont(f2)
        sub.setBrush(QColor(COLORS["muted"]))
        sub.setPos(-NODE_W / 2 + 8, -NODE_H / 2 + 26)
        self.texts = (title, sub, badge)
        self.setToolTip(f"S{number}: {node.title}\n{node.url}\nvisits: {node.visits} in {counted(node.runs, 'run')}"
                        + ("  (revisited)" if node.revisited else ""))


def _border_point(center: QPointF, toward: QPointF) -> QPointF:
    """Where the segment from ``center`` to ``toward`` leaves the node box."""
    dx, dy = toward.x() - center.x(), toward.y() - center.y()
    if dx == 0 and dy == 0:
        return center
    sx = (NODE_W / 2 + 3) / abs(dx) if dx else math.inf
    sy = (NODE_H / 2 + 3) / abs(dy) if dy else math.inf
    s = min(sx, sy, 1.0)
    return QPointF(center.x() + dx * s, center.y() + dy * s)


def _crosses(a: QPointF, b: QPointF, centers: list[tuple[float, float]]) -> bool:
    """True when the segment a-b passes through a node box centred at one of ``centers`` (Liang-Barsky clipping)."""
    ax, ay, dx, dy = a.x(), a.y(), b.x() - a.x(), b.y() - a.y()
    hw, hh = NODE_W / 2 + 4, NODE_H / 2 + 4
    for cx, cy in centers:
        t0, t1 = 0.0, 1.0
        for p, q in ((-dx, ax - (cx - hw)), (dx, (cx + hw) - ax), (-dy, ay - (cy - hh)), (dy, (cy + hh) - ay)):
            if p == 0:
                if q < 0:
                    break
                continue
            r = q / p
            if p < 0:
                t0 = max(t0, r)
            else:
                t1 = min(t1, r)
            if t0 > t1:
                break
        else:
            if t0 <= t1:
                return True
    return False


def _arrow_head(tip: QPointF, frm: QPointF, size: float = 9.0) -> QPolygonF:
    ang = math.atan2(tip.y() - frm.y(), tip.x() - frm.x())
    left = QPointF(tip.x() - size * math.cos(ang - 0.42), tip.y() - size * math.sin(ang - 0.42))
    right = QPointF(tip.x() - size * math.cos(ang + 0.42), tip.y() - size * math.sin(ang + 0.42))
    return QPolygonF([tip, left, right])


class GraphCanvas(QGraphicsView):
    """The scene of boxes and arrows; emits :attr:`node_clicked` with a node key."""

    node_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setBackgroundBrush(QColor(COLORS["canvas"]))
        self.setObjectName("stateGraphCanvas")
        self.setMinimumSize(240, 160)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.focus_key = ""
        self._zoomed = False
        self.node_items: dict[str, _NodeItem] = {}
        self._taken: list[QRectF] = []
        self._loop_keys: set[tuple[str, str, str]] = set()
        self.edge_labels: dict[tuple[str, str, str], QGraphicsSimpleTextItem] = {}

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        item = self.itemAt(event.position().toPoint())
        while item is not None and not isinstance(item, _NodeItem):
            item = item.parentItem()
        if isinstance(item, _NodeItem):
            self.node_clicked.emit(item.key)
        super().mousePressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if not self._zoomed:
            self.fit()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt API
        """Zoom (the wheel) around the pointer; the graph is panned by dragging."""
        factor = 1.15 if event.angleDelta().y() > 0 else 1 / 1.15
        if 0.15 < self.transform().m11() * factor < 4.0:
            self.scale(factor, factor)
            self._zoomed = True

    def fit(self) -> None:
        """Fit the whole graph, but not below :data:`MIN_FIT_SCALE`; then keep the focused state in view."""
        rect = self.scene().itemsBoundingRect().adjusted(-20, -20, 20, 20)
        if rect.isNull():
            return
        self.scene().setSceneRect(rect)
        vw, vh = max(self.viewport().width(), 1), max(self.viewport().height(), 1)
        s = min(vw / rect.width(), vh / rect.height(), 1.6)
        s = max(s, MIN_FIT_SCALE)
        self.resetTransform()
        self.scale(s, s)
        self._zoomed = False
        if self.focus_key in self.node_items:
            self.centerOn(self.node_items[self.focus_key])
        else:
            self.centerOn(rect.center())

    def node_center(self, key: str) -> QPointF:
        """Centre of a node's box in view (widget) coordinates, for clicks in tests."""
        return QPointF(self.mapFromScene(self.node_items[key].scenePos()))

    def draw(self, graph: StateGraph, centers: dict[str, QPointF], *, current: str, selected: str) -> None:
        """Draw ``graph`` with node centres in scene px."""
        scene = self.scene()
        scene.clear()
        self.node_items.clear()
        self.edge_labels.clear()
        self.focus_key = selected or current
        self._loop_keys = {(e.source, e.target, e.key) for e in graph.loop_edges()}
        self._taken = [QRectF(c.x() - NODE_W / 2, c.y() - NODE_H / 2, NODE_W, NODE_H) for c in centers.values()]
        # parallel edges between one pair fan out; a pair's two directions bend to opposite sides
        groups: dict[tuple[str, str], list[StateEdge]] = {}
        for e in graph.edges():
            groups.setdefault((e.source, e.target), []).append(e)
        for (src, dst), edges in groups.items():
            if src not in centers or dst not in centers:
                continue
            for i, e in enumerate(edges):
                if src == dst:
                    self._self_loop(centers[src], e, i, len(edges))
                else:
                    reverse = (dst, src) in groups
                    a, b = centers[src], centers[dst]
                    dist = math.hypot(b.x() - a.x(), b.y() - a.y())
                    # an arrow whose straight line would cross another box (a return, a shortcut) arcs around it
                    others = [(c.x(), c.y()) for k, c in centers.items() if k not in (src, dst)]
                    far = 40.0 + 0.2 * dist if _crosses(a, b, others) else 0.0
                    bend = 26.0 * (i - (len(edges) - 1) / 2) + (22.0 if reverse else 0.0) + far
                    self._edge(a, b, e, bend)
        for number, node in enumerate(graph.nodes(), 1):
            if node.key not in centers:
                continue
            item = _NodeItem(node, number, node.key == current, node.key == selected)
            item.setPos(centers[node.key])
            scene.addItem(item)
            self.node_items[node.key] = item
        self.fit()

    def _pen(self, e: StateEdge) -> QPen:
        pen = QPen(QColor(VERDICT_COLORS.get(e.last_verdict, VERDICT_COLORS[""])), 1.4 + 0.6 * min(e.count, 5))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        if (e.source, e.target, e.key) in self._loop_keys:
            pen.setStyle(Qt.PenStyle.DashLine)
        return pen

    def _label(self, e: StateEdge, at: QPointF, room: float = 1e9) -> None:
        """The edge's label centred at ``at``, cut to fit ``room`` scene px (the whole label in the tooltip)."""
        text = QGraphicsSimpleTextItem(_elide(e.label, max(10, min(LABEL_CHARS, int(room / 5.6)))))
        f = QFont()
        f.setPointSizeF(8.0)
        text.setFont(f)
        text.setBrush(QColor(VERDICT_COLORS.get(e.last_verdict, COLORS["text"])))
        r = text.boundingRect()
        bg = QGraphicsRectItem(QRectF(-3, -1, r.width() + 6, r.height() + 2))
        bg.setBrush(QColor(20, 21, 24, 215))
        bg.setPen(QPen(Qt.PenStyle.NoPen))
        # move off boxes and other labels: try above and below the line, up to 6 label heights away
        x, y = at.x() - r.width() / 2, at.y() - r.height() / 2
        for dy in (0.0, -1.0, 1.0, -2.0, 2.0, -3.0, 3.0, -4.0, 4.0, -5.0, 5.0, -6.0, 6.0):
            box = QRectF(x - 3, y + dy * (r.height() + 3) - 1, r.width() + 6, r.height() + 2)
            if not any(box.intersects(t) for t in self._taken):
                y += dy * (r.height() + 3)
                break
        self._taken.append(QRectF(x - 3, y - 1, r.width() + 6, r.height() + 2))
        bg.setPos(x, y)
        bg.setZValue(3)
        text.setParentItem(bg)
        tip = (f"{e.kind} {e.target_summary}\nstep {e.step_id} \u2014 taken {e.count}x\n"
               + ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in sorted(e.verdicts.items())))
        bg.setToolTip(tip)
        self.scene().addItem(bg)
        self.edge_labels[(e.source, e.target, e.key)] = text

    def _edge(self, a: QPointF, b: QPointF, e: StateEdge, bend: float) -> None:
        mid = QPointF((a.x() + b.x()) / 2, (a.y() + b.y()) / 2)
        dx, dy = b.x() - a.x(), b.y() - a.y()
        length = math.hypot(dx, dy) or 1.0
        ctrl = QPointF(mid.x() - dy / length * bend * 2, mid.y() + dx / length * bend * 2)
        start, end = _border_point(a, ctrl), _border_point(b, ctrl)
        path = QPainterPath(start)
        path.quadTo(ctrl, end)
        item = QGraphicsPathItem(path)
        item.setPen(self._pen(e))
        item.setZValue(1)
        self.scene().addItem(item)
        head = self.scene().addPolygon(_arrow_head(end, ctrl), QPen(Qt.PenStyle.NoPen), QBrush(self._pen(e).color()))
        head.setZValue(1)
        room = abs(b.x() - a.x()) - NODE_W - 12 if abs(b.x() - a.x()) > abs(b.y() - a.y()) else LAYER_GAP - 24
        self._label(e, path.pointAtPercent(0.5), room)

    def _self_loop(self, c: QPointF, e: StateEdge, i: int, k: int) -> None:
        """Self-loop ``i`` of ``k`` on the node at ``c``: nested loops out of the box's left side, labels stacked."""
        left = QPointF(c.x() - NODE_W / 2, c.y())
        w = 34.0 + 20.0 * i
        spread = 12.0 + 5.0 * i
        path = QPainterPath(QPointF(left.x(), c.y() - 8))
        path.cubicTo(QPointF(left.x() - w, c.y() - spread - 14), QPointF(left.x() - w, c.y() + spread + 14),
                     QPointF(left.x(), c.y() + 8))
        item = QGraphicsPathItem(path)
        item.setPen(self._pen(e))
        item.setZValue(1)
        self.scene().addItem(item)
        end = QPointF(left.x() - 1, c.y() + 8)
        head = self.scene().addPolygon(_arrow_head(end, QPointF(left.x() - w * 0.5, c.y() + spread + 8)),
                                       QPen(Qt.PenStyle.NoPen), QBrush(self._pen(e).color()))
        head.setZValue(1)
        text_w = QGraphicsSimpleTextItem(_elide(e.label, LABEL_CHARS)).boundingRect().width() * 0.8
        self._label(e, QPointF(left.x() - 34.0 - 20.0 * (k - 1) - 8 - text_w / 2,
                               c.y() + 15.0 * (i - (k - 1) / 2)))


class _Screenshot(QLabel):
    """A state's screenshot, scaled to the label whenever the label is resized."""

    def __init__(self) -> None:
        super().__init__()
        self.image = QImage()

    def set_image(self, image: QImage, empty_text: str) -> None:
        self.image = image
        self._empty = empty_text
        self._render()

    def _render(self) -> None:
        if self.image.isNull():
            self.setPixmap(QPixmap())
            self.setText(getattr(self, "_empty", ""))
            return
        self.setText("")
        self.setPixmap(QPixmap.fromImage(self.image).scaled(
            max(self.width(), 200), max(self.height(), 130), Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._render()


class StateGraphView(ReadsOffThread, QWidget):
    """The state graph dock: header, canvas, and the selected state's screenshot and details.

    Parameters
    ----------
    media_root : Path | None
        The store's media folder (``<project>/.steadyhand``): stored graphs are
        read from its ``store.sqlite``, screenshot paths are relative to it.
    """

    state_selected = Signal(str)
    _read_done = Signal(object)

    def __init__(self, media_root: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stateGraphView")
        self.media_root = Path(media_root) if media_root is not None else None
        self.graph = StateGraph()
        self.current = ""
        self.selected = ""
        self._pos: dict[str, tuple[float, float]] = {}
        self._dirty = False
        self._shot_dirty = False
        self._loading: str | None = None  # the stored graph being read off the GUI thread
        self._held: list[StateGraphChanged] = []
        self._reads = OffThreadReads("studio-graph-read", self._read_done.emit)
        self._read_done.connect(self._on_read, Qt.ConnectionType.QueuedConnection)
        self.layout_mode = "layered"
        self.layout_box = QComboBox()
        self.layout_box.setObjectName("stateGraphLayout")
        self.layout_box.addItem("Layered (steps left to right)", "layered")
        self.layout_box.addItem("Force-directed (kamada-kawai)", "force")
        self.layout_box.currentIndexChanged.connect(lambda _i: self.set_layout(self.layout_box.currentData()))
        self.fit_button = QLabel("<a href='fit'>Fit</a>")
        self.fit_button.setToolTip("Fit the graph to the view (drag to pan, wheel to zoom)")
        self.fit_button.linkActivated.connect(lambda _l: self.canvas.fit())
        self.header = QLabel()
        self.header.setObjectName("stateGraphHeader")
        self.header.setWordWrap(True)
        self.canvas = GraphCanvas()
        self.canvas.node_clicked.connect(self.select_state)
        self.shot = _Screenshot()
        #: Reads the selected state's stored screenshot off the GUI thread.
        self.images = ImageLoader(self)
        self.images.loaded.connect(self._on_image_loaded)
        self.shot.setObjectName("stateScreenshot")
        self.shot.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.shot.setMinimumSize(200, 130)
        self.shot.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)  # the pixmap never widens it
        self.shot.setStyleSheet(f"background: {COLORS['canvas']}; color: {COLORS['muted']};")
        self.details = QLabel()
        self.details.setObjectName("stateDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        side = QWidget()
        sl = QVBoxLayout(side)
        sl.setContentsMargins(6, 0, 0, 0)
        sl.addWidget(self.shot, 3)
        sl.addWidget(self.details, 2)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.canvas)
        self.splitter.addWidget(side)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([620, 380])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        #: Every graph the store holds (a flow's, an exploration's): choosing one shows it.
        self.graph_box = QComboBox()
        self.graph_box.setObjectName("stateGraphChooser")
        self.graph_box.setToolTip("Stored graphs: flow:<name> grows with its runs, explore:<start> with steadyhand explore")
        self.graph_box.activated.connect(lambda _i: self.load_stored(self.graph_box.currentData() or ""))
        top.addWidget(self.graph_box)
        top.addWidget(self.fit_button)
        top.addWidget(self.layout_box)
        lay.addLayout(top)
        lay.addWidget(self.splitter, 1)
        self._redraw()
        self._show_selected()

    # -- feeding ---------------------------------------------------------------------------

    def apply(self, event: object) -> None:
        """Follow the engine: a flow's start loads its stored graph; each step's change grows it."""
        if isinstance(event, FlowStarted):
            self.load_later(flow_graph_name(event.flow))
        elif isinstance(event, StateGraphChanged):
            if self._loading is not None:
                self._held.append(event)  # applied over the stored graph once it is read
                return
            if event.graph != self.graph.name:
                self.load_stored(event.graph)
            self.graph.put_node(event.source)
            self.graph.put_node(event.target)
            self.graph.put_edge(event.edge)
            self.current = event.target.key
            self._redraw()
            if self.selected in (event.source.key, event.target.key) or not self.selected:
                self._show_selected()

    def load_stored(self, name: str) -> StateGraph:
        """Show graph ``name`` as the store holds it (an empty graph without a store or rows), read now."""
        return self._show_read(self._read(name))

    def load_later(self, name: str) -> None:
        """Show graph ``name`` as the store holds it, read on a worker thread (a flow starts: the GUI thread
        never waits for the store); the run's changes that come meanwhile are applied over it once it is read."""
        self._loading, self._held = name, []
        self._reads.start(self._read_named, name)

    def _read(self, name: str) -> tuple[StateGraph, list[str] | None, str]:
        """(the stored graph, the store's graph names or None, an error text): any thread."""
        db = self.media_root / "store.sqlite" if self.media_root is not None else None
        if db is None or not db.is_file():
            return StateGraph(name), None, ""
        try:
            with Store.open(db, read_only=True) as store:
                table = GraphTable(store)
                return table.load_state_graph(name), table.names(), ""
        except Exception as exc:  # noqa: BLE001 - a store of another version: say so, show nothing
            return StateGraph(name), None, f"Could not read the state graph {name!r} from {db}: {exc}"

    def _read_named(self, name: str) -> tuple[str, tuple[StateGraph, list[str] | None, str]]:
        return name, self._read(name)

    def _on_read(self, item: tuple[str, tuple[StateGraph, list[str] | None, str]]) -> None:
        name, result = item
        if name != self._loading:
            return  # another flow started meanwhile: its own read follows
        held, self._loading, self._held = self._held, None, []
        self._show_read(result)
        self.current = ""
        self._redraw()
        for event in held:
            self.apply(event)

    def _show_read(self, result: tuple[StateGraph, list[str] | None, str]) -> StateGraph:
        graph, names, error = result
        if names is not None:
            self._list_graphs(names, graph.name)
        if error:
            self.header.setText(error)
        self.set_graph(graph)
        return graph

    def _list_graphs(self, names: list[str], shown: str) -> None:
        self.graph_box.blockSignals(True)
        self.graph_box.clear()
        for n in dict.fromkeys([*names, shown] if shown else names):
            self.graph_box.addItem(n, n)
        self.graph_box.setCurrentIndex(max(0, self.graph_box.findData(shown)))
        self.graph_box.setVisible(self.graph_box.count() > 1)
        self.graph_box.blockSignals(False)

    def set_graph(self, graph: StateGraph, current: str = "") -> None:
        """Show ``graph`` (positions computed afresh)."""
        self.graph = graph
        self.current = current
        self._pos = {}
        if self.selected not in graph:
            self.selected = ""
        self._redraw()
        self._show_selected()

    # -- selection -------------------------------------------------------------------------

    def select_state(self, key: str) -> None:
        """Select a state: outline it and show its screenshot and details."""
        if key not in self.graph:
            return
        self.selected = key
        self._redraw()
        self._show_selected()
        self.state_selected.emit(key)

    def screenshot_path(self, key: str) -> Path | None:
        """Absolute path of a state's stored screenshot, None when there is none."""
        node = self.graph.node(key) if key in self.graph else None
        if node is None or not node.screenshot or self.media_root is None:
            return None
        p = Path(self.media_root, *node.screenshot.split("/"))
        return p if p.is_file() else None

    def _on_image_loaded(self, key: object) -> None:
        shown = self.selected or self.current
        path = self.screenshot_path(shown) if shown else None
        if path is not None and key == str(path):
            self._show_selected()

    def _show_selected(self) -> None:
        if not self.isVisible() and self.parent() is not None:
            self._shot_dirty = True  # a hidden dock: shown (and its screenshot read) when it is shown
            return
        self._shot_dirty = False
        key = self.selected or self.current
        if not key or key not in self.graph:
            self.shot.set_image(QImage(), "Click a state to see its screenshot")
            self.details.setText("")
            return
        node = self.graph.node(key)
        path = self.screenshot_path(key)
        image = self.images.get(str(path), path) if path is not None else QImage()
        self.shot.set_image(image if image is not None else QImage(),
                            "No screenshot stored for this state" if image is not None else "Loading\u2026")
        out_edges = [e for e in self.graph.edges() if e.source == key]
        when = node.last_seen.strftime("%Y-%m-%d %H:%M:%S UTC") if node.last_seen else "?"
        number = next(i for i, n in enumerate(self.graph.nodes(), 1) if n.key == key)
        lines = [f"<b>S{number} \u00b7 {_html(node.title or _path_of(node.url))}</b>", _html(node.url),
                 f"visits: {node.visits} in {node.runs} run{'s' * (node.runs != 1)}"
                 f"{' (revisited)' if node.revisited else ''} \u00b7 last seen {when}",
                 f"state {node.key[:12]}" + (" \u00b7 <b>current</b>" if key == self.current else "")]
        if out_edges:
            lines.append("actions from here: " + "; ".join(_html(e.label) for e in out_edges[:6]))
        self.details.setText("<br>".join(lines))

    # -- drawing ---------------------------------------------------------------------------

    def set_layout(self, mode: str) -> None:
        """``"layered"`` (default) or ``"force"`` (kamada-kawai, fixed seed, known nodes kept in place)."""
        if mode not in LAYOUTS:
            raise ValueError(f"unknown layout {mode!r}; expected one of {', '.join(LAYOUTS)}")
        self.layout_mode = mode
        self._pos = {}
        self._redraw()

    def centers(self) -> dict[str, QPointF]:
        """Node centres in scene px for the current layout mode."""
        if self.layout_mode == "layered":
            return self._snake(layered_layout(self.graph))
        self._pos = stable_layout(self.graph, self._pos)
        spread = max(260.0, 150.0 * math.sqrt(max(len(self.graph), 1)))
        return {k: QPointF(x * spread, y * spread * 0.72) for k, (x, y) in self._pos.items()}

    def _snake(self, grid: dict[str, tuple[int, float]]) -> dict[str, QPointF]:
        """Layers left to right, wrapped into bands (every other band right to left) to fit the view's shape."""
        if not grid:
            return {}
        layers = max(lay for lay, _ in grid.values()) + 1
        rows = max(sum(1 for lay2, _ in grid.values() if lay2 == lay) for lay in range(layers))
        band_h = rows * ROW_GAP + BAND_GAP
        vw, vh = max(self.canvas.viewport().width(), 320), max(self.canvas.viewport().height(), 200)
        target = vw / vh
        per_band = min(range(1, layers + 1),
                       key=lambda k: abs(math.log((k * LAYER_GAP) / (math.ceil(layers / k) * band_h) / target)))
        self._per_band = per_band
        out: dict[str, QPointF] = {}
        for key, (lay, row) in grid.items():
            band, col = divmod(lay, per_band)
            if band % 2:
                col = per_band - 1 - col
            out[key] = QPointF(col * LAYER_GAP, band * band_h + row * ROW_GAP)
        return out

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if self.layout_mode == "layered" and len(self.graph):
            grid = layered_layout(self.graph)
            old = getattr(self, "_per_band", 0)
            self._snake(grid)
            if self._per_band != old:
                self._redraw()
        self._show_selected()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self._dirty:
            self._redraw()
        if self._shot_dirty:
            self._show_selected()

    def _redraw(self) -> None:
        # a hidden dock (another tab in front) only notes the change: it is drawn when shown
        self._dirty = not self.isVisible() and self.parent() is not None
        if self._dirty:
            self._update_header()
            return
        self.canvas.draw(self.graph, self.centers(), current=self.current, selected=self.selected)
        self._update_header()

    def _update_header(self) -> None:
        n, e = len(self.graph), len(self.graph.edges())
        if n == 0:
            name = self.graph.name.split(":", 1)[-1] if self.graph.name else ""
            self.header.setText(f"No states yet{' for ' + name if name else ''} \u2014 run a flow (F5): each step "
                                f"adds the states it went through and the action between them.")
            return
        back = len(self.graph.loop_edges())
        selfs = len(self.graph.self_loops())
        revisits = len(self.graph.revisited())
        self.header.setText(
            f"<b>{_html(self.graph.name)}</b> \u2014 {n} state{'s' * (n != 1)}, {e} action{'s' * (e != 1)} "
            f"({selfs} left the state as it was), {revisits} revisited, {back} on a loop (dashed) "
            f"\u00b7 "
            + " ".join(f"<span style='color:{c}'>\u25a0</span> {k.replace('_', ' ')}"
                       for k, c in VERDICT_COLORS.items() if k))

    def node_item(self, key: str) -> QGraphicsItem:
        return self.canvas.node_items[key]


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


