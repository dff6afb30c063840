"""Escalations: when the engine needs a human, with context (R4), and the human's answer.

Each escalation shows which step, why (its kind and reason), the candidates
the locator considered (label, score, grid cell, box) and the side effects
already produced, with one button per answer the engine accepts there
(``EscalationRaised.answers``: retry, skip, stop, take over).  An escalation
is ``open`` until the run goes on (``Resumed`` or a next ``StepStarted``: listed
by the answer it got - ``stopped``, ``skipped``, ``retried``, ``candidate used`` -
or ``resumed`` when no answer was seen), a human takes the page (``TakeoverStarted``: ``taken over``,
then ``HandedBack``: ``handed back``) or the run ends (``RunFinished``:
``closed``).

:class:`TakeoverBanner` is what the window shows while a human has the page:
"continue from step N" (1-based here, 0-based in :class:`HandBack`) and a
Hand back button.  Nothing here decides anything: the panel shows what the
events say and sends the commands the user chooses.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from PySide6.QtCore import QAbstractListModel, QEvent, QModelIndex, QObject, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView, QButtonGroup, QFrame, QHBoxLayout, QHeaderView, QLabel, QListView, QPushButton, QRadioButton,
    QSizePolicy, QSpinBox, QSplitter, QTextBrowser, QToolButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from core.domain import BBox, EscalationCandidate
from core.engine.events import (
    Command, Compensate, EngineEvent, EscalationRaised, HandBack, HandedBack, ObservationMade, Resumed, Retry, RunFinished,
    Skip, StepStarted, Stop, TakeOver, TakeoverStarted,
)
from core.perception.grid import Grid

from ..plain_words import plain_words
from ..theme import COLORS, STATUS_COLORS, TAKEOVER_COLOR
from .elided import ElidedLabel

__all__ = [
    "Escalation", "EscalationsModel", "EscalationsPanel", "AnswerBar", "TakeoverBanner", "escalation_html",
    "candidate_cell", "box_text", "ANSWERS", "ANSWER_LABELS", "KIND_LABELS", "ANSWER_STATES",
]

_Index = QModelIndex | QPersistentModelIndex

#: The answers in the order the buttons are shown, with the command each one sends.
ANSWERS: tuple[tuple[str, Callable[[], Command]], ...] = (
    ("retry", Retry), ("skip", Skip), ("take_over", TakeOver), ("compensate", Compensate), ("stop", Stop),
)
#: Answer -> button text.
ANSWER_LABELS = {"retry": "Retry", "skip": "Skip step", "stop": "Stop", "take_over": "Take over",
                 "compensate": "Run compensation"}
_ANSWER_TIPS = {
    "retry": "Try the step again (the breaker half-opens)",
    "skip": "Leave this step as skipped and go on with the next one",
    "stop": "End this flow here (it counts as escalated); a run of several flows goes on with the next one",
    "take_over": "Take the page yourself; hand back later with \u201ccontinue from step N\u201d",
    "compensate": "Undo what this irreversible step may have written by running its declared compensations",
}
#: Escalation kind (``core.domain.EscalationKind``) -> what it says to a user.
KIND_LABELS = {
    "abstained": "Locator abstained",
    "breaker_open": "Circuit breaker open",
    "precondition": "Pre-check failed",
    "failed": "Step failed",
    "irreversible": "Irreversible step failed",
    "assertion": "Assertion did not hold",
    "budget": "Step budget spent",
    "no_decision": "No decision",
    "approval": "Waiting for approval",
    "crashed": "Browser crashed",
    "loop": "Same action again (anti-loop)",
    "stagnation": "Nothing really changes",
    "page": "Page broken, not answering or still loading",
}
#: The answer command's class name -> the state an escalation it answered is listed in.
ANSWER_STATES = {"Stop": "stopped", "Skip": "skipped", "Retry": "retried", "Resume": "retried",
                 "StepOnce": "retried", "UseCandidate": "candidate used", "Compensate": "compensated"}
#: States in which the engine still waits on this escalation's page.
_LIVE = ("open", "taken over")


@dataclass(slots=True)
class Escalation:
    """One escalation as shown.

    ``state`` is open / resumed / taken over / handed back / closed;
    ``received_at`` s since the epoch; ``viewport`` the CSS px size of the
    page the candidates' boxes refer to (None when no observation was seen).
    """

    event: EscalationRaised
    state: str = "open"
    received_at: float = 0.0
    viewport: tuple[int, int] | None = None


def candidate_cell(candidate: EscalationCandidate, viewport: tuple[int, int] | None) -> str:
    """Grid cell (``"C5"``, 10 x 10 grid, P2) of the centre of the candidate's box; ``""`` when unknown."""
    if candidate.box is None or not viewport or viewport[0] <= 0 or viewport[1] <= 0:
        return ""
    return Grid(float(viewport[0]), float(viewport[1])).cell_of_box(candidate.box)


