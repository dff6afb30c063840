"""Steps of the current flow: a table model fed with engine events, and its details pane."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

from PySide6.QtCore import (
    QAbstractTableModel, QItemSelectionModel, QModelIndex, QPersistentModelIndex, Qt, Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QSplitter, QTableView,
    QTextBrowser, QVBoxLayout, QWidget,
)

from core.domain import ScoredCandidate
from core.engine.events import (
    PHASES, ActionPerformed, EngineEvent, EscalationRaised, FlowFinished, FlowStarted, HandedBack, Paused,
    PhaseChanged, Resumed, StateNoted, StepFinished, StepStarted, TakeoverStarted, TargetResolved, VerdictReached,
)

from ..coalesce import Deferred
from ..plain_words import plain_words, strategy_short
from ..step_record import strategy_words
from ..theme import COLORS, STATUS_COLORS, STATUS_TIPS, TAKEOVER_COLOR, status_color, status_label

__all__ = ["StepRow", "StepsModel", "StepsTable", "StepDetails", "StepsPanel", "step_details_html"]

_Index = QModelIndex | QPersistentModelIndex
_HEALED = QColor("#f5a524")


@dataclass(slots=True)
class StepRow:
    """What the studio shows of one step (a view model: mutable, GUI thread only).

    ``status`` is pending / running / passed / failed / escalated / skipped /
    stopped / error / manual (done by hand during a takeover) - see
    ``core.domain.StepOutcome``; ``phase`` the phase it is in
    (``core.engine.events.PHASES``) while running, or ``"taken over"``.
    ``strategy`` is the winning locator strategy, ``"abstained"``, or ``""``
    before resolution (and for targetless steps).  ``ms`` is the step's active
    time in ms (time paused or waiting for a human left out); ``paused`` is
    True while the run waits at this running step; ``phase_ms`` its last attempt's time per phase (ms, in phase
    order); ``score`` / ``margin`` are 0..1; ``source`` the decider that chose
    the step's action.
    """

    index: int
    title: str
    status: str = "pending"
    phase: str = ""
    attempt: int = 0
    strategy: str = ""
    score: float | None = None
    margin: float | None = None
    resolution_reason: str = ""
    top: tuple[ScoredCandidate, ...] = ()
    target_label: str = ""
    action: str = ""
    action_error: str = ""
    verdict: str = ""
    verdict_expected: str = ""
    verdict_observed: tuple[str, ...] = ()
    verdict_reason: str = ""
    ms: float | None = None
    healed: bool = False
    error: str = ""
    escalation: str = ""
    phase_ms: tuple[tuple[str, float], ...] = ()
    source: str = ""
    paused: bool = False
    #: The state module's notes (S2, S3): ``(moment, belief summary, evidence, key point)`` before / after
    #: the action, and the ring buffer's last states as lines.
    states: tuple[tuple[str, str, tuple[str, ...], str], ...] = ()
    recent_states: tuple[str, ...] = ()


class StepsModel(QAbstractTableModel):
    """Rows of the steps of each flow seen; shows one flow at a time.

    Feed it with :meth:`apply` (every engine event; irrelevant ones are
    ignored).  ``FlowStarted`` resets that flow's rows and, when
    :attr:`follow` is on, shows it.

    Signals
    -------
    flows_changed()
        A flow was added.
    current_flow_changed(str)
        Another flow is shown.
    """

    COLUMNS = ("#", "Step", "Status", "Strategy", "Score", "Verdict", "ms")
    COL_INDEX, COL_TITLE, COL_STATUS, COL_STRATEGY, COL_SCORE, COL_VERDICT, COL_MS = range(7)
    #: Role returning the :class:`StepRow` of a row.
    RowRole = Qt.ItemDataRole.UserRole + 1

    flows_changed = Signal()
    current_flow_changed = Signal(str)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._flows: dict[str, list[StepRow]] = {}
        self._current = ""
        self.follow = True
        self._icons: dict[str, QIcon] = {}

    # --- flows ----------------------------------------------------------------------------

    @property
    def current_flow(self) -> str:
        return self._current

    def flow_names(self) -> list[str]:
        return list(self._flows)

    def rows(self, flow: str | None = None) -> list[StepRow]:
        """Rows of ``flow`` (default: the shown one)."""
        return list(self._flows.get(self._current if flow is None else flow, []))

    def row(self, i: int) -> StepRow:
        return self._flows[self._current][i]

    def set_flow(self, flow: str, titles: Sequence[str], *, reset: bool = False) -> None:
        """Define the steps of ``flow`` as pending rows (kept when known, unless ``reset``)."""
        if flow in self._flows and not reset:
            return
        is_new = flow not in self._flows
        shown = flow == self._current
        if shown:
            self.beginResetModel()
        self._flows[flow] = [StepRow(i, t) for i, t in enumerate(titles)]
        if shown:
            self.endResetModel()
        if is_new:
            self.flows_changed.emit()

    def update_titles(self, flow: str, titles: Sequence[str]) -> int:
        """The flow's file changed on disk: its steps become ``titles``, and every step that is still there
        (same title, in order) keeps the result it had; only new or renamed steps are pending.  Returns how
        many results were kept.  A flow not shown yet is defined as pending rows."""
        import difflib  # noqa: PLC0415

        old = self._flows.get(flow)
        if old is None:
            self.set_flow(flow, titles)
            return 0
        rows = [StepRow(i, t) for i, t in enumerate(titles)]
        kept = 0
        matcher = difflib.SequenceMatcher(a=[r.title for r in old], b=list(titles), autojunk=False)
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                row = replace(old[block.a + k], index=block.b + k)
                rows[block.b + k] = row
                kept += row.status != "pending"
        shown = flow == self._current
        if shown:
            self.beginResetModel()
        self._flows[flow] = rows
        if shown:
            self.endResetModel()
        return kept

    def show_flow(self, flow: str) -> None:
        """Show the rows of ``flow`` (an unknown flow shows no rows)."""
        if flow == self._current:
            return
        self.beginResetModel()
        self._current = flow
        self.endResetModel()
        self.current_flow_changed.emit(flow)

    def clear(self) -> None:
        self.beginResetModel()
        self._flows.clear()
        self._current = ""
        self.endResetModel()
        self.flows_changed.emit()
        self.current_flow_changed.emit("")

    # --- events ---------------------------------------------------------------------------

    def apply(self, event: EngineEvent) -> None:
        """Update rows from an engine event (GUI thread)."""
        if isinstance(event, FlowStarted):
            self.set_flow(event.flow, event.step_titles, reset=True)
            if self.follow:
                self.show_flow(event.flow)
            return
        if isinstance(event, FlowFinished):
            self._apply_result(event)
            return
        if isinstance(event, HandedBack):
            self._takeover_row(event)  # HandedBack names the step it continues from, not the taken one
            return
        if isinstance(event, Resumed):
            self._unpause()
            return
        flow = getattr(event, "flow", None)
        index = getattr(event, "index", None)
        if flow is None or index is None:
            return
        row = self._row_for(flow, index, getattr(event, "title", "") or getattr(event, "step_title", ""))
        if row is None:
            return
        if isinstance(event, Paused):
            if row.status == "running":
                row.paused = True  # the run waits here: the step reads "paused", not "running"
        elif isinstance(event, StepStarted):
            row.status, row.attempt, row.phase, row.paused = "running", event.attempt, "", False
            if event.title:
                row.title = event.title
        elif isinstance(event, PhaseChanged):
            row.phase = event.phase
        elif isinstance(event, TargetResolved):
            res = event.resolution
            row.strategy = "abstained" if res.abstained else (res.strategy or "")
            row.score, row.margin = res.score, res.margin
            row.resolution_reason, row.top = res.reason, res.top
            row.healed = res.healed
            row.target_label = event.candidate.descriptor.label_text if event.candidate else ""
        elif isinstance(event, ActionPerformed):
            row.action, row.action_error = event.kind, event.error
        elif isinstance(event, VerdictReached):
            v = event.verdict
            row.verdict, row.verdict_expected = v.kind, v.expected
            row.verdict_observed, row.verdict_reason = v.observed, v.reason
        elif isinstance(event, StepFinished):
            row.status, row.ms, row.phase, row.paused = event.status, event.ms, "", False
            row.healed = row.healed or event.healed
            row.error = event.error or row.error
            row.phase_ms, row.source = tuple(event.phase_ms), event.source
        elif isinstance(event, EscalationRaised):
            row.status, row.escalation = "escalated", event.reason
        elif isinstance(event, TakeoverStarted):
            row.status, row.phase = "running", "taken over"
        elif isinstance(event, StateNoted):
            b = event.belief
            note = (event.moment, f"{b.state} ({b.confidence:.2f})", b.evidence, event.key_point)
            row.states = tuple(s for s in row.states if s[0] != event.moment) + (note,)
            row.recent_states = event.recent
        elif isinstance(event, Paused) and row.status == "running" and row.phase != "taken over":
            row.phase = "paused"  # until the next phase starts
        else:
            return
        self._row_changed(flow, index)

    def _unpause(self) -> None:
        for flow, rows in self._flows.items():
            for i, row in enumerate(rows):
                if row.paused:
                    row.paused = False
                    self._row_changed(flow, i)

    def _takeover_row(self, event: HandedBack) -> None:
        for i, row in enumerate(self._flows.get(event.flow, ())):
            if row.phase == "taken over":
                row.phase = ""
                self._row_changed(event.flow, i)

    def _apply_result(self, event: FlowFinished) -> None:
        result = event.result
        rows = self._flows.get(result.flow)
        if rows is None:
            return
        for out in result.steps:
            if 0 <= out.index < len(rows):
                row = rows[out.index]
                row.status, row.ms = out.status, out.ms
                row.error = out.error or row.error
        for row in rows:
            if row.status == "running":
                row.status, row.phase = "stopped", ""
        if result.flow == self._current and rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(rows) - 1, len(self.COLUMNS) - 1))

    def _row_for(self, flow: str, index: int, title: str) -> StepRow | None:
        if flow not in self._flows:
            self.set_flow(flow, [])
        rows = self._flows[flow]
        if index < 0:
            return None
        if index >= len(rows):
            shown = flow == self._current
            if shown:
                self.beginInsertRows(QModelIndex(), len(rows), index)
            rows.extend(StepRow(i, "") for i in range(len(rows), index + 1))
            if shown:
                self.endInsertRows()
        if title and not rows[index].title:
            rows[index].title = title
        return rows[index]

    def _row_changed(self, flow: str, index: int) -> None:
        if flow == self._current:
            self.dataChanged.emit(self.index(index, 0), self.index(index, len(self.COLUMNS) - 1))

    # --- Qt model -------------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self._flows.get(self._current, ()))

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole:
                return self.COLUMNS[section]
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return int(self._alignment(section))
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.row(index.row())
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, col)
        if role == self.RowRole:
            return row
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(self._alignment(col))
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == self.COL_STATUS:
                return QBrush(QColor(TAKEOVER_COLOR) if row.phase == "taken over" else status_color(row.status))
            if col == self.COL_STRATEGY and (row.healed or row.strategy == "abstained"):
                return QBrush(_HEALED if row.healed else status_color("escalated"))
            if col == self.COL_VERDICT and row.verdict and row.verdict != "as_expected":
                return QBrush(status_color("failed"))
            if row.status == "pending":
                return QBrush(QColor(COLORS["muted"]))
            return None
        if role == Qt.ItemDataRole.DecorationRole and col == self.COL_STATUS:
            return self._icon("manual" if row.phase == "taken over" else row.status)
        if role == Qt.ItemDataRole.FontRole and row.status == "running":
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == self.COL_STRATEGY and row.resolution_reason:
                return row.resolution_reason
            if col == self.COL_VERDICT and row.verdict_reason:
                return row.verdict_reason
            if col == self.COL_STATUS:
                meaning = "a human has the page" if row.phase == "taken over" else STATUS_TIPS.get(row.status, "")
                detail = row.error or row.escalation
                return f"{meaning}: {detail}" if meaning and detail else (meaning or detail or None)
            if col == self.COL_TITLE:
                return row.title
        return None

    def _display(self, row: StepRow, col: int) -> str:
        if col == self.COL_INDEX:
            return str(row.index + 1)
        if col == self.COL_TITLE:
            return row.title
        if col == self.COL_STATUS:
            if row.phase == "taken over":
                return "taken over"
            label = "paused" if row.status == "running" and (row.paused or row.phase == "paused") \
                else status_label(row.status)
            return f"{label} \u00b7 {row.phase}" if row.status == "running" and row.phase else label
        if col == self.COL_STRATEGY:
            if row.strategy:
                return strategy_short(row.strategy)
            return "\u2014" if row.status not in ("pending", "running") else ""
        if col == self.COL_SCORE:
            if row.strategy == "abstained":  # no pick: the best rejected candidate's score is no match score
                return "\u2014"
            return f"{row.score:.2f}" if row.score is not None and row.strategy else ""
        if col == self.COL_VERDICT:
            return row.verdict.replace("_", " ")
        if col == self.COL_MS:
            return f"{row.ms:,.0f}" if row.ms is not None else ""
        return ""

    def _alignment(self, col: int) -> Qt.AlignmentFlag:
        if col in (self.COL_INDEX, self.COL_SCORE, self.COL_MS):
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter

    def _icon(self, status: str) -> QIcon:
        icon = self._icons.get(status)
        if icon is None:
            pm = QPixmap(12, 12)
            pm.fill(Qt.GlobalColor.transparent)
            p = QPainter(pm)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(status_color(status))
            p.drawEllipse(2, 2, 8, 8)
            p.end()
            icon = self._icons[status] = QIcon(pm)
        return icon


class StepsTable(QTableView):
    """The steps table: whole-row selection, compact rows, stretching title column."""

    def __init__(self, model: StepsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(26)
        h = self.horizontalHeader()
        h.setHighlightSections(False)
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        h.setSectionResizeMode(StepsModel.COL_TITLE, QHeaderView.ResizeMode.Stretch)
        for col, width in ((0, 34), (2, 118), (3, 92), (4, 54), (5, 150), (6, 60)):
            self.setColumnWidth(col, width)


def step_details_html(row: StepRow | None) -> str:
    """HTML of the details pane for ``row`` (resolution reason, top candidates, verdict)."""
    if row is None:
        return f"<p style='color:{COLORS['muted']}'>Select a step to see how its target was resolved " \
               "and how its outcome was judged.</p>"
    color = STATUS_COLORS.get(row.status, STATUS_COLORS["pending"])
    muted = COLORS["muted"]
    if row.phase == "taken over":
        meta = [f"<span style='color:{TAKEOVER_COLOR}; font-weight:bold'>taken over</span>", "you have the page"]
    else:
        paused = row.status == "running" and (row.paused or row.phase == "paused")
        label = "paused" if paused else status_label(row.status)
        meta = [f"<span style='color:{color}; font-weight:bold'>{_esc(label)}</span>"]
    if row.phase and row.phase not in ("taken over", "paused"):
        n = PHASES.index(row.phase) + 1 if row.phase in PHASES else 0
        meta.append(f"phase {_esc(row.phase)}" + (f" ({n}/{len(PHASES)})" if n else ""))
    if row.attempt > 1:
        meta.append(f"attempt {row.attempt}")
    if row.ms is not None:
        meta.append(f"{row.ms:,.0f} ms")
    if row.healed:
        meta.append("<span style='color:#f5a524'>healed</span>")
    if row.source and row.source != "flow":
        meta.append(f"decided by {_esc(row.source)}")
    parts = [f"<h3 style='margin:0'>{row.index + 1}. {_esc(row.title)}</h3>",
             f"<p style='margin-top:2px'>{' &middot; '.join(meta)}</p>"]
    if row.escalation:
        parts.append(f"<p style='color:#f5a524'><b>Escalated:</b> {_esc(plain_words(row.escalation))}</p>")
    if row.error and row.status == "manual":
        parts.append(f"<p style='color:{TAKEOVER_COLOR}'><b>By hand:</b> {_esc(plain_words(row.error))}</p>")
    elif row.status == "stopped":  # a Stop is no error (the engine says "stopped by the user")
        parts.append(f"<p style='color:{muted}'><b>Stopped</b> (the run was stopped at this step)</p>")
    elif row.error:
        parts.append(f"<p style='color:{STATUS_COLORS['failed']}'><b>Error:</b> {_esc(plain_words(row.error))}</p>")

    parts.append(_section("Resolution"))
    if row.strategy:
        score = f"{row.score:.2f}" if row.score is not None else "\u2014"
        if row.strategy == "abstained" and row.score is not None:
            score = f"none picked (best rejected {row.score:.2f})"
        margin = f"{row.margin:.2f}" if row.margin is not None else "\u2014"
        parts.append(_kv([("found", _esc(strategy_words(row.strategy))), ("score", score), ("margin", margin),
                          ("target", _esc(row.target_label) or "\u2014")]))
        if row.resolution_reason:
            parts.append(f"<p>{_esc(plain_words(row.resolution_reason))}</p>")
        if row.top:
            items = "".join(
                f"<tr><td style='padding-right:10px'>{i + 1}.</td><td style='padding-right:14px'>"
                f"{_esc(c.label or 'an element without a name')}</td>"
                f"<td align='right'>{c.score:.2f}</td></tr>" for i, c in enumerate(row.top))
            parts.append(f"<p style='color:{muted}; margin-bottom:2px'>Top candidates</p><table>{items}</table>")
    else:
        parts.append(f"<p style='color:{muted}'>No target resolved yet (or the action needs none).</p>")

    parts.append(_section("Verdict"))
    if row.verdict:
        vcolor = STATUS_COLORS["passed"] if row.verdict == "as_expected" else STATUS_COLORS["failed"]
        observed = ", ".join(row.verdict_observed) or "\u2014"
        words = row.verdict.replace("_", " ")
        parts.append(_kv([("verdict", f"<span style='color:{vcolor}'>{_esc(words)}</span>"),
                          ("expected", _esc(plain_words(row.verdict_expected)) or "\u2014"),
                          ("observed", _esc(plain_words(observed)))]))
        if row.verdict_reason:
            parts.append(f"<p>{_esc(plain_words(row.verdict_reason))}</p>")
    else:
        parts.append(f"<p style='color:{muted}'>Not verified yet.</p>")
    if row.states:
        parts.append(_section("What the page was like"))
        for moment, summary, evidence, key in row.states:
            key_html = f" <span style='color:{muted}'>[{_esc(key)}]</span>" if key else ""
            items = "".join(f"<li>{_esc(e)}</li>" for e in evidence[:4])
            parts.append(f"<p style='margin-bottom:0'><b>{_esc(moment)}</b>: {_esc(summary)}{key_html}</p>"
                         f"<ul style='margin-top:0'>{items}</ul>")
        if row.recent_states:
            lines = "<br>".join(_esc(x) for x in row.recent_states[-6:])
            parts.append(f"<p style='color:{muted}; margin-bottom:2px'>Recent states "
                         f"({len(row.recent_states)} kept, last 6)</p><p style='color:{muted}'>{lines}</p>")
    if row.phase_ms:
        parts.append(_section("Time per phase (ms)"))
        parts.append(_phase_table(row.phase_ms))
    return "".join(parts)


def _phase_table(phase_ms: tuple[tuple[str, float], ...]) -> str:
    """Phases of the last attempt with their time in ms and a bar relative to the slowest one."""
    slowest = max((ms for _p, ms in phase_ms), default=0.0) or 1.0
    muted, accent = COLORS["muted"], COLORS["accent"]
    rows = []
    for phase, ms in phase_ms:
        width = max(1, round(120 * ms / slowest))
        rows.append(f"<tr><td style='color:{muted}; padding-right:12px'>{_esc(phase)}</td>"
                    f"<td align='right' style='padding-right:8px'>{ms:,.1f}</td>"
                    f"<td><table cellspacing='0' cellpadding='0'><tr><td width='{width}' height='8' "
                    f"bgcolor='{accent}'></td></tr></table></td></tr>")
    total = sum(ms for _p, ms in phase_ms)
    rows.append(f"<tr><td style='color:{muted}; padding-right:12px'>total</td>"
                f"<td align='right' style='padding-right:8px'><b>{total:,.1f}</b></td><td></td></tr>")
    return f"<table cellspacing='0' cellpadding='1'>{''.join(rows)}</table>"


def _section(title: str) -> str:
    return (f"<p style='color:{COLORS['muted']}; font-weight:bold; margin-top:10px; margin-bottom:2px'>"
            f"{title}</p>")


def _kv(pairs: list[tuple[str, str]]) -> str:
    rows = "".join(f"<tr><td style='color:{COLORS['muted']}; padding-right:12px'>{k}</td><td>{v}</td></tr>"
                   for k, v in pairs)
    return f"<table cellspacing='0' cellpadding='1'>{rows}</table>"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class StepDetails(QTextBrowser):
    """Details of one step (rich text)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.document().setDocumentMargin(10)
        self.show_row(None)

    def show_row(self, row: StepRow | None) -> None:
        self.setHtml(step_details_html(row))


