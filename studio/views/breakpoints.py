"""Breakpoints in the studio: a red-dot gutter on the steps table and the conditions panel.

The breakpoints themselves, their rules and their file are the engine's
(:mod:`core.engine.breakpoints`); this module shows and edits them:

- :class:`BreakpointBook` holds the project's :class:`~core.engine.breakpoints.Breakpoints`,
  loads them from ``<project>/.steadyhand/studio.json`` and saves every change there;
- :class:`BreakpointGutter` is the steps table's vertical header: a click on
  a row's gutter toggles a breakpoint on that step (a red dot);
- :class:`BreakpointsPanel` lists the step breakpoints and switches the
  conditional ones (page changed against its baseline, low confidence with
  its threshold, abstained, verdict not as expected, irreversible step).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtCore import QObject, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QCheckBox, QDoubleSpinBox, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem, QPushButton,
    QVBoxLayout, QWidget,
)

from core.engine.breakpoints import (
    CONDITIONS, Breakpoints, BreakpointsError, Conditions, load_breakpoints, save_breakpoints,
)

from ..theme import COLORS

__all__ = ["BREAKPOINT_COLOR", "CONDITION_LABELS", "BreakpointBook", "BreakpointGutter", "BreakpointsPanel"]

#: The red of a breakpoint dot.
BREAKPOINT_COLOR = "#e5484d"
#: What each conditional breakpoint is called in the panel.
CONDITION_LABELS = {
    "changed": "Page changed against its baseline",
    "low_confidence": "Resolution confidence below",
    "abstained": "Locator abstained",
    "verdict": "Verdict not \u201cas expected\u201d",
    "irreversible": "Step is irreversible, before it acts",
}

#: Step ids of a flow, in order (from the loaded project).
StepIds = Callable[[str], Sequence[str]]


class BreakpointBook(QObject):
    """The project's breakpoints; every change is saved to the project's local settings and announced.

    Signals
    -------
    changed(object)
        The new :class:`~core.engine.breakpoints.Breakpoints`.
    error(str)
        The settings file could not be read or written (one line, naming the file).
    """

    changed = Signal(object)
    error = Signal(str)

    def __init__(self, root: Path | str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._root = Path(root) if root is not None else None
        self._bps = Breakpoints()
        self.last_error = ""

    @property
    def breakpoints(self) -> Breakpoints:
        return self._bps

    @property
    def root(self) -> Path | None:
        return self._root

    def load(self, root: Path | str | None = None) -> Breakpoints:
        """Read the breakpoints of ``root`` (default: the current project); a bad file is reported, none kept."""
        if root is not None:
            self._root = Path(root)
        self._bps = Breakpoints()
        if self._root is not None:
            try:
                self._bps = load_breakpoints(self._root)
            except BreakpointsError as exc:
                self._report(str(exc))
        self.changed.emit(self._bps)
        return self._bps

    def set(self, bps: Breakpoints) -> None:
        """Use ``bps`` and save it."""
        self._bps = bps
        if self._root is not None:
            try:
                save_breakpoints(self._root, bps)
            except (BreakpointsError, OSError) as exc:
                self._report(str(exc))
        self.changed.emit(bps)

    def toggle(self, flow: str, step_id: str) -> bool:
        """Switch the breakpoint on ``flow``'s step ``step_id``; returns whether it is on now."""
        self.set(self._bps.toggled(flow, step_id))
        return self._bps.on(flow, step_id)

    def set_conditions(self, conditions: Conditions) -> None:
        self.set(self._bps.with_conditions(conditions))

    def _report(self, message: str) -> None:
        self.last_error = message
        self.error.emit(message)


