"""Escalations: when the engine needs a human, with context (R4).

Each escalation shows which step, why, the candidates the locator could not
tell apart, and the side effects already produced.  An escalation is
``open`` until the run goes on (``Resumed`` or a next ``StepStarted``:
``resumed``) or ends (``RunFinished``: ``closed``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListView, QSplitter, QTextBrowser, QVBoxLayout, QWidget

from core.engine.events import EngineEvent, EscalationRaised, Resumed, RunFinished, StepStarted

from ..theme import COLORS, STATUS_COLORS

__all__ = ["Escalation", "EscalationsModel", "EscalationsPanel", "escalation_html"]

_Index = QModelIndex | QPersistentModelIndex


@dataclass(slots=True)
class Escalation:
    """One escalation as shown: the event, its state, and when it arrived (s since the epoch)."""

    event: EscalationRaised
    state: str = "open"
    received_at: float = 0.0


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

    @property
    def items(self) -> list[Escalation]:
        return list(self._items)

    @property
    def open_count(self) -> int:
        return sum(1 for e in self._items if e.state == "open")

    def apply(self, event: EngineEvent) -> None:
        """Update from an engine event (GUI thread)."""
        if isinstance(event, EscalationRaised):
            n = len(self._items)
            self.beginInsertRows(QModelIndex(), n, n)
            self._items.append(Escalation(event, "open", time.time()))
            self.endInsertRows()
            self.open_count_changed.emit(self.open_count)
        elif isinstance(event, (Resumed, StepStarted)):
            self._close_open("resumed")
        elif isinstance(event, RunFinished):
            self._close_open("closed")

    def clear(self) -> None:
        self.beginResetModel()
        self._items.clear()
        self.endResetModel()
        self.open_count_changed.emit(0)

    def _close_open(self, state: str) -> None:
        changed = False
        for i, e in enumerate(self._items):
            if e.state == "open":
                e.state = state
                changed = True
                self.dataChanged.emit(self.index(i), self.index(i))
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
            return f"{ev.flow}: {ev.reason}"
        if role == Qt.ItemDataRole.DecorationRole:
            return self._icon(item.state)
        if role == Qt.ItemDataRole.ForegroundRole and item.state != "open":
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
            p.setBrush(QColor(STATUS_COLORS["escalated"] if state == "open" else COLORS["muted"]))
            p.drawEllipse(2, 2, 10, 10)
            p.end()
            icon = self._icons[state] = QIcon(pm)
        return icon


def escalation_html(item: Escalation | None) -> str:
    """HTML of the details of one escalation (step, reason, candidates, side effects)."""
    muted = COLORS["muted"]
    if item is None:
        return f"<p style='color:{muted}'>No escalation. When the engine cannot decide on its own " \
               "it pauses and asks you here.</p>"
    ev = item.event
    state_color = STATUS_COLORS["escalated"] if item.state == "open" else muted
    stamp = time.strftime("%H:%M:%S", time.localtime(item.received_at)) if item.received_at else ""
    parts = [
        f"<h3 style='margin:0'>Step {ev.index + 1}: {_esc(ev.step_title)}</h3>",
        f"<p style='margin-top:2px; color:{muted}'>{_esc(ev.flow)} &middot; "
        f"<span style='color:{state_color}; font-weight:bold'>{item.state}</span>"
        + (f" &middot; {stamp}" if stamp else "") + "</p>",
        f"<p><b>Why:</b> {_esc(ev.reason)}</p>",
    ]
    if item.state == "open":
        parts.append(f"<p style='color:{STATUS_COLORS['escalated']}'>The run waits for you: "
                     "Resume (F5), Step (F10) or Stop (Shift+F5).</p>")
    parts.append(_list("Candidates", ev.candidates, "none offered"))
    parts.append(_list("Side effects so far", ev.side_effects, "none"))
    return "".join(parts)


def _list(title: str, items: tuple[str, ...], empty: str) -> str:
    head = (f"<p style='color:{COLORS['muted']}; font-weight:bold; margin-top:8px; margin-bottom:2px'>"
            f"{title.upper()}</p>")
    if not items:
        return head + f"<p style='color:{COLORS['muted']}'>{empty}</p>"
    return head + "<ul style='margin-top:0'>" + "".join(f"<li>{_esc(i)}</li>" for i in items) + "</ul>"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class EscalationsPanel(QWidget):
    """List of escalations over a details pane; a new escalation is selected at once.

    Signals
    -------
    escalation_selected(object)
        The selected :class:`Escalation`, or None.
    """

    escalation_selected = Signal(object)

    def __init__(self, model: EscalationsModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model or EscalationsModel(self)
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
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.list)
        split.addWidget(self.details)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setSizes([90, 400])
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
        self._update_header(0)
        self._refresh()

    def apply(self, event: EngineEvent) -> None:
        """Feed an engine event to the model."""
        self.model.apply(event)

    def selected(self) -> Escalation | None:
        idx = self.list.currentIndex()
        return self.model.data(idx, EscalationsModel.EscalationRole) if idx.isValid() else None

    def _on_inserted(self, _parent: QModelIndex, _first: int, last: int) -> None:
        self.list.setCurrentIndex(self.model.index(last))

    def _refresh(self, *_args: Any) -> None:
        item = self.selected()
        self.details.setHtml(escalation_html(item))
        self.escalation_selected.emit(item)

    def _update_header(self, open_count: int) -> None:
        total = self.model.rowCount()
        if not total:
            self.header.setText("No escalations")
        else:
            self.header.setText(f"{open_count} open \u00b7 {total} in this run")