class StepsPanel(QWidget):
    """Flow chooser, steps table and details pane; the selection follows the running step.

    Signals
    -------
    step_selected(object)
        The :class:`StepRow` the user (or following) selected, or None.
    """

    step_selected = Signal(object)

    def __init__(self, model: StepsModel | None = None, parent: QWidget | None = None,
                 *, orientation: Qt.Orientation = Qt.Orientation.Horizontal) -> None:
        super().__init__(parent)
        self.model = model or StepsModel(self)
        self.table = StepsTable(self.model)
        self.details = StepDetails()
        self.flow_combo = QComboBox()
        self.flow_combo.setMinimumWidth(180)
        self.summary = QLabel()
        self.summary.setObjectName("panelTitle")
        self._following = True
        self._selecting = False
        self._details_stale = False

        head = QHBoxLayout()
        head.setContentsMargins(8, 4, 8, 4)
        label = QLabel("Flow")
        label.setObjectName("panelTitle")
        head.addWidget(label)
        head.addWidget(self.flow_combo)
        head.addStretch(1)
        head.addWidget(self.summary)
        self.splitter = QSplitter(orientation)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.details)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([700, 380])
        self.splitter.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(head)
        lay.addWidget(self.splitter, 1)

        #: The details pane and the summary after a burst of step changes (once per burst, not per event).
        self.refresh = Deferred(self._refresh_now, parent=self)
        self.model.flows_changed.connect(self._on_flows_changed)
        self.model.current_flow_changed.connect(self._on_current_flow_changed)
        self.model.dataChanged.connect(self._on_data_changed)
        self.model.modelReset.connect(self._on_reset)
        self.model.rowsInserted.connect(self._update_summary)
        self.flow_combo.currentTextChanged.connect(self._on_combo)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)
        self._on_flows_changed()

    # --- public ---------------------------------------------------------------------------

    def apply(self, event: EngineEvent) -> None:
        """Feed an engine event to the model; follow the running step."""
        if isinstance(event, FlowStarted):
            self._following = True
        self.model.apply(event)
        if isinstance(event, StepStarted) and self._following and event.flow == self.model.current_flow:
            self.select_row(event.index)

    def select_row(self, i: int) -> None:
        """Select row ``i`` programmatically (keeps following the run)."""
        if not 0 <= i < self.model.rowCount():
            return
        self._selecting = True
        try:
            idx = self.model.index(i, 0)
            self.table.selectionModel().setCurrentIndex(
                idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
            self.table.scrollTo(idx)
        finally:
            self._selecting = False

    def selected_row(self) -> StepRow | None:
        idx = self.table.selectionModel().currentIndex()
        return self.model.row(idx.row()) if idx.isValid() else None

    # --- handlers -------------------------------------------------------------------------

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._selecting:
            self._following = False  # the user picked a row: stop following the run
        row = self.model.row(current.row()) if current.isValid() else None
        self.details.show_row(row)
        self.step_selected.emit(row)

    def _on_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, *_args: Any) -> None:
        sel = self.table.selectionModel().currentIndex()
        if sel.isValid() and top_left.row() <= sel.row() <= bottom_right.row():
            self._details_stale = True
        self.refresh.schedule()

    def _refresh_now(self) -> None:
        if self._details_stale:
            self._details_stale = False
            sel = self.table.selectionModel().currentIndex()
            self.details.show_row(self.model.row(sel.row()) if sel.isValid() else None)
        self._update_summary()

    def _on_reset(self) -> None:
        self.details.show_row(None)
        self._update_summary()

    def _on_flows_changed(self) -> None:
        names = self.model.flow_names()
        self.flow_combo.blockSignals(True)
        self.flow_combo.clear()
        self.flow_combo.addItems(names)
        self.flow_combo.setCurrentText(self.model.current_flow)
        self.flow_combo.blockSignals(False)
        self.flow_combo.setEnabled(bool(names))

    def _on_current_flow_changed(self, flow: str) -> None:
        self.flow_combo.blockSignals(True)
        self.flow_combo.setCurrentText(flow)
        self.flow_combo.blockSignals(False)
        self._update_summary()

    def _on_combo(self, flow: str) -> None:
        if flow:
            self.model.show_flow(flow)

    def _update_summary(self, *_args: Any) -> None:
        rows = self.model.rows()
        if not rows:
            self.summary.setText("")
            return
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.status] = counts.get(r.status, 0) + 1
        done = sum(v for k, v in counts.items() if k not in ("pending", "running"))
        extra = [f"{counts[k]} {status_label(k)}" for k in ("failed", "escalated", "error", "stopped", "manual")
                 if counts.get(k)]
        self.summary.setText(f"{done}/{len(rows)} done" + (" \u00b7 " + ", ".join(extra) if extra else ""))