class BreakpointGutter(QHeaderView):
    """The steps table's gutter (its vertical header): a red dot per step with a breakpoint; click toggles.

    ``flow`` gives the flow the table shows, ``step_ids`` the ids of a flow's steps.
    """

    def __init__(self, book: BreakpointBook, flow: Callable[[], str], step_ids: StepIds,
                 parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.book = book
        self._flow = flow
        self._step_ids = step_ids
        self.setSectionsClickable(True)
        self.setHighlightSections(False)
        self.setDefaultSectionSize(26)
        self.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.setFixedWidth(22)
        self.setToolTip("Click to set or clear a breakpoint on this step (the run pauses before it)")
        self.sectionClicked.connect(self.toggle_row)
        book.changed.connect(lambda _b: self.viewport().update())

    def step_id(self, row: int) -> str:
        ids = list(self._step_ids(self._flow()))
        return ids[row] if 0 <= row < len(ids) else ""

    def has_breakpoint(self, row: int) -> bool:
        sid = self.step_id(row)
        return bool(sid) and self.book.breakpoints.on(self._flow(), sid)

    def toggle_row(self, row: int) -> bool:
        """Toggle the breakpoint of row ``row``; False when the row has no step id (nothing toggled)."""
        sid = self.step_id(row)
        if not sid:
            return False
        self.book.toggle(self._flow(), sid)
        return True

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(22, super().sizeHint().height())

    def paintSection(self, painter: QPainter, rect: QRect, logical_index: int) -> None:  # noqa: N802 - Qt API
        painter.save()
        painter.fillRect(rect, QColor(COLORS["panel"]))
        painter.setPen(QPen(QColor(COLORS["border"]), 1))
        painter.drawLine(rect.topRight(), rect.bottomRight())
        if self.has_breakpoint(logical_index):
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(BREAKPOINT_COLOR))
            d = 10
            painter.drawEllipse(rect.center().x() - d // 2 + 1, rect.center().y() - d // 2 + 1, d, d)
        painter.restore()


class BreakpointsPanel(QWidget):
    """The list of step breakpoints and the switches of the conditional ones, bound to a :class:`BreakpointBook`.

    ``titles(flow)`` gives a flow's step titles and ``step_ids(flow)`` its ids
    (for "step 3 'Export report'"); a double click on a listed breakpoint
    removes it.
    """

    def __init__(self, book: BreakpointBook, step_ids: StepIds | None = None,
                 titles: Callable[[str], Sequence[str]] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.book = book
        self._step_ids = step_ids or (lambda _f: ())
        self._titles = titles or (lambda _f: ())
        self._updating = False
        self.checks: dict[str, QCheckBox] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        head = QLabel("Break when")
        head.setObjectName("panelTitle")
        lay.addWidget(head)
        for name in CONDITIONS:
            box = QCheckBox(CONDITION_LABELS[name])
            box.setObjectName(f"break_{name}")
            box.toggled.connect(self._on_conditions)
            self.checks[name] = box
            if name == "low_confidence":
                row = QHBoxLayout()
                row.setContentsMargins(0, 0, 0, 0)
                row.addWidget(box)
                self.threshold = QDoubleSpinBox()
                self.threshold.setRange(0.0, 1.0)
                self.threshold.setSingleStep(0.05)
                self.threshold.setDecimals(2)
                self.threshold.setToolTip("Pause when the winning candidate's score is below this (0..1)")
                self.threshold.valueChanged.connect(self._on_conditions)
                row.addWidget(self.threshold)
                row.addStretch(1)
                lay.addLayout(row)
            else:
                lay.addWidget(box)
        steps_head = QLabel("On steps (click the gutter of the steps table)")
        steps_head.setObjectName("panelTitle")
        lay.addWidget(steps_head)
        self.list = QListWidget()
        self.list.setToolTip("Double-click to remove a breakpoint")
        self.list.itemDoubleClicked.connect(self._remove)
        lay.addWidget(self.list, 1)
        self.clear_button = QPushButton("Clear step breakpoints")
        self.clear_button.clicked.connect(self.clear_steps)
        lay.addWidget(self.clear_button)
        self.file_label = QLabel()
        self.file_label.setObjectName("panelTitle")
        self.file_label.setWordWrap(True)
        lay.addWidget(self.file_label)
        book.changed.connect(self.show_breakpoints)
        book.error.connect(lambda m: self.file_label.setText(f"\u26a0 {m}"))
        self.show_breakpoints(book.breakpoints)

    def show_breakpoints(self, bps: Breakpoints) -> None:
        """Show ``bps`` (without writing them back)."""
        self._updating = True
        try:
            c = bps.conditions
            for name, box in self.checks.items():
                box.setChecked(bool(getattr(c, name)))
            self.threshold.setValue(c.confidence_below)
            self.list.clear()
            for flow in sorted(bps.steps):
                ids, titles = list(self._step_ids(flow)), list(self._titles(flow))
                for sid in sorted(bps.steps[flow], key=lambda s: ids.index(s) if s in ids else len(ids)):
                    if sid in ids:
                        i = ids.index(sid)
                        title = titles[i] if i < len(titles) else sid
                        text = f"\u25cf {flow} \u00b7 step {i + 1} \u2018{title}\u2019"
                    else:
                        text = f"\u25cb {flow} \u00b7 step id {sid!r} (no longer in the flow)"
                    item = QListWidgetItem(text)
                    item.setData(Qt.ItemDataRole.UserRole, (flow, sid))
                    item.setForeground(QColor(BREAKPOINT_COLOR if sid in ids else COLORS["muted"]))
                    self.list.addItem(item)
            root = self.book.root
            if not self.book.last_error:
                self.file_label.setText(f"saved in {root / '.steadyhand' / 'studio.json'}" if root else "")
        finally:
            self._updating = False

    def conditions(self) -> Conditions:
        """The conditions as switched in the panel."""
        return Conditions(**{n: b.isChecked() for n, b in self.checks.items()},
                          confidence_below=round(self.threshold.value(), 2))

    def clear_steps(self) -> None:
        self.book.set(Breakpoints({}, self.book.breakpoints.conditions))

    def _on_conditions(self, *_args: object) -> None:
        if not self._updating:
            self.book.set_conditions(self.conditions())

    def _remove(self, item: QListWidgetItem) -> None:
        flow, sid = item.data(Qt.ItemDataRole.UserRole)
        self.book.toggle(flow, sid)