def box_text(box: BBox | None) -> str:
    """``"712,106 148\u00d740"``: top-left corner and size in CSS px; ``"\u2014"`` without a box."""
    if box is None:
        return "\u2014"
    return f"{box.x:.0f},{box.y:.0f} {box.width:.0f}\u00d7{box.height:.0f}"


class EscalationsModel(QAbstractListModel):
    """Escalations of the current run, newest last.

    Signals
    -------
    open_count_changed(int)
        Number of open escalations.
    """

    EscalationRole = Qt.ItemDataRole.UserRole + 1
    open_count_changed = Signal(int)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._items: list[Escalation] = []
        self._icons: dict[str, QIcon] = {}
        self._viewports: dict[str, tuple[int, int]] = {}
        self._answered = ""  # the state the person's answer gives the open escalation once the run goes on

    @property
    def items(self) -> list[Escalation]:
        return list(self._items)

    @property
    def open_count(self) -> int:
        return sum(1 for e in self._items if e.state == "open")

    def note_command(self, command: Command) -> None:
        """The person answered (a command sent to the engine): the open escalation is listed by that answer
        once the run goes on - "stopped" for Stop, "skipped" for Skip, "retried" for Retry or Resume, "candidate
        used" for a chosen candidate - not as "resumed" whatever the answer was."""
        name = type(command).__name__
        state = ANSWER_STATES.get(name)
        if name == "Stop" and any(e.state == "taken over" for e in self._items):
            self._close_open("stopped", states=_LIVE)  # Stop during a takeover: the escalation was stopped
            self._answered = ""
            return
        if state is not None and self.open_count:
            self._answered = state
            if name == "Stop":  # a stopped flow may end without a Resumed: listed at once
                self._close_open(state)
                self._answered = ""

    def apply(self, event: EngineEvent) -> None:
        """Update from an engine event (GUI thread)."""
        if isinstance(event, ObservationMade):
            self._viewports[event.flow] = tuple(event.observation.viewport)  # type: ignore[assignment]
        elif isinstance(event, EscalationRaised):
            n = len(self._items)
            self.beginInsertRows(QModelIndex(), n, n)
            self._items.append(Escalation(event, "open", time.time(), self._viewports.get(event.flow)))
            self.endInsertRows()
            self.open_count_changed.emit(self.open_count)
        elif isinstance(event, TakeoverStarted):
            self._answered = ""
            self._close_open("resumed")
            latest = self._latest(event.flow, event.index)
            if latest is not None and latest.state == "resumed":
                self._set_state(latest, "taken over")
        elif isinstance(event, HandedBack):
            for e in self._items:
                if e.state == "taken over":
                    self._set_state(e, "handed back")
        elif isinstance(event, (Resumed, StepStarted)):
            self._close_open(self._answered or "resumed")
            self._answered = ""
        elif isinstance(event, RunFinished):
            self._answered = ""
            self._close_open("closed", states=_LIVE)

    def clear(self) -> None:
        self.beginResetModel()
        self._answered = ""
        self._items.clear()
        self._viewports.clear()
        self.endResetModel()
        self.open_count_changed.emit(0)

    def _latest(self, flow: str, index: int) -> Escalation | None:
        for e in reversed(self._items):
            if (e.event.flow, e.event.index) == (flow, index):
                return e
        return None

    def _set_state(self, item: Escalation, state: str) -> None:
        item.state = state
        i = self._items.index(item)
        self.dataChanged.emit(self.index(i), self.index(i))

    def _close_open(self, state: str, states: tuple[str, ...] = ("open",)) -> None:
        changed = False
        for e in self._items:
            if e.state in states:
                self._set_state(e, state)
                changed = True
        if changed:
            self.open_count_changed.emit(self.open_count)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        item = self._items[index.row()]
        ev = item.event
        if role == Qt.ItemDataRole.DisplayRole:
            return f"Step {ev.index + 1} \u00b7 {ev.step_title}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{ev.flow}: {KIND_LABELS.get(ev.kind, ev.kind)} \u2014 {plain_words(ev.reason)}"
        if role == Qt.ItemDataRole.DecorationRole:
            return self._icon(item.state)
        if role == Qt.ItemDataRole.ForegroundRole and item.state not in _LIVE:
            return QColor(COLORS["muted"])
        if role == self.EscalationRole:
            return item
        return None

    def _icon(self, state: str) -> QIcon:
        icon = self._icons.get(state)
        if icon is None:
            pm = QPixmap(14, 14)
            pm.fill(Qt.GlobalColor.transparent)
            p = QPainter(pm)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.setPen(Qt.PenStyle.NoPen)
            color = {"open": STATUS_COLORS["escalated"], "taken over": TAKEOVER_COLOR}.get(state, COLORS["muted"])
            p.setBrush(QColor(color))
            p.drawEllipse(2, 2, 10, 10)
            p.end()
            icon = self._icons[state] = QIcon(pm)
        return icon


