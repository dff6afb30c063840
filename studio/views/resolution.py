"""Resolution panel: how the current step's target was found (R2), and a person's choice when it was not.

For the step the run is at it shows the winning strategy, its score and the
margin over the runner-up, how many elements were looked at, the per-level
trace (each level of the chain: best, runner-up, winner or not, why) and the
top candidates (rank, label, role, score, grid cell, state).  Hovering a
candidate highlights it on the live view (``candidate_highlighted``).

When the step escalates, the plain sentence the engine computed
(``EscalationRaised.plain``) is said first, the engine's reason stays below
as the detail, and each candidate can be

* **used once** for this step (:class:`core.engine.events.UseCandidate`),
  offered when the escalation's answers include ``use_candidate``; a
  candidate whose ``confirm`` is set (an irreversible step, a role crossing)
  is sent only after the person confirmed in a dialog
  (:attr:`ResolutionPanel.confirm`), never by a single click;
* **proposed as a heal** (:class:`core.engine.events.ProposeHeal`): the
  engine records a heal proposal, answered by ``HealProposed`` whose note is
  shown.

Everything shown comes from the engine's events; nothing here decides.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView, QDockWidget, QFrame, QHBoxLayout, QHeaderView, QLabel, QMenu, QMessageBox, QPushButton,
    QScrollArea, QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from core.domain import BBox, Candidate, EscalationCandidate, Resolution
from core.engine.explain import candidate_state
from core.engine.events import (
    EngineEvent, EscalationRaised, HealProposed, ObservationMade, ProposeHeal, Resumed, RunFinished,
    RunStarted, StepFinished, StepStarted, TargetResolved, UseCandidate,
)

from ..theme import COLORS, STATUS_COLORS
from .live_view import descriptor_lines

__all__ = ["ResolutionPanel", "ShownCandidate", "candidate_state", "install_resolution_dock"]


@dataclass(frozen=True, slots=True)
class ShownCandidate:
    """One row of the candidates list: the ref, label and score, what the page says of it, and the
    escalation's view of it (``confirm`` says why a use-once needs confirming)."""

    ref: str
    label: str
    score: float
    box: BBox | None = None
    role: str = ""
    cell: str = ""
    state: str = ""
    confirm: str = ""
    element: Candidate | None = field(default=None, compare=False)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class ResolutionPanel(QWidget):
    """The current step's resolution, its trace and candidates; use once / propose as heal.

    Signals
    -------
    candidate_highlighted(object, str)
        A box (CSS px, :class:`core.domain.BBox`) and its label to outline on the live view;
        ``(None, "")`` clears it.
    command_requested(object)
        :class:`UseCandidate` (an answer to the escalation) or :class:`ProposeHeal` (not an answer).
    """

    candidate_highlighted = Signal(object, str)
    command_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: Asks the person to confirm a use-once that needs it: ``(question, why) -> yes``.  Tests replace it.
        self.confirm: Callable[[str, str], bool] = self._confirm_dialog
        self._run_id = ""
        self._flow = ""
        self._index = -1
        self._title = ""
        self._page: dict[str, Candidate] = {}
        self._resolution: Resolution | None = None
        self._escalation: EscalationRaised | None = None
        self._open = False
        self._rows: list[ShownCandidate] = []
        self.detail_text = ""
        self._notes: list[str] = []

        self.headline = QLabel("No step resolved yet \u2014 the current step's target and how it was found "
                               "show here.")
        self.headline.setObjectName("resolutionHeadline")
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.figures = QLabel()
        self.figures.setWordWrap(True)
        self.figures.setTextFormat(Qt.TextFormat.RichText)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setStyleSheet(f"color: {COLORS['muted']};")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note.hide()

        self.candidates = QTreeWidget()
        self.candidates.setObjectName("resolutionCandidates")
        self.candidates.setHeaderLabels(["#", "Candidate", "Role", "Score", "Cell", "State"])
        self.candidates.setRootIsDecorated(False)
        self.candidates.setMouseTracking(True)
        self.candidates.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.candidates.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.candidates.customContextMenuRequested.connect(self._context_menu)
        self.candidates.itemEntered.connect(lambda item, _c: self._highlight_row(self.candidates.indexOfTopLevelItem(item)))
        self.candidates.itemSelectionChanged.connect(self._on_selection)
        self.candidates.itemDoubleClicked.connect(lambda item, _c: self._double_clicked(item))
        self.candidates.viewport().installEventFilter(self)
        self.candidates.setMinimumHeight(110)
        h = self.candidates.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for col in (0, 2, 3, 4, 5):
            h.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)

        self.use_button = QPushButton("Use once")
        self.use_button.setToolTip("Act on the selected candidate for this step only (the flow file is not changed)")
        self.use_button.clicked.connect(lambda: self.use_once(self.selected_ref()))
        self.heal_button = QPushButton("Propose as heal")
        self.heal_button.setToolTip("Record a heal proposal: this step's target becomes the selected candidate "
                                    "once the proposal is accepted in the heal review")
        self.heal_button.clicked.connect(lambda: self.propose_heal(self.selected_ref()))
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.use_button)
        buttons.addWidget(self.heal_button)
        buttons.addStretch(1)

        self.trace = QTreeWidget()
        self.trace.setObjectName("resolutionTrace")
        self.trace.setHeaderLabels(["Level", "Best", "Score", "Runner-up", "Score", "Why"])
        self.trace.setRootIsDecorated(False)
        self.trace.setWordWrap(True)
        th = self.trace.header()
        th.setStretchLastSection(True)
        for col in range(5):
            th.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)

        self.element = QLabel("Point at a box on the live view to see its descriptor.")
        self.element.setObjectName("resolutionElement")
        self.element.setWordWrap(True)
        self.element.setTextFormat(Qt.TextFormat.RichText)
        self.element.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.element.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.element.setContentsMargins(8, 6, 8, 6)

        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(8, 8, 8, 4)
        tl.addWidget(self.headline)
        tl.addWidget(self.figures)
        tl.addWidget(self.detail)
        tl.addWidget(self.note)
        tl.addWidget(self.candidates, 1)
        tl.addLayout(buttons)
        # a long reason (a cookie wall's four lines) in a short dock scrolls instead of being drawn over by the
        # lines below it
        scroll = QScrollArea()
        scroll.setObjectName("resolutionSummary")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(top)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(False)
        split.addWidget(scroll)
        split.addWidget(self.trace)
        split.addWidget(self.element)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setStretchFactor(2, 1)
        self.splitter = split
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split)
        self._refresh()

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        # wide and short (a bottom dock): summary, trace and element side by side; else stacked
        wide = self.width() > 1.6 * self.height()
        want = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != want:
            self.splitter.setOrientation(want)
            total = self.width() if wide else self.height()
            self.splitter.setSizes([int(total * f) for f in ((0.5, 0.3, 0.2) if wide else (0.55, 0.25, 0.2))])
        super().resizeEvent(event)

    # --- state -----------------------------------------------------------------------------

    @property
    def resolution(self) -> Resolution | None:
        return self._resolution

    @property
    def escalation(self) -> EscalationRaised | None:
        """The current step's escalation (open or answered), or None."""
        return self._escalation

    def can_use(self) -> bool:
        """True while an open escalation of this step accepts ``use_candidate``."""
        e = self._escalation
        return self._open and e is not None and "use_candidate" in e.answers

    def can_propose(self) -> bool:
        """True while an escalation of this step waits (a proposal is recorded by the waiting engine)."""
        return self._open and self._escalation is not None

    def rows(self) -> list[ShownCandidate]:
        return list(self._rows)

    def selected_ref(self) -> str:
        items = self.candidates.selectedItems()
        if not items:
            return ""
        i = self.candidates.indexOfTopLevelItem(items[0])
        return self._rows[i].ref if 0 <= i < len(self._rows) else ""

    def select_ref(self, ref: str) -> bool:
        """Select the candidate ``ref`` in the list (a click on its box on the live view); False when absent."""
        for i, r in enumerate(self._rows):
            if r.ref == ref:
                self.candidates.setCurrentItem(self.candidates.topLevelItem(i))
                return True
        return False

    # --- events ------------------------------------------------------------------------------

    def apply(self, event: EngineEvent) -> None:
        """Follow the run: a new step clears, its before-observation gives the page, its resolution and
        escalation fill the panel, an answer or the end of the step closes the escalation."""
        if isinstance(event, RunStarted):
            self._run_id, self._flow, self._index = event.run_id, "", -1
            self._clear_step()
            self.show_element(None)  # an element of the previous run's page is not under the pointer (trial-55)
        elif isinstance(event, StepStarted):
            if (event.flow, event.index) != (self._flow, self._index) or event.attempt == 1:
                self._clear_step()
            self._run_id, self._flow, self._index, self._title = event.run_id, event.flow, event.index, event.title
            self._open = False
        elif isinstance(event, ObservationMade):
            if event.when == "before" and event.index == self._index:
                self._page = {c.ref: c for c in event.observation.candidates}
        elif isinstance(event, TargetResolved):
            if event.index == self._index:
                self._resolution = event.resolution
                self._escalation = None
        elif isinstance(event, EscalationRaised):
            self._escalation, self._open = event, True
            self._index, self._flow, self._title = event.index, event.flow, event.step_title
        elif isinstance(event, HealProposed):
            if event.index == self._index:
                self._notes.append(event.note)
        elif isinstance(event, (Resumed, StepFinished, RunFinished)):
            self._open = False
        else:
            return
        self._refresh()

    def _clear_step(self) -> None:
        self._page, self._resolution, self._escalation, self._open, self._notes = {}, None, None, False, []

    # --- commands ------------------------------------------------------------------------------

    def use_once(self, ref: str) -> bool:
        """Send :class:`UseCandidate` for ``ref`` (after a confirmation when the candidate needs one);
        True when sent."""
        row = next((r for r in self._rows if r.ref == ref), None)
        if row is None or not self.can_use():
            return False
        confirmed = False
        if row.confirm:
            what = f"Use {row.label or row.ref!r} for step {self._index + 1} once?"
            if not self.confirm(what, row.confirm):
                return False
            confirmed = True
        self._open = False  # one answer per escalation
        label = next((c.label for c in (self._escalation.candidates if self._escalation else ()) if c.ref == ref),
                     "")
        self.command_requested.emit(UseCandidate(ref, confirmed=confirmed, index=self._index, label=label))
        self._refresh()
        return True

    def propose_heal(self, ref: str) -> bool:
        """Send :class:`ProposeHeal` for ``ref``; True when sent (the escalation keeps waiting)."""
        if not ref or not self.can_propose() or not any(r.ref == ref for r in self._rows):
            return False
        self.command_requested.emit(ProposeHeal(ref))
        return True

    def menu_for(self, ref: str) -> QMenu | None:
        """The menu of candidate ``ref`` (use once / propose as heal), or None when it is not a candidate."""
        row = next((r for r in self._rows if r.ref == ref), None)
        if row is None:
            return None
        menu = QMenu(self)
        name = row.label or row.ref
        use = menu.addAction(f"Use {name!r} once for this step" + ("\u2026" if row.confirm else ""),
                             lambda: self.use_once(ref))
        use.setEnabled(self.can_use())
        heal = menu.addAction(f"Propose {name!r} as the heal of this step", lambda: self.propose_heal(ref))
        heal.setEnabled(self.can_propose())
        return menu

    def open_menu(self, ref: str, pos: QPoint) -> bool:
        """Select ``ref`` and open its menu at ``pos`` (global px); False when it is not a candidate."""
        if not self.select_ref(ref):
            return False
        menu = self.menu_for(ref)
        if menu is None:
            return False
        menu.exec(pos)
        return True

    def _context_menu(self, pos: QPoint) -> None:
        item = self.candidates.itemAt(pos)
        if item is None:
            return
        i = self.candidates.indexOfTopLevelItem(item)
        if 0 <= i < len(self._rows):
            menu = self.menu_for(self._rows[i].ref)
            if menu is not None:
                menu.exec(self.candidates.viewport().mapToGlobal(pos))

    def _double_clicked(self, item: QTreeWidgetItem) -> None:
        i = self.candidates.indexOfTopLevelItem(item)
        if 0 <= i < len(self._rows) and self.can_use():
            self.use_once(self._rows[i].ref)

    def _confirm_dialog(self, question: str, why: str) -> bool:
        box = QMessageBox(QMessageBox.Icon.Warning, "Confirm the choice",
                          f"{question}\n\nThis needs your confirmation: {why}.", parent=self)
        yes = box.addButton("Use it once", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is yes

    # --- the element under the pointer --------------------------------------------------------

    def show_element(self, candidate: Candidate | None) -> None:
        """Show ``candidate``'s descriptor (the box the pointer is on), or the hint when None."""
        if candidate is None:
            self.element.setText("Point at a box on the live view to see its descriptor.")
            return
        rows = "".join(f"<tr><td style='color:{COLORS['muted']};padding-right:10px'>{_esc(k)}</td>"
                       f"<td>{_esc(v)}</td></tr>" for k, v in descriptor_lines(candidate))
        self.element.setText(f"<b>Element under the pointer</b><table>{rows}</table>")

    # --- hover ---------------------------------------------------------------------------------

    def _highlight_row(self, i: int) -> None:
        if 0 <= i < len(self._rows):
            r = self._rows[i]
            self.candidate_highlighted.emit(r.box, f"#{i + 1} {r.label or r.ref} {r.score:.2f}")
        else:
            self.candidate_highlighted.emit(None, "")

    def highlight(self, i: int) -> None:
        """Highlight row ``i`` on the live view as hovering it does (-1 clears)."""
        self._highlight_row(i)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802, ANN001 - Qt API
        from PySide6.QtCore import QEvent

        if obj is self.candidates.viewport() and event.type() == QEvent.Type.Leave:
            self._on_selection()
        return super().eventFilter(obj, event)

    def _on_selection(self) -> None:
        items = self.candidates.selectedItems()
        self._highlight_row(self.candidates.indexOfTopLevelItem(items[0]) if items else -1)
        self._update_buttons()

    # --- painting ------------------------------------------------------------------------------

    def _shown(self) -> list[ShownCandidate]:
        esc, res = self._escalation, self._resolution
        out: list[ShownCandidate] = []
        if esc is not None and esc.candidates:
            for c in esc.candidates:
                el = self._page.get(c.ref)
                out.append(self._row(c, el))
        elif res is not None:
            for s in res.top:
                el = self._page.get(s.ref)
                out.append(self._row(EscalationCandidate(s.ref, s.label, s.score,
                                                         el.descriptor.bbox if el else None), el))
        return out

    @staticmethod
    def _row(c: EscalationCandidate, el: Candidate | None) -> ShownCandidate:
        role = c.role or (el.descriptor.role or el.descriptor.tag if el else "")
        return ShownCandidate(c.ref, c.label or (el.descriptor.label_text if el else ""), c.score,
                              c.box or (el.descriptor.bbox if el else None), role, el.grid_cell if el else "",
                              candidate_state(el), c.confirm, el)

    def _refresh(self) -> None:
        esc, res = self._escalation, self._resolution
        where = f"step {self._index + 1} \u2014 {_esc(self._title)}" if self._index >= 0 else ""
        if esc is not None:
            plain = esc.plain or esc.reason
            state = "waiting for you" if self._open else "answered"
            self.headline.setText(f"<span style='color:{COLORS['muted']}'>{where} \u00b7 {state}</span><br>"
                                  f"<b style='font-size:14px'>{_esc(plain)}</b>")
            self._set_detail(esc.reason if esc.plain and esc.reason != esc.plain else "")
        elif res is not None:
            self.headline.setText(f"<span style='color:{COLORS['muted']}'>{where}</span><br>"
                                  + ("<b>Abstained</b>" if res.abstained else
                                     f"<b>Found by {_esc(res.strategy)}</b>"))
            self._set_detail(res.reason)
        elif self._index >= 0:
            self.headline.setText(f"<span style='color:{COLORS['muted']}'>{where}</span><br>No target resolved "
                                  f"for this step yet.")
            self._set_detail("")
        self.detail.setVisible(bool(self.detail.text()))
        self._fill_figures(res)
        self.note.setText("\n".join(self._notes))
        self.note.setVisible(bool(self._notes))
        self._rows = self._shown()
        self._fill_candidates()
        self._fill_trace(res)
        self._update_buttons()

    #: The detail (the engine's reason) is cut after this many characters; all of it is in the tooltip.
    DETAIL_CHARS = 220

    def _set_detail(self, text: str) -> None:
        """The engine's own words, shortened (the whole text is the tooltip and :attr:`detail_text`)."""
        self.detail_text = text
        short = text if len(text) <= self.DETAIL_CHARS else text[: self.DETAIL_CHARS - 1].rstrip() + "\u2026"
        self.detail.setText(f"Detail: {short}" if text else "")
        self.detail.setToolTip(text)

    def _fill_figures(self, res: Resolution | None) -> None:
        if res is None:
            self.figures.setText("")
            self.figures.hide()
            return
        runner = res.top[1].score if len(res.top) > 1 else None
        best = res.top[0].score if res.top else res.score
        parts = [f"strategy <b>{_esc(res.strategy)}</b>" if not res.abstained else "<b>abstained</b>",
                 f"score <b>{res.score:.2f}</b>" if not res.abstained else f"best <b>{best:.2f}</b>",
                 f"margin <b>{res.margin:.2f}</b>" + (f" over the runner-up ({runner:.2f})" if runner is not None else
                                                        " (no runner-up)")]
        if res.considered:
            parts.append(f"{res.considered} elements looked at")
        parts.append(f"{res.ms:.1f} ms")
        if res.confirmed_by:
            parts.append("confirmed by " + ", ".join(_esc(c) for c in res.confirmed_by))
        if res.role_crossing:
            parts.append("<b>role crossing</b>")
        self.figures.setText(" \u00b7 ".join(parts))
        self.figures.show()

    def _fill_candidates(self) -> None:
        self.candidates.blockSignals(True)
        keep = self.selected_ref()
        self.candidates.clear()
        for i, r in enumerate(self._rows):
            item = QTreeWidgetItem([str(i + 1), r.label or r.ref, r.role, f"{r.score:.2f}", r.cell,
                                    r.state + (" \u00b7 confirm" if r.confirm else "")])
            item.setTextAlignment(3, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            tip = f"ref {r.ref}"
            if r.confirm:
                tip += f"\nUsing it once needs your confirmation: {r.confirm}"
            item.setToolTip(1, tip)
            if r.state in ("hidden", "disabled", "covered"):
                item.setForeground(5, QColor(COLORS["muted"]))
            self.candidates.addTopLevelItem(item)
            if r.ref == keep:
                item.setSelected(True)
        self.candidates.blockSignals(False)

    def _fill_trace(self, res: Resolution | None) -> None:
        self.trace.clear()
        for t in (res.trace if res else ()):
            best = t.best.label or t.best.ref if t.best else ""
            run = t.runner_up.label or t.runner_up.ref if t.runner_up else ""
            item = QTreeWidgetItem([t.level + (" \u2713" if t.winner else ""), best,
                                    f"{t.best.score:.2f}" if t.best else "", run,
                                    f"{t.runner_up.score:.2f}" if t.runner_up else "", t.reason])
            item.setToolTip(5, t.reason)
            if t.winner:
                for col in range(6):
                    item.setForeground(col, QColor(STATUS_COLORS["passed"]))
            self.trace.addTopLevelItem(item)

    def _update_buttons(self) -> None:
        has = bool(self.selected_ref())
        self.use_button.setEnabled(has and self.can_use())
        self.heal_button.setEnabled(has and self.can_propose())
        self.use_button.setVisible(self._escalation is not None)
        self.heal_button.setVisible(self._escalation is not None)


def install_resolution_dock(window) -> QDockWidget:  # noqa: ANN001 - a studio.main_window.MainWindow
    """Dock a :class:`ResolutionPanel` on the right of ``window`` and wire it to the run and the live view.

    The panel follows the bridge's events; hovering a row outlines the candidate on the live view; a
    click on a box of the live view selects it and opens its menu (use once / propose as heal); the
    live view's resolution boxes follow each ``TargetResolved``; use-once goes out as the window's
    answer (sent once), a proposal straight to the engine.  Returns the dock (object name
    ``resolutionDock``); the panel is ``window.resolution_panel``.
    """


    panel = ResolutionPanel()
    dock = QDockWidget("Resolution", window)
    dock.setObjectName("resolutionDock")
    dock.setWidget(panel)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                     | QDockWidget.DockWidgetFeature.DockWidgetClosable)
    screen = window.screen().availableGeometry().width() if window.screen() is not None else 0
    if screen >= 1500 or getattr(window, "steps_dock", None) is None:
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        window.resizeDocks([dock], [340], Qt.Orientation.Horizontal)
    else:  # a small screen: a tab beside the steps and the log, laid out side by side there
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        window.tabifyDockWidget(window.steps_dock, dock)
        window.steps_dock.raise_()
    window.resolution_panel = panel
    lv = window.live_view
    bridge = window.bridge
    bridge.event_received.connect(panel.apply)
    # after the window's own handler: the target and the resolution's other top candidates
    bridge.target_resolved.connect(lambda e: lv.show_resolution(e.resolution, e.candidate))
    lv.candidate_hovered.connect(panel.show_element)

    def highlight(box: object, label: str) -> None:
        if box is None or getattr(window, "_recording", False):
            lv.set_highlight(None)
        else:
            lv.set_highlight(box, label)  # type: ignore[arg-type]

    panel.candidate_highlighted.connect(highlight)

    def clicked(candidate: Candidate, pos: QPoint) -> None:
        if not lv.interactive() and panel.select_ref(candidate.ref):
            dock.show()
            dock.raise_()
            panel.open_menu(candidate.ref, pos)

    lv.candidate_clicked.connect(clicked)

    def send(command: object) -> None:
        if isinstance(command, UseCandidate):
            window._answer(command)  # an answer: the escalation's buttons go pending
        elif bridge.engine is not None:
            bridge.send(command)
            window.event_log.log(f"\u2192 proposed {command.ref} as the heal of this step")  # type: ignore[attr-defined]

    panel.command_requested.connect(send)

    # the Escalations panel's candidates too: context menu (use once / propose as heal), double click uses once
    tree = getattr(getattr(window, "escalations_panel", None), "candidates", None)
    if isinstance(tree, QTreeWidget):
        def ref_at(item: QTreeWidgetItem | None) -> str:
            c = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
            return c.ref if isinstance(c, EscalationCandidate) else ""

        def tree_menu(pos: QPoint) -> None:
            ref = ref_at(tree.itemAt(pos))
            menu = panel.menu_for(ref) if ref and panel.select_ref(ref) else None
            if menu is not None:
                menu.exec(tree.viewport().mapToGlobal(pos))

        if tree.contextMenuPolicy() == Qt.ContextMenuPolicy.DefaultContextMenu:  # else the window's menu has them
            tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            tree.customContextMenuRequested.connect(tree_menu)
        tree.itemDoubleClicked.connect(lambda item, _col: panel.use_once(ref_at(item)))

    # zoom shortcuts of the live view, window-wide (the passive view takes no keyboard focus)
    from PySide6.QtGui import QAction, QKeySequence  # noqa: PLC0415

    for name, text, keys, slot in (("action_zoom_in", "Zoom in", QKeySequence.StandardKey.ZoomIn, lv.zoom_in),
                                   ("action_zoom_out", "Zoom out", QKeySequence.StandardKey.ZoomOut, lv.zoom_out),
                                   ("action_zoom_fit", "Fit the page", QKeySequence("Ctrl+0"), lv.fit)):
        action = QAction(text, window)
        action.setShortcut(keys)
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        window.addAction(action)
        setattr(window, name, action)

    def escalated(_event: object) -> None:
        dock.show()
        dock.raise_()

    bridge.escalation_raised.connect(escalated)
    return dock