def escalation_html(item: Escalation | None) -> str:
    """HTML of the details of one escalation: step, kind, state, reason, side effects.

    The candidates are listed by the panel's table, the answers by its buttons.
    """
    muted = COLORS["muted"]
    if item is None:
        # the panel's header says "No escalations" once; the details say what comes here, not that again
        return f"<p style='color:{muted}'>When the engine cannot decide on its own it pauses and asks you " \
               "here.</p>"
    ev = item.event
    state_color = {"open": STATUS_COLORS["escalated"], "taken over": TAKEOVER_COLOR}.get(item.state, muted)
    stamp = time.strftime("%H:%M:%S", time.localtime(item.received_at)) if item.received_at else ""
    kind = KIND_LABELS.get(ev.kind, ev.kind)
    parts = [
        f"<h3 style='margin:0'>Step {ev.index + 1}: {_esc(ev.step_title)}</h3>",
        f"<p style='margin-top:2px; color:{muted}'>{_esc(ev.flow)} &middot; "
        f"<span style='color:{STATUS_COLORS['escalated']}'>{_esc(kind)}</span> &middot; "
        f"<span style='color:{state_color}; font-weight:bold'>{item.state}</span>"
        + (f" &middot; {stamp}" if stamp else "") + "</p>",
        (f"<p><b>{_esc(plain_words(ev.plain))}</b></p><p style='color:{muted}'>Detail: {_esc(plain_words(ev.reason))}</p>" if ev.plain
         else f"<p><b>Why:</b> {_esc(plain_words(ev.reason))}</p>"),
    ]
    if item.state == "open":
        parts.append(f"<p style='color:{STATUS_COLORS['escalated']}'>The run waits for your answer "
                     "(the buttons below).</p>")
    elif item.state == "taken over":
        parts.append(f"<p style='color:{TAKEOVER_COLOR}'>You have the page. Hand back from the bar above "
                     "the page when the step is done.</p>")
    head = (f"<p style='color:{muted}; font-weight:bold; margin-top:8px; margin-bottom:2px'>"
            "Side effects so far</p>")
    if ev.side_effects:
        parts.append(head + "<ul style='margin-top:0'>"
                     + "".join(f"<li>{_esc(s)}</li>" for s in ev.side_effects) + "</ul>")
    else:
        parts.append(head + f"<p style='color:{muted}'>none</p>")
    return "".join(parts)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class AnswerBar(QWidget):
    """One button per answer an escalation accepts (Retry, Skip step, Take over, Stop).

    Signals
    -------
    command_requested(object)
        The command of the clicked answer (:class:`Retry`, :class:`Skip`,
        :class:`TakeOver` or :class:`Stop`).
    """

    command_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        for answer, command in ANSWERS:
            b = QPushButton(ANSWER_LABELS[answer])
            b.setObjectName("primaryAnswer" if answer == "take_over" else f"answer_{answer}")
            b.setToolTip(_ANSWER_TIPS[answer])
            b.clicked.connect(lambda _checked=False, c=command: self._clicked(c))
            self.buttons[answer] = b
            row.addWidget(b)
        row.addStretch(1)
        self.set_answers(())

    def set_answers(self, answers: Sequence[str], kind: str = "") -> None:
        """Show the buttons of ``answers`` only (enabled), in the fixed order.

        For an ``approval`` escalation (a chosen action that may write data)
        the retry button reads "Approve": retrying is what approves it.
        """
        approval = kind == "approval"
        retry = self.buttons.get("retry")
        if retry is not None:
            retry.setText("Approve" if approval else ANSWER_LABELS["retry"])
            retry.setToolTip("Let the chosen action run once (it may write data)" if approval
                             else _ANSWER_TIPS["retry"])
        for answer, b in self.buttons.items():
            b.setHidden(answer not in answers)
            b.setEnabled(True)

    def set_pending(self) -> None:
        """An answer was sent (from here or elsewhere): no second one until the next question."""
        for b in self.buttons.values():
            b.setEnabled(False)

    def shown(self) -> tuple[str, ...]:
        """The answers whose buttons are shown, in order."""
        return tuple(a for a, b in self.buttons.items() if not b.isHidden())

    def _clicked(self, command: Callable[[], Command]) -> None:
        self.set_pending()  # one answer per question; the next escalation enables them again
        self.command_requested.emit(command())


class _HoverWatcher(QObject):
    """Reports the mouse leaving the candidates table (back to the selected candidate)."""

    def __init__(self, on_leave: Callable[[], None], parent: QObject) -> None:
        super().__init__(parent)
        self._on_leave = on_leave

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Leave:
            self._on_leave()
        return False


class EscalationsPanel(QWidget):
    """List of escalations over their details, candidates table and answer buttons.

    A new escalation is selected at once.  Hovering or selecting a candidate
    of an open (or taken over) escalation reports it, so that the window can
    outline its box on the live view.

    Signals
    -------
    escalation_selected(object)
        The selected :class:`Escalation`, or None.
    candidate_highlighted(object)
        The hovered / selected :class:`~core.domain.EscalationCandidate`, or
        None (none, or the escalation is no longer live).
    command_requested(object)
        The command of the answer the user clicked.
    """

    escalation_selected = Signal(object)
    candidate_highlighted = Signal(object)
    command_requested = Signal(object)

    COLUMNS = ("#", "Candidate", "Score", "Where")

    def __init__(self, model: EscalationsModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model or EscalationsModel(self)
        self._shown: Escalation | None = None
        self._hovered: EscalationCandidate | None = None
        self.header = QLabel()
        self.header.setObjectName("panelTitle")
        self.list = QListView()
        self.list.setModel(self.model)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setSpacing(2)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setIconSize(QSize(14, 14))
        self.list.setUniformItemSizes(False)
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.document().setDocumentMargin(10)
        self.candidates_title = QLabel("Candidates")
        self.candidates_title.setObjectName("panelTitle")
        self.candidates = QTreeWidget()
        self.candidates.setColumnCount(len(self.COLUMNS))
        self.candidates.setHeaderLabels(list(self.COLUMNS))
        self.candidates.setRootIsDecorated(False)
        self.candidates.setUniformRowHeights(True)
        self.candidates.setMouseTracking(True)
        self.candidates.setAlternatingRowColors(True)
        h = self.candidates.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.answers = AnswerBar()
        self.answers.command_requested.connect(self.command_requested)

        lower = QWidget()
        low = QVBoxLayout(lower)
        low.setContentsMargins(0, 0, 0, 0)
        low.setSpacing(0)
        low.addWidget(self.details, 3)
        self.candidates_title.setContentsMargins(8, 2, 8, 0)
        low.addWidget(self.candidates_title)
        low.addWidget(self.candidates, 2)
        answers_box = QVBoxLayout()
        answers_box.setContentsMargins(8, 6, 8, 8)
        answers_box.addWidget(self.answers)
        low.addLayout(answers_box)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.list)
        split.addWidget(lower)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 4)
        split.setSizes([80, 460])
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.header)
        lay.addWidget(split, 1)
        self.header.setContentsMargins(8, 2, 8, 2)

        self.model.rowsInserted.connect(self._on_inserted)
        self.model.dataChanged.connect(self._refresh)
        self.model.modelReset.connect(self._refresh)
        self.model.open_count_changed.connect(self._update_header)
        self.list.selectionModel().currentChanged.connect(self._refresh)
        self.candidates.currentItemChanged.connect(lambda *_a: self._emit_highlight())
        self.candidates.itemEntered.connect(self._on_entered)
        self._watcher = _HoverWatcher(self._on_left, self)
        self.candidates.viewport().installEventFilter(self._watcher)
        self._update_header(0)
        self._refresh()

    def apply(self, event: EngineEvent) -> None:
        """Feed an engine event to the model."""
        self.model.apply(event)

    def selected(self) -> Escalation | None:
        idx = self.list.currentIndex()
        return self.model.data(idx, EscalationsModel.EscalationRole) if idx.isValid() else None

    def selected_candidate(self) -> EscalationCandidate | None:
        """The candidate selected in the table, or None."""
        item = self.candidates.currentItem()
        return item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None

    def select_candidate(self, i: int) -> None:
        """Select the ``i``-th candidate (0-based) of the shown escalation."""
        item = self.candidates.topLevelItem(i)
        if item is not None:
            self.candidates.setCurrentItem(item)

    def _on_inserted(self, _parent: QModelIndex, _first: int, last: int) -> None:
        self.list.setCurrentIndex(self.model.index(last))

    def _refresh(self, *_args: Any) -> None:
        item = self.selected()
        self.details.setHtml(escalation_html(item))
        if item is not self._shown:
            self._shown, self._hovered = item, None
            self._fill_candidates(item)
        self.answers.set_answers(item.event.answers if item is not None and item.state == "open" else (),
                                 item.event.kind if item is not None else "")
        self.answers.setVisible(item is not None and item.state == "open")
        self.escalation_selected.emit(item)
        self._emit_highlight()

    def _fill_candidates(self, item: Escalation | None) -> None:
        self.candidates.clear()
        if item is None:
            return
        muted = QColor(COLORS["muted"])
        for i, c in enumerate(item.event.candidates):
            cell = candidate_cell(c, item.viewport)
            row = QTreeWidgetItem([str(i + 1), c.label or c.ref, f"{c.score:.2f}", cell or box_text(c.box)])
            row.setData(0, Qt.ItemDataRole.UserRole, c)
            tip = (f"{c.label or c.ref}\nscore {c.score:.2f} \u00b7 ref {c.ref}\n"
                   + (f"grid cell {cell} \u00b7 " if cell else "")
                   + (f"box {box_text(c.box)} (x,y w\u00d7h, CSS px)" if c.box is not None else "no box known"))
            for col in range(len(self.COLUMNS)):
                row.setToolTip(col, tip)
            for col in (0, 2):
                row.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if not cell:
                row.setForeground(3, muted)
            self.candidates.addTopLevelItem(row)
        if not item.event.candidates:
            none = QTreeWidgetItem(["", "none offered", "", ""])
            none.setForeground(1, muted)
            none.setFlags(Qt.ItemFlag.NoItemFlags)
            self.candidates.addTopLevelItem(none)

    def _on_entered(self, item: QTreeWidgetItem, _column: int) -> None:
        self._hovered = item.data(0, Qt.ItemDataRole.UserRole)
        self._emit_highlight()

    def _on_left(self) -> None:
        if self._hovered is not None:
            self._hovered = None
            self._emit_highlight()

    def _emit_highlight(self) -> None:
        item = self._shown
        live = item is not None and item.state in _LIVE
        self.candidate_highlighted.emit((self._hovered or self.selected_candidate()) if live else None)

    def _update_header(self, open_count: int) -> None:
        total = self.model.rowCount()
        if not total:
            self.header.setText("No escalations")
        else:
            self.header.setText(f"{open_count} open \u00b7 {total} in this run")


#: The hand-back's question: what the manual actions were for (key, label, tooltip).
MEANINGS = (
    ("replace", "replace this step", "They do what this step should do: offered as the step's replacement in the "
                                     "flow file; the engine goes on with the next step"),
    ("insert", "go before this step", "They were missing before this step: offered as new steps before it; the "
                                      "engine runs this step next"),
    ("done", "did this step once", "This step is done by hand this time; the flow file stays as it is"),
)


class TakeoverBanner(QFrame):
    """The "You have the page" bar, shown while a human has taken over the engine's page.

    It asks what the manual actions were for (:attr:`meaning`: replace this
    step / insert them before it / the step is done), lists the actions
    recorded so far (:meth:`set_actions`) and where the engine goes on.
    "Continue from step N" is 1-based (N = the flow's step count + 1 means
    "finish the flow") and follows the meaning until the user sets it:
    replace and done go on with the next step, insert with the same step.
    :meth:`hand_back` sends ``HandBack(continue_from=N - 1, meaning=...)``.
    The meaning is preselected "insert" (the actions go before the step,
    which then runs on the page as left), or "done" when the engine had
    already performed the step; only the person changes it - recorded
    actions never do.

    Signals
    -------
    command_requested(object)
        The :class:`HandBack` command.
    """

    command_requested = Signal(object)
    rollback_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("takeoverBanner")
        self._titles: tuple[str, ...] = ()
        self.flow = ""
        self.index = -1
        # one line each, cut with "..." (whole text on hover and under Details): a long paragraph must never
        # push the choice and Hand back out of the bar's fixed height
        self.title = ElidedLabel()
        self.title.setObjectName("takeoverTitle")
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.details_button = QToolButton()
        self.details_button.setObjectName("takeoverDetails")
        self.details_button.setText("Details")
        self.details_button.setCheckable(True)
        self.details_button.setToolTip("Show the whole text of the lines above (below the choice)")
        self.details_button.toggled.connect(self._show_details)
        self.details = QLabel()
        self.details.setObjectName("takeoverDetailsText")
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.details.hide()
        self.continue_label = QLabel("Continue from step")
        self.continue_from = QSpinBox()
        self.continue_from.setObjectName("continueFrom")
        self.continue_from.setToolTip("The step the engine runs next when you hand back (1-based)")
        self.continue_from.setMinimumWidth(64)
        self.continue_title = ElidedLabel()
        self.continue_title.setObjectName("continueTitle")
        self.hand_back_button = QPushButton("Hand back")
        self.hand_back_button.setObjectName("primaryAnswer")
        self.hand_back_button.setToolTip("Give the page back to the engine; it re-observes the page and "
                                         "continues from the step chosen on the left (F5)")
        self.hand_back_button.clicked.connect(self.hand_back)
        self.continue_from.valueChanged.connect(self._update_continue_title)
        self.rollback_button = QPushButton("Roll back the step")
        self.rollback_button.setObjectName("rollBackStep")
        self.rollback_button.setToolTip("Roll back to before this step. "
                                        "The page stays as the escalation showed it until you press this: it then "
                                        "closes what the step opened, goes back to the step's page and restores "
                                        "the form values; what you did until then is dropped")
        self.rollback_button.clicked.connect(self._roll_back)
        self.notice = ElidedLabel()
        self.notice.setObjectName("takeoverNotice")
        self.notice.hide()
        self._pending_notice: tuple[str, bool] | None = None
        self.actions = ElidedLabel("No action recorded yet.")
        self.actions.setObjectName("takeoverActions")
        self.meaning_buttons: dict[str, QRadioButton] = {}
        self._meaning_row = QHBoxLayout()
        self._meaning_row.setSpacing(10)
        self._meaning_row.addWidget(QLabel("Your actions:"))
        self._meaning_group = QButtonGroup(self)
        for key, text, tip in MEANINGS:
            b = QRadioButton(text)
            b.setObjectName(f"meaning_{key}")
            b.setToolTip(tip)
            self._meaning_group.addButton(b)
            self.meaning_buttons[key] = b
            self._meaning_row.addWidget(b)
            b.clicked.connect(lambda _c=False, k=key: self._choose(k, by_user=True))
        self._meaning_row.addStretch(1)
        self._user_meaning = False
        self._user_continue = False
        self.continue_from.valueChanged.connect(self._continue_set_by_user)

        col = QVBoxLayout(self)
        col.setContentsMargins(12, 8, 8, 8)
        col.setSpacing(6)
        top = QHBoxLayout()
        top.setSpacing(6)
        top.addWidget(self.title, 1)
        top.addWidget(self.details_button)
        col.addLayout(top)
        col.addWidget(self.notice)
        col.addWidget(self.actions)
        col.addLayout(self._meaning_row)
        self._row = QHBoxLayout()
        self._row.setSpacing(6)
        self._row.addWidget(self.rollback_button)
        self._row.addSpacing(12)
        self._row.addWidget(self.continue_label)
        self._row.addWidget(self.continue_from)
        self._row.addWidget(self.continue_title, 1)
        self._row.addWidget(self.hand_back_button)
        col.addLayout(self._row)
        col.addWidget(self.details)  # under the choice: opening it never hides the choice
        self.hide()

    def add_button(self, widget: QWidget) -> None:
        """Append a control (e.g. the window's Stop) after Hand back."""
        self._row.addWidget(widget)

    def begin(self, flow: str, index: int, titles: Sequence[str], *, headless: bool | None = None,
              acted: bool = False) -> None:
        """Show the banner: taken over at step ``index`` (0-based) of ``flow`` whose steps are ``titles``.

        ``headless`` says whether the engine's browser is headless (its page
        then cannot be reached by hand); None when unknown.  ``acted``: the
        engine had already performed this step, so the next step is the default.
        """
        self.index = -1
        self._titles = tuple(titles)
        n = max(len(self._titles), index + 1)
        self.continue_from.setRange(1, n + 1)
        self.flow, self.index = flow, index
        self._user_meaning = self._user_continue = False
        self.details_button.setChecked(False)
        self.set_actions(())
        self._choose("done" if acted else "insert")
        self.hand_back_button.setEnabled(True)
        self.rollback_button.setEnabled(True)
        pending, self._pending_notice = self._pending_notice, None
        if pending is not None:  # said as the takeover started, before the bar was set up
            self.say(*pending)
        else:
            self.notice.hide()
        step = f"step {index + 1}" + (f" \u2014 {self._titles[index]}" if index < len(self._titles) else "")
        if headless:
            how = ("Click, type and scroll in the live view: your actions go to the engine's page and are "
                   "recorded. Then say what they were for and hand back.")
        else:
            how = ("Do the step yourself in the live view or the Chromium window: your actions are recorded. "
                   "Then say what they were for and hand back.")
        self.title.setText(f"You have the page \u00b7 taken over at {step} of {flow}, "
                           "as the escalation showed it (nothing was reloaded or closed). "
                           f"The engine does not touch the page until you hand back. {how}")
        self._update_continue_title()
        self._update_details()
        self.show()

    def end(self) -> None:
        """Hide the banner (handed back, stopped, or the run ended)."""
        self.index = -1
        self._pending_notice = None
        self.hide()

    @property
    def active(self) -> bool:
        """True between :meth:`begin` and :meth:`end`."""
        return self.index >= 0

    @property
    def meaning(self) -> str:
        """The chosen meaning of the manual actions: ``replace``, ``insert`` or ``done``."""
        return next((k for k, b in self.meaning_buttons.items() if b.isChecked()), "insert")

    def set_meaning(self, meaning: str) -> None:
        """Choose what the manual actions were for, as the user would (the continue step follows)."""
        self._choose(meaning, by_user=True)

    def _choose(self, meaning: str, *, by_user: bool = False) -> None:
        self._user_meaning = self._user_meaning or by_user
        self.meaning_buttons[meaning].setChecked(True)
        if not self._user_continue and self.index >= 0:
            self.continue_from.blockSignals(True)
            self.continue_from.setValue(self.index + (2 if meaning in ("replace", "done") else 1))
            self.continue_from.blockSignals(False)
            self._update_continue_title()

    def _continue_set_by_user(self, *_args: Any) -> None:
        if self.index >= 0:  # begin() sets the range and the default with the banner not yet active
            self._user_continue = True

    def set_actions(self, titles: Sequence[str]) -> None:
        """Show the actions recorded so far.  The meaning and the continue step stay as preselected or as the
        person chose: a recorded action never changes them (the commonest takeover - dismiss what is in the
        way, then let the step run - must not turn into "replace this step")."""
        if not titles:
            self.actions.setText("No action recorded yet \u2014 what you do on the page is recorded with "
                                 "full descriptors, as in a recording.")
        else:
            items = "; ".join(f"{i}. {t}" for i, t in enumerate(titles, 1))
            self.actions.setText(f"Recorded: {items}")
        self._update_details()

    def _update_details(self) -> None:
        parts = [self.title.text()]
        if not self.notice.isHidden() and self.notice.text():
            parts.append(self.notice.text())
        parts.append(self.actions.text())
        self.details.setText("<br>".join(_esc(p) for p in parts if p))

    def _show_details(self, on: bool) -> None:
        self.details.setVisible(on)
        self.details_button.setText("Hide details" if on else "Details")

    def say(self, text: str, ok: bool = True) -> None:
        """Show a line under the title (what was rolled back, or what the engine did before asking)."""
        if not self.active:
            self._pending_notice = (text, ok)  # shown by the next begin()
            return
        color = TAKEOVER_COLOR if ok else STATUS_COLORS["escalated"]
        self.notice.setStyleSheet(f"color: {color};")
        self.notice.setText(text)
        self.notice.show()
        self._update_details()

    def rolled_back(self, ok: bool, detail: str) -> None:
        """The engine's answer to the rollback: say what was rolled back (or why not); the button is free again."""
        self.rollback_button.setEnabled(self.active)
        self.say(detail[:1].upper() + detail[1:] + ".", ok=ok)

    def _roll_back(self) -> None:
        if not self.active or not self.rollback_button.isEnabled():
            return
        self.rollback_button.setEnabled(False)  # once until the engine answers
        self.say("Rolling back to before this step\u2026")
        self.rollback_requested.emit()

    def hand_back(self) -> None:
        """Send ``HandBack(continue_from=N - 1, meaning=...)`` for the step N shown (once per takeover)."""
        if not self.active or not self.hand_back_button.isEnabled():
            return
        self.hand_back_button.setEnabled(False)
        self.command_requested.emit(HandBack(continue_from=self.continue_from.value() - 1, meaning=self.meaning))

    def _update_continue_title(self, *_args: Any) -> None:
        i = self.continue_from.value() - 1
        if i >= len(self._titles):
            text = "(end of the flow: nothing more to run)"
        else:
            text = self._titles[i] + ("  (the same step again)" if i == self.index else "")
        self.continue_title.setText(text)
