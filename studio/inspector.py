"""The step inspector: any step of any stored run as Playwright's trace viewer shows an action, and a fix in place.

Opened on a run of the project's store and a step (double-click a step in
History's Run tab or in the Timeline, or *View > Inspect step*, Ctrl+I),
it shows, for the step chosen in its list (arrow keys or Page Up / Down):

* three large images like the trace viewer's tabs - **Before** (the page
  before the action, the target's box drawn), **Action** (the same page
  with the point the pointer landed on marked) and **After** (the page
  after, the regions that changed drawn); zoom with Ctrl+wheel, the
  buttons or Ctrl+0 (fit).  A screenshot the project's evidence level did
  not keep is said so in plain words, never drawn as an empty frame;
* **Step**: the outcome, the verdict and its reasons (expected and
  observed change, each assertion as checked), the error, an escalation;
* **Locator**: the locator used and why - the level that found the
  target (in words), its score and margin, the locator chain's reason,
  the recorded Playwright locator the action went through, the best
  candidates, one line per attempt;
* **Network**: the requests the step sent (method, address, status, type,
  time from the step's start), failed ones marked;
* **Console**: the console errors and uncaught exceptions while it ran;
* **Timing**: the time of each phase (observe, resolve, act, settle,
  verify...) as bars, active and wall time;
* **Elements**: the elements of the page shown (role, accessible name,
  attributes); hovering a row outlines it on the image;
* **Fix target**: :class:`~studio.picker.PickPanel` - press *Pick*, hover
  the image (each element under the pointer is outlined) and click one: it
  can be made the step's target (:mod:`studio.picker`).

Everything comes from the store (read-only) and the step files of
:mod:`core.engine.plugins.snapshot`; nothing is re-run.  Boxes are CSS px
of the observation, drawn on the image scaled by its device pixel ratio.
"""
from __future__ import annotations

from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush, QColor, QImage, QKeySequence, QMouseEvent, QPainter, QPaintEvent, QPen, QShortcut, QWheelEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView, QButtonGroup, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem, QPushButton,
    QScrollArea, QSizePolicy, QSplitter, QTableWidget, QTableWidgetItem, QTabWidget, QTextBrowser, QVBoxLayout,
    QWidget,
)

from core.domain import BBox
from core.project import Project
from core.store import Store

from .picker import PickCheck, PickError, PickPanel, check_pick, descriptor_rows
from .step_record import StepRecordView, StoredElement, element_at, load_step_records, strategy_words
from .theme import COLORS, status_color, status_label

__all__ = ["StepInspector", "ShotCanvas", "PhaseBars", "MODES", "VERDICT_WORDS", "missing_shot_words"]

#: The image tabs, as the trace viewer names them.
MODES = ("before", "action", "after")
#: Verdict kinds in words.
VERDICT_WORDS = {"as_expected": "as expected", "changed_unexpectedly": "changed unexpectedly",
                 "unchanged": "nothing changed", "failed": "an assertion failed"}
TARGET_COLOR = "#4c8dff"
POINT_COLOR = "#ff3b5c"
HOVER_COLOR = "#f5a524"
PICKED_COLOR = "#3fb96b"
DIFF_COLOR = "#ff4d6d"
#: Zoom limits of the image, times its size in device px.
ZOOM_MIN, ZOOM_MAX = 0.1, 4.0


def _h(text: object) -> str:
    return escape(str(text), quote=False)


#: The engine's names of changes and verdicts that its reasons quote, and how the inspector says them.
_TERMS = ("overlay_open", "overlay_close", "as_expected", "changed_unexpectedly", "text_equals", "text_contains",
          "text_appears", "text_absent", "url_contains")


def _plain(text: str) -> str:
    """An engine reason with its change and verdict names in words (``overlay_open`` -> ``overlay open``)."""
    from .plain_words import plain_words  # noqa: PLC0415

    return plain_words(text)


def missing_shot_words(when: str, evidence_level: str, status: str) -> str:
    """Why a step's ``when`` screenshot is not there, in plain words."""
    page = "before the action" if when == "before" else "after the action"
    if evidence_level == "off":
        why = "the project takes no screenshots (evidence: off in steadyhand.yaml)"
    elif evidence_level == "failures" and status == "passed":
        why = ("the project keeps screenshots only of steps that need a closer look (evidence: failures in "
               "steadyhand.yaml), and this step passed at once; set evidence: full to keep every step's")
    elif when == "after" and status != "passed":
        why = "the step ended before the page after its action was looked at"
    else:
        why = "none was kept for this step"
    return f"No screenshot of the page {page}: {why}."


class ShotCanvas(QWidget):
    """One screenshot with boxes drawn on it (CSS px x ``dpr`` = image px), zoomable, and pick by pointer.

    ``zoom`` None fits the image in :attr:`fit_size`; else image px x zoom.
    In pick mode (:attr:`picking`) the element under the pointer is outlined
    and a click emits ``picked`` (a :class:`StoredElement`).
    """

    picked = Signal(object)
    hovered = Signal(object)
    zoom_changed = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inspectorCanvas")
        self.setMouseTracking(True)
        self.image = QImage()
        self.message = ""
        self.dpr = 1.0
        self.zoom: float | None = None
        self.fit_size = QSize(800, 500)
        self.target: BBox | None = None
        self.point: tuple[float, float] | None = None
        self.regions: tuple[BBox, ...] = ()
        self.elements: tuple[StoredElement, ...] = ()
        self.hover: StoredElement | None = None
        self.outline: BBox | None = None
        self.chosen: StoredElement | None = None
        self.picking = False
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    # --- geometry ----------------------------------------------------------------------
    def scale(self) -> float:
        """Widget px per image px."""
        if self.image.isNull():
            return 1.0
        if self.zoom is not None:
            return self.zoom
        w, h = max(self.fit_size.width(), 50), max(self.fit_size.height(), 50)
        return max(min(w / self.image.width(), h / self.image.height()), ZOOM_MIN)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        if self.image.isNull():
            return self.fit_size
        s = self.scale()
        return QSize(max(1, int(self.image.width() * s)), max(1, int(self.image.height() * s)))

    def relayout(self) -> None:
        self.setFixedSize(self.sizeHint())
        self.update()

    def to_widget(self, b: BBox) -> QRectF:
        k = self.scale() * self.dpr
        return QRectF(b.x * k, b.y * k, b.width * k, b.height * k)

    def to_css(self, x: float, y: float) -> tuple[float, float]:
        k = self.scale() * self.dpr
        return x / k, y / k

    # --- content -----------------------------------------------------------------------
    def show_image(self, image: QImage, dpr: float, *, message: str = "") -> None:
        self.image, self.dpr, self.message = image, dpr or 1.0, message
        self.hover = None
        self.outline = None
        self.relayout()

    def set_zoom(self, zoom: float | None) -> None:
        self.zoom = None if zoom is None else min(max(zoom, ZOOM_MIN), ZOOM_MAX)
        self.relayout()
        self.zoom_changed.emit(self.scale())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(COLORS["canvas"]))
        if self.image.isNull():
            p.setPen(QColor(COLORS["muted"]))
            p.drawText(self.rect().adjusted(24, 24, -24, -24), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                       self.message or "No screenshot.")
            p.end()
            return
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        s = self.scale()
        p.drawImage(QRectF(0, 0, self.image.width() * s, self.image.height() * s), self.image)
        for r in self.regions:
            p.setPen(QPen(QColor(DIFF_COLOR), 2, Qt.PenStyle.DashLine))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(self.to_widget(r))
        if self.target is not None:
            fill = QColor(TARGET_COLOR)
            fill.setAlpha(40)
            p.setPen(QPen(QColor(TARGET_COLOR), 3))
            p.setBrush(QBrush(fill))
            p.drawRect(self.to_widget(self.target))
        if self.point is not None:
            k = s * self.dpr
            c = QPointF(self.point[0] * k, self.point[1] * k)
            p.setPen(QPen(QColor("white"), 3))
            p.setBrush(QBrush(QColor(POINT_COLOR)))
            p.drawEllipse(c, 8, 8)
            p.setPen(QPen(QColor(POINT_COLOR), 2))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawEllipse(c, 16, 16)
        for box, color, width in ((self.chosen.box if self.chosen else None, PICKED_COLOR, 3),
                                  (self.hover.box if self.hover else self.outline, HOVER_COLOR, 2)):
            if box is not None:
                fill = QColor(color)
                fill.setAlpha(50)
                p.setPen(QPen(QColor(color), width))
                p.setBrush(QBrush(fill))
                p.drawRect(self.to_widget(box))
        p.end()

    # --- pointer -----------------------------------------------------------------------
    def element_under(self, x: float, y: float) -> StoredElement | None:
        return element_at(self.elements, *self.to_css(x, y))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self.picking and not self.image.isNull():
            el = self.element_under(event.position().x(), event.position().y())
            if el is not self.hover:
                self.hover = el
                self.setToolTip(el.words() if el else "")
                self.hovered.emit(el)
                self.update()
        super().mouseMoveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self.picking and event.button() == Qt.MouseButton.LeftButton and not self.image.isNull():
            el = self.element_under(event.position().x(), event.position().y())
            if el is not None:
                self.chosen = el
                self.update()
                self.picked.emit(el)
                return
        super().mousePressEvent(event)

    def leaveEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        if self.hover is not None:
            self.hover = None
            self.update()
        super().leaveEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt API
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier and not self.image.isNull():
            step = 1.25 if event.angleDelta().y() > 0 else 0.8
            self.set_zoom(self.scale() * step)
            event.accept()
            return
        super().wheelEvent(event)


class _Scroll(QScrollArea):
    """The canvas's scroll area: a fitted canvas follows its size."""

    def __init__(self, canvas: ShotCanvas) -> None:
        super().__init__()
        self.canvas = canvas
        self.setWidget(canvas)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWidgetResizable(False)
        self.setMinimumSize(420, 280)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self.canvas.fit_size = self.viewport().size() - QSize(4, 4)
        self.canvas.relayout()


class PhaseBars(QWidget):
    """Time per phase (ms) as horizontal bars, longest phase full width."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inspectorPhases")
        self.phases: list[tuple[str, float]] = []
        self.note = ""
        self.setMinimumHeight(120)

    def set_phases(self, phases: list[tuple[str, float]], note: str = "") -> None:
        self.phases, self.note = list(phases), note
        self.setMinimumHeight(40 + 24 * len(self.phases))
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.setPen(QColor(COLORS["text"]))
        if not self.phases:
            p.setPen(QColor(COLORS["muted"]))
            p.drawText(self.rect().adjusted(8, 8, -8, -8), Qt.TextFlag.TextWordWrap, self.note or "No timing stored.")
            p.end()
            return
        top = max((ms for _n, ms in self.phases), default=1.0) or 1.0
        label_w, value_w = 90, 80
        bar_w = max(self.width() - label_w - value_w - 24, 40)
        y = 8
        for name, ms in self.phases:
            p.setPen(QColor(COLORS["text"]))
            p.drawText(QRectF(8, y, label_w, 20), Qt.AlignmentFlag.AlignVCenter, name)
            w = max(2.0, bar_w * ms / top)
            p.fillRect(QRectF(8 + label_w, y + 3, w, 14), QColor(TARGET_COLOR))
            p.drawText(QRectF(8 + label_w + bar_w + 8, y, value_w, 20), Qt.AlignmentFlag.AlignVCenter,
                       f"{ms:.0f} ms")
            y += 24
        if self.note:
            p.setPen(QColor(COLORS["muted"]))
            p.drawText(QRectF(8, y + 4, self.width() - 16, 20), Qt.AlignmentFlag.AlignVCenter, self.note)
        p.end()


def _item(text: str, *, color: str | None = None, tip: str = "", right: bool = False) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if color:
        it.setForeground(QBrush(QColor(color)))
    it.setToolTip(tip or text)
    if right:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return it


class StepEditPanel(QWidget):
    """Edit the shown step's action, value and expected change in its flow file (:mod:`studio.step_edit`).

    The fields start from the flow file as it is on disk; each change shows
    the diff it would make; *Save to the flow file* writes it only while the
    file is still the one the diff was made on; *Undo* puts it back.  An
    irreversible step asks for a confirmation first.  ``written`` carries the
    flow file's path after a save or an undo.
    """

    written = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLineEdit, QPlainTextEdit  # noqa: PLC0415

        from core.domain import ACTION_KINDS  # noqa: PLC0415

        from .step_edit import EXPECT_CHOICES  # noqa: PLC0415

        self.setObjectName("stepEditPanel")
        self.path: Path | None = None
        self.step_id = ""
        self.text = ""
        self.new_text = ""
        self.last: Any = None
        self.heading = QLabel("")
        self.heading.setWordWrap(True)
        self.action = QComboBox()
        self.action.setObjectName("stepEditAction")
        for kind in ACTION_KINDS:
            self.action.addItem(kind, kind)
        self.value = QLineEdit()
        self.value.setObjectName("stepEditValue")
        self.value.setPlaceholderText("no value")
        self.expect = QComboBox()
        self.expect.setObjectName("stepEditExpect")
        for e in EXPECT_CHOICES:
            self.expect.addItem("as its action expects" if e == "auto" else e.replace("_", " "), e)
        form = QFormLayout()
        form.addRow("Action", self.action)
        form.addRow("Value", self.value)
        form.addRow("Expected change", self.expect)
        self.note = QLabel("")
        self.note.setObjectName("stepEditNote")
        self.note.setWordWrap(True)
        self.note.setMinimumHeight(40)
        self.confirm = QCheckBox("I checked: this step sends data that cannot be taken back, and this change is right")
        self.confirm.setObjectName("stepEditConfirm")
        self.save_button = QPushButton("Save to the flow file")
        self.save_button.setObjectName("stepEditSave")
        self.undo_button = QPushButton("Undo")
        self.undo_button.setObjectName("stepEditUndo")
        self.diff = QPlainTextEdit()
        self.diff.setObjectName("stepEditDiff")
        self.diff.setReadOnly(True)
        self.diff.setStyleSheet("font-family: monospace;")
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.undo_button)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.heading)
        lay.addLayout(form)
        lay.addWidget(self.confirm)
        lay.addLayout(buttons)
        lay.addWidget(self.note)
        lay.addWidget(QLabel("Change to the flow file:"))
        lay.addWidget(self.diff, 1)
        self.action.currentIndexChanged.connect(lambda _i: self.preview())
        self.expect.currentIndexChanged.connect(lambda _i: self.preview())
        self.value.textEdited.connect(lambda _t: self.preview())
        self.confirm.toggled.connect(lambda _on: self._buttons())
        self.save_button.clicked.connect(self.save)
        self.undo_button.clicked.connect(self.undo)
        self.load(None, "")

    def load(self, flow: Any, step_id: str) -> None:
        """Start from step ``step_id`` of ``flow``'s file as it is on disk (None: nothing to edit)."""
        from core.project.loader import load_flow  # noqa: PLC0415

        self.path, self.step_id, self.text, self.new_text = None, step_id, "", ""
        step = None
        if flow is not None and getattr(flow, "source", None):
            try:
                fresh = load_flow(flow.source)
                step = next((x for x in fresh.steps if x.id == step_id), None)
                self.path = Path(fresh.source)
                self.text = self.path.read_text(encoding="utf-8")
            except Exception as exc:  # noqa: BLE001 - said, nothing editable
                self.heading.setText(f"The flow file does not load ({_h(exc)}): nothing can be edited here.")
                step = None
        for w in (self.action, self.value, self.expect):
            w.blockSignals(True)
        if step is None:
            if self.path is None or not self.text:
                self.heading.setText("This step's flow is not in the project: nothing to edit.")
            self.path = None
        else:
            self.heading.setText(f"<b>{_h(step.title)}</b> ({_h(step.id)}) in {_h(self.path.name)} · the "
                                 "fields show the flow file as it is now")
            self.action.setCurrentIndex(max(self.action.findData(step.action.kind), 0))
            self.value.setText(step.action.value)
            self.expect.setCurrentIndex(max(self.expect.findData(step.expect or "auto"), 0))
        for w in (self.action, self.value, self.expect):
            w.blockSignals(False)
            w.setEnabled(step is not None)
        self.irreversible = step is not None and not step.reversible
        self.confirm.setVisible(self.irreversible)
        self.confirm.setChecked(False)
        self.note.setText("")
        self.diff.setPlainText("")
        self._buttons()

    def changes(self) -> dict[str, Any]:
        """The entries that differ from the file: ``{"action": ..., "value": ..., "expect": ...}``."""
        import yaml  # noqa: PLC0415

        data = yaml.safe_load(self.text) if self.text else {}
        step = next((x for x in (data or {}).get("steps", []) if str(x.get("id")) == self.step_id), {})
        out: dict[str, Any] = {}
        if self.action.currentData() != step.get("action"):
            out["action"] = self.action.currentData()
        value = self.value.text()
        if value != str(step.get("value", "") if step.get("value") is not None else ""):
            out["value"] = value if value else None
        expect = self.expect.currentData()
        if expect != step.get("expect", "auto"):
            out["expect"] = None if expect == "auto" else expect
        return out

    def preview(self) -> str:
        """The diff the fields would make ("" when they make none, or with the reason they cannot)."""
        from core.heal.flowfile import unified_diff  # noqa: PLC0415

        from .step_edit import edit_step  # noqa: PLC0415

        self.new_text = ""
        changes = self.changes()
        if self.path is None or not changes:
            self.diff.setPlainText("")
            self.note.setText("")
            self._buttons()
            return ""
        try:
            self.new_text = edit_step(self.text, self.step_id, changes, path=self.path)
        except Exception as exc:  # noqa: BLE001 - said, not written
            self.note.setText(f"<span style='color:#f0524f'>Cannot be written: {_h(exc)}</span>")
            self.diff.setPlainText("")
            self._buttons()
            return ""
        self.note.setText("")
        diff = unified_diff(self.text, self.new_text, self.path.name)
        self.diff.setPlainText(diff)
        self._buttons()
        return diff

    def _buttons(self) -> None:
        self.save_button.setEnabled(bool(self.new_text) and (not self.irreversible or self.confirm.isChecked()))
        self.undo_button.setEnabled(self.last is not None)

    def save(self) -> bool:
        """Write the edit (the button); False with the reason shown when it cannot."""
        from .step_edit import StepEditError, write_step_edit  # noqa: PLC0415

        if not self.save_button.isEnabled() or self.path is None:
            return False
        try:
            self.last = write_step_edit(self.path, self.text, self.new_text)
        except StepEditError as exc:
            self.note.setText(f"<span style='color:#f0524f'>Not written: {_h(exc)}</span>")
            return False
        self.text, self.new_text = self.last.new_text, ""
        self.note.setText(f"<span style='color:#3fb96b'>Written to {_h(self.path.name)}. Undo puts it back.</span>")
        self.diff.setPlainText(self.last.diff)
        self._buttons()
        self.written.emit(self.path)
        return True

    def undo(self) -> bool:
        """Undo the last edit written here (the button)."""
        from .step_edit import StepEditError, undo_step_edit  # noqa: PLC0415

        if self.last is None:
            return False
        try:
            undo_step_edit(self.last)
        except StepEditError as exc:
            self.note.setText(f"<span style='color:#f0524f'>{_h(exc)}</span>")
            return False
        path, self.text, self.last = self.last.path, self.last.old_text, None
        self.note.setText(f"Undone: {_h(path.name)} is as it was before.")
        self.diff.setPlainText("")
        self._buttons()
        self.written.emit(path)
        return True


class StepInspector(QWidget):
    """Any step of a stored run, large, with its locator, verdict, requests, timing and a fix (see the module doc).

    Parameters
    ----------
    media_root : Path
        ``<project>/.steadyhand`` (the store and its screenshots).
    project : core.project.Project | None
        The project (its flows are where a picked target is written; its
        evidence level explains a missing screenshot); None: read only.
    """

    #: A picked target was written into a flow file (its path).
    flow_written = Signal(object)

    def __init__(self, media_root: Path, project: Project | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("stepInspector")
        self.setWindowTitle("Step inspector")
        self.media_root = Path(media_root)
        self.project = project
        self.run_id = ""
        self.flow = ""
        self.steps: list[StepRecordView] = []
        self.mode = "action"
        self.current: StepRecordView | None = None
        self.check: PickCheck | None = None
        self._images: dict[Path, QImage] = {}
        #: The live page's picture while :meth:`show_live` shows it (None: a stored run is shown).
        self.live_image: QImage | None = None

        self.header = QLabel("")
        self.header.setObjectName("inspectorHeader")
        self.header.setWordWrap(True)
        self.step_list = QListWidget()
        self.step_list.setObjectName("inspectorSteps")
        self.step_list.setMinimumWidth(210)
        self.step_list.currentRowChanged.connect(self.show_step)

        self.mode_buttons: dict[str, QPushButton] = {}
        group = QButtonGroup(self)
        group.setExclusive(True)
        bar = QHBoxLayout()
        for mode, text, tip in (("before", "Before", "The page before the action, its target outlined"),
                                ("action", "Action", "The page as the action was done: where it landed"),
                                ("after", "After", "The page after the action, what changed outlined")):
            b = QPushButton(text)
            b.setObjectName(f"inspectorMode_{mode}")
            b.setCheckable(True)
            b.setToolTip(tip)
            b.clicked.connect(lambda _c=False, m=mode: self.set_mode(m))
            group.addButton(b)
            bar.addWidget(b)
            self.mode_buttons[mode] = b
        bar.addSpacing(16)
        self.zoom_out = QPushButton("\u2212")
        self.zoom_out.setToolTip("Zoom out (Ctrl+wheel)")
        self.zoom_in = QPushButton("+")
        self.zoom_in.setToolTip("Zoom in (Ctrl+wheel)")
        self.zoom_fit = QPushButton("Fit")
        self.zoom_fit.setToolTip("Fit the image in the window (Ctrl+0)")
        self.zoom_label = QLabel("")
        self.zoom_label.setMinimumWidth(48)
        for w in (self.zoom_out, self.zoom_in, self.zoom_fit):
            w.setFixedWidth(44)
            bar.addWidget(w)
        bar.addWidget(self.zoom_label)
        bar.addStretch(1)
        self.pick_button = QPushButton("Pick an element")
        self.pick_button.setObjectName("inspectorPick")
        self.pick_button.setCheckable(True)
        self.pick_button.setToolTip("Hover the image to outline elements; click one to make it this step's target")
        self.pick_button.toggled.connect(self.set_picking)
        bar.addWidget(self.pick_button)
        self.canvas = ShotCanvas()
        self.scroll = _Scroll(self.canvas)
        self.caption = QLabel("")
        self.caption.setObjectName("inspectorCaption")
        self.caption.setWordWrap(True)
        self.caption.setStyleSheet(f"color: {COLORS['muted']};")
        self.zoom_out.clicked.connect(lambda: self.canvas.set_zoom(self.canvas.scale() * 0.8))
        self.zoom_in.clicked.connect(lambda: self.canvas.set_zoom(self.canvas.scale() * 1.25))
        self.zoom_fit.clicked.connect(lambda: self.canvas.set_zoom(None))
        self.canvas.zoom_changed.connect(lambda s: self.zoom_label.setText(f"{s * 100:.0f}%"))
        self.canvas.picked.connect(self.pick)
        center = QWidget()
        cl = QVBoxLayout(center)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addLayout(bar)
        cl.addWidget(self.scroll, 1)
        cl.addWidget(self.caption)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("inspectorTabs")
        self.step_view = QTextBrowser()
        self.step_view.setObjectName("inspectorStep")
        self.locator_view = QTextBrowser()
        self.locator_view.setObjectName("inspectorLocator")
        self.network = QTableWidget(0, 5)
        self.network.setObjectName("inspectorNetwork")
        self.network.setHorizontalHeaderLabels(["Method", "Address", "Status", "Type", "At"])
        self.console = QTextBrowser()
        self.console.setObjectName("inspectorConsole")
        self.phases = PhaseBars()
        self.elements = QTableWidget(0, 3)
        self.elements.setObjectName("inspectorElements")
        self.elements.setHorizontalHeaderLabels(["Element", "Accessible name", "Attributes"])
        self.elements.setMouseTracking(True)
        self.elements.cellEntered.connect(self._element_hovered)
        self.elements.cellDoubleClicked.connect(lambda row, _c: self._element_chosen(row))
        for t in (self.network, self.elements):
            t.verticalHeader().setVisible(False)
            t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
            t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
            t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            t.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.pick_panel = PickPanel()
        self.pick_panel.applied.connect(lambda r: self._written(r.path))
        self.pick_panel.undone.connect(self._written)
        self.edit_panel = StepEditPanel()
        self.edit_panel.written.connect(self._written)
        for w, title in ((self.step_view, "Step"), (self.locator_view, "Locator"), (self.network, "Network"),
                         (self.console, "Console"), (self.phases, "Timing"), (self.elements, "Elements"),
                         (self.pick_panel, "Fix"), (self.edit_panel, "Edit")):
            self.tabs.addTab(w, title)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.step_list)
        split.addWidget(center)
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 5)
        split.setStretchFactor(2, 3)
        split.setSizes([220, 760, 620])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.header)
        lay.addWidget(split, 1)
        for key, slot in (("Ctrl+0", lambda: self.canvas.set_zoom(None)),
                          ("PgDown", lambda: self.step_list.setCurrentRow(self.step_list.currentRow() + 1)),
                          ("PgUp", lambda: self.step_list.setCurrentRow(max(self.step_list.currentRow() - 1, 0))),
                          ("1", lambda: self.set_mode("before")), ("2", lambda: self.set_mode("action")),
                          ("3", lambda: self.set_mode("after")), ("Escape", lambda: self.pick_button.setChecked(False))):
            QShortcut(QKeySequence(key), self, activated=slot)  # type: ignore[call-overload]
        self.mode_buttons[self.mode].setChecked(True)
        self.setStyleSheet(f"QPushButton:checked {{ background: #2f3a52; border: 1px solid {COLORS['accent']}; "
                           f"color: {COLORS['text']}; }}")
        self.resize(1600, 900)

    # --- opening -----------------------------------------------------------------------
    @property
    def evidence_level(self) -> str:
        return getattr(getattr(self.project, "engine_settings", None), "evidence", "") or "full"

    def open_run(self, run_id: str, index: int = 0) -> bool:
        """Show run ``run_id`` (a full id or a unique prefix) at step ``index`` (0-based flow index); False with a
        plain note in the header when the store does not know it."""
        db = self.media_root / "store.sqlite"
        if not db.is_file():
            self.header.setText("No run is stored for this project yet.")
            return False
        try:
            with Store.open(db, read_only=True) as store:
                full = store.resolve_run_id(run_id)
                loaded = load_step_records(store, full)
        except Exception as exc:  # noqa: BLE001 - said in the window, never raised into the GUI
            self.header.setText(f"Could not read run {run_id[:8]} from the store: {exc}")
            return False
        if loaded is None:
            self.header.setText(f"Run {run_id[:8]} is not in the store.")
            return False
        detail, steps = loaded
        flow_steps = getattr(getattr(self.project, "flows", {}).get(detail.run.flow), "steps", ()) \
            if self.project is not None else ()
        for v in steps:  # a step the run is paused at has no stored title: the flow's
            if not v.step.title and 0 <= v.index < len(flow_steps):
                v.step = replace(v.step, title=flow_steps[v.index].title)
        self.live_image = None
        self.run_id, self.flow, self.steps = full, detail.run.flow, steps
        self._images.clear()
        r = detail.run
        self.setWindowTitle(f"Step inspector \u2014 {r.flow}, run {full[:8]}")
        self.header.setText(
            f"<b>{_h(r.flow)}</b> \u2014 run {_h(full[:8])}, {r.started_at:%Y-%m-%d %H:%M:%S} UTC, "
            f"<span style='color:{status_color(r.status).name()}'>{_h(status_label(r.status))}</span>, "
            f"{len(steps)} step{'s' * (len(steps) != 1)} run \u00b7 <i>recorded data, nothing is re-run</i>")
        self.step_list.blockSignals(True)
        self.step_list.clear()
        for s in steps:
            it = QListWidgetItem(f"{s.index + 1}. {s.step.title}  [{status_label(s.step.status)}]")
            it.setForeground(QBrush(status_color(s.step.status)))
            it.setToolTip(f"{s.step.ms:.0f} ms, {s.step.attempts} attempt{'s' * (s.step.attempts != 1)}")
            self.step_list.addItem(it)
        self.step_list.blockSignals(False)
        row = next((i for i, s in enumerate(steps) if s.index == index), -1)
        if row < 0 and index >= 0:  # never another step in its place without saying so
            self.header.setText(self.header.text() + f" \u00b7 <b>step {index + 1} is not stored yet</b>")
        row = max(row, 0)
        self.step_list.setCurrentRow(row)
        self.show_step(row)
        return True

    # --- showing a step ----------------------------------------------------------------
    def _image(self, path: Path | None) -> QImage:
        if path is None:
            return QImage()
        img = self._images.get(path)
        if img is None:
            img = QImage(str(path))
            if len(self._images) > 12:
                self._images.clear()
            self._images[path] = img
        return img

    def show_step(self, row: int) -> None:
        """Show the step at ``row`` of the list."""
        if not (0 <= row < len(self.steps)):
            return
        s = self.current = self.steps[row]
        self.check = None
        self.pick_button.setChecked(False)
        self.pick_panel.clear()
        self.pick_panel.set_context(self.project.root if self.project else None, self.run_id, s.before_rel,
                                    self.project.name if self.project else "")
        self._show_image()
        self.edit_panel.load(self.project.flows.get(self.flow) if self.project else None, s.step.step_id)
        self._fill_step(s)
        self._fill_locator(s)
        self._fill_network(s)
        self._fill_console(s)
        self._fill_timing(s)
        self._fill_elements()

    def set_mode(self, mode: str) -> None:
        """Show the ``before``, ``action`` or ``after`` image."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self.mode_buttons[mode].setChecked(True)
        self._show_image()
        self._fill_elements()

    @property
    def when(self) -> str:
        """The observation the image shows: ``before`` (Before and Action) or ``after``."""
        return "after" if self.mode == "after" else "before"

    def _show_image(self) -> None:
        s = self.current
        c = self.canvas
        if s is None:
            c.show_image(QImage(), 1.0, message="Choose a step.")
            return
        when = self.when
        obs = s.observation(when)
        img = (self.live_image if when == "before" else QImage()) if self.live_image is not None else \
            self._image(s.image(when))
        if self.live_image is not None:
            message = "" if not img.isNull() else "The live page has no \u2018after\u2019 yet: its step has not acted."
        else:
            message = "" if not img.isNull() else missing_shot_words(when, self.evidence_level, s.step.status)
        c.target = s.target_box if self.mode in ("before", "action") else None
        c.point = s.point if self.mode == "action" else None
        diff = s.evidence.diff if s.evidence is not None else None
        c.regions = tuple(diff.regions) if (diff is not None and self.mode == "after") else ()
        c.elements = obs.elements if obs is not None else ()
        c.chosen = None
        dpr = obs.dpr if obs is not None else (diff.device_pixel_ratio if diff is not None else 1.0)
        c.show_image(img, dpr, message=message)
        self.zoom_label.setText(f"{c.scale() * 100:.0f}%" if not img.isNull() else "")
        self.pick_button.setEnabled(bool(c.elements) and not img.isNull() and self.project is not None)
        self.pick_button.setToolTip(
            "Hover the image to outline elements; click one to make it this step's target" if self.pick_button.isEnabled()
            else ("The page's elements were not kept with this image" if not img.isNull() else message))
        url = s.urls.get(when, "")
        words = {"before": "Before the action", "action": "The action", "after": "After the action"}[self.mode]
        extra = ""
        if img.isNull():
            pass
        elif self.mode == "action":
            extra = (" \u00b7 the red dot is where the pointer landed" if s.point else
                     " \u00b7 the blue box is the element acted on" if s.target_box else " \u00b7 no element was acted on")
        elif self.mode == "before" and s.target_box:
            extra = " \u00b7 the blue box is the step's target"
        elif self.mode == "after" and c.regions:
            extra = " \u00b7 dashed red boxes: what changed"
        self.caption.setText(f"{words}{extra}" + (f" \u00b7 {url}" if url else ""))

    def _fill_step(self, s: StepRecordView) -> None:
        st = s.step
        color = status_color(st.status).name()
        parts = [f"<h3>{s.index + 1}. {_h(st.title)}</h3>",
                 f"<p><b>Result:</b> <span style='color:{color}'>{_h(status_label(st.status))}</span> \u00b7 "
                 f"{_h(s.action or '-')} \u00b7 {st.ms:.0f} ms \u00b7 {st.attempts} attempt{'s' * (st.attempts != 1)}"
                 f"</p>"]
        v = s.verdict
        if v is not None:
            parts.append(f"<p><b>Verdict:</b> {_h(VERDICT_WORDS.get(v.kind, v.kind.replace('_', ' ')))}</p>")
            rows = []
            if v.expected:
                rows.append(f"<li>expected: {_h(v.expected.replace('_', ' '))}</li>")
            rows.append(f"<li>seen: {_h(', '.join(o.replace('_', ' ') for o in v.observed) or 'no change')}</li>")
            if v.reason:
                rows.append(f"<li>why: {_h(_plain(v.reason))}</li>")
            parts.append("<ul>" + "".join(rows) + "</ul>")
        else:
            parts.append("<p><b>Verdict:</b> none (the step ended before its effect was checked)</p>")
        checks = s.evidence.assertions if s.evidence is not None else ()
        if checks:
            parts.append("<p><b>Assertions</b></p><ul>" + "".join(
                f"<li><span style='color:{'#3fb96b' if a.ok else '#f0524f'}'>{'held' if a.ok else 'failed'}</span>"
                f" \u2014 {_h(a.kind.replace('_', ' '))} {_h(a.target)}: expected {_h(a.expected or '-')}, "
                f"seen {_h(_plain(a.observed) or '-')}</li>" for a in checks) + "</ul>")
        if st.error:
            parts.append(f"<p><b>Error:</b> {_h(st.error)}</p>")
        for e in s.escalations:
            parts.append(f"<p><b>Asked a person:</b> {_h(e.plain or e.reason)}</p>")
        self.step_view.setHtml("".join(parts))

    def _fill_locator(self, s: StepRecordView) -> None:
        r = s.resolution
        if r is None:
            self.locator_view.setHtml("<p>No target was looked for: this action needs none, or the step ended "
                                      "before.</p>")
            return
        parts = [f"<p><b>How the target was found:</b> {_h(strategy_words(r.strategy, r.abstained))}</p>",
                 f"<p>score {r.score:.2f} \u00b7 lead over the next candidate {r.margin:.2f} \u00b7 {r.ms:.0f} ms</p>"]
        if r.reason:
            parts.append(f"<p><b>Why:</b> {_h(_plain(r.reason))}</p>")
        if s.locator:
            parts.append(f"<p><b>Playwright locator used for the action:</b> <code>{_h(s.locator)}</code></p>")
        elif s.snapshot and not r.abstained:
            parts.append("<p>The action went to the element the locator chain found (no recorded Playwright "
                         "locator was used).</p>")
        if r.top:
            parts.append("<p><b>Best candidates</b></p><table cellspacing=4>" + "".join(
                f"<tr><td>{i + 1}.</td><td>{_h(c.get('label', ''))}</td><td align=right>{float(c.get('score', 0)):.2f}"
                f"</td></tr>" for i, c in enumerate(r.top[:8])) + "</table>")
        if len(s.resolutions) > 1:
            parts.append("<p><b>Attempts</b></p><ol>" + "".join(
                f"<li>{_h(strategy_words(a.strategy, a.abstained))} ({a.score:.2f}): {_h(a.reason)}</li>"
                for a in s.resolutions) + "</ol>")
        self.locator_view.setHtml("".join(parts))

    def _fill_network(self, s: StepRecordView) -> None:
        failed = {(f.method, f.url) for f in (s.evidence.failed_requests if s.evidence else ())}
        rows: list[tuple[str, str, str, str, str, bool]] = []
        for r in s.requests:
            status = r.get("status")
            bad = (r.get("method"), r.get("url")) in failed or (isinstance(status, int) and status >= 400)
            rows.append((str(r.get("method", "")), str(r.get("url", "")), "" if status is None else str(status),
                         str(r.get("type", "")), f"{float(r.get('t_ms', 0.0)):.0f} ms", bad))
        if not s.snapshot:  # an older run: only the failed requests were stored
            for f in (s.evidence.failed_requests if s.evidence else ()):
                rows.append((f.method, f.url, "" if f.status is None else str(f.status), f.resource_type,
                             f"{f.t_ms:.0f} ms", True))
        self.network.setRowCount(len(rows))
        for i, (m, url, status, kind, at, bad) in enumerate(rows):
            color = "#f0524f" if bad else None
            for col, text in enumerate((m, url, status or "\u2014", kind, at)):
                self.network.setItem(i, col, _item(text, color=color, right=col == 4))
        self.tabs.setTabText(self.tabs.indexOf(self.network), f"Network ({len(rows)})")

    def _fill_console(self, s: StepRecordView) -> None:
        msgs = s.evidence.console if s.evidence is not None else ()
        if not msgs:
            self.console.setHtml("<p>No console error or uncaught exception while this step ran.</p>")
        else:
            self.console.setHtml("<ul>" + "".join(
                f"<li><b>{_h('uncaught exception' if m.kind == 'exception' else 'error')}</b> at {m.t_ms:.0f} ms: "
                f"{_h(m.text)}" + (f" <span style='color:{COLORS['muted']}'>({_h(m.source)})</span>" if m.source else "")
                + "</li>" for m in msgs) + "</ul>")
        self.tabs.setTabText(self.tabs.indexOf(self.console), f"Console ({len(msgs)})")

    def _fill_timing(self, s: StepRecordView) -> None:
        ev = s.evidence
        if ev is None or not ev.phase_ms:
            self.phases.set_phases([], "No time per phase was stored for this step.")
            return
        note = f"active {ev.active_ms:.0f} ms \u00b7 wall {ev.wall_ms:.0f} ms"
        if ev.paused_ms >= 1:
            note += f" \u00b7 paused or waiting for a person {ev.paused_ms:.0f} ms"
        self.phases.set_phases([(n, ms) for n, ms in ev.phase_ms], note)

    def _fill_elements(self) -> None:
        els = self.canvas.elements
        self.elements.setRowCount(len(els))
        for row, e in enumerate(els):
            d = e.descriptor
            attrs = "; ".join(f"{k}: {v}" for k, v in descriptor_rows(d) if k not in ("role", "tag", "accessible name",
                                                                                     "box (CSS px)", "CSS path"))
            state = [w for w, on in (("hidden", not e.visible), ("disabled", not e.enabled),
                                     ("covered", e.covered)) if on]
            kind = f"{d.role or d.tag}" + (f" ({', '.join(state)})" if state else "")
            self.elements.setItem(row, 0, _item(kind, color=COLORS["muted"] if state else None))
            self.elements.setItem(row, 1, _item(d.name or d.label_text))
            self.elements.setItem(row, 2, _item(attrs, tip="\n".join(f"{k}: {v}" for k, v in descriptor_rows(d))))
        where = "after" if self.when == "after" else "before"
        self.tabs.setTabText(self.tabs.indexOf(self.elements), f"Elements ({len(els)})")
        self.elements.setToolTip(f"The page's elements {where} the action; hover a row to outline it, "
                                 "double-click to pick it")

    def _element_hovered(self, row: int, _col: int) -> None:
        els = self.canvas.elements
        self.canvas.outline = els[row].box if 0 <= row < len(els) else None
        self.canvas.update()

    def _element_chosen(self, row: int) -> None:
        els = self.canvas.elements
        if 0 <= row < len(els) and self.pick_button.isEnabled():
            self.canvas.chosen = els[row]
            self.canvas.update()
            self.pick(els[row])

    def show_live(self, *, run_id: str, flow: str, index: int, image: QImage, candidates: Any, dpr: float,
                  url: str = "") -> bool:
        """Show the live page (the studio's live view: ``image``, whose image px per CSS px is ``dpr``, and the
        ``candidates`` of the observation its boxes came from) as step ``index`` of ``flow``, to pick its target
        there; False with a plain note when the project has no such step or there is no picture."""
        from core.store.records import StepRecord  # noqa: PLC0415

        from .step_record import ObservationSnapshot  # noqa: PLC0415

        f = self.project.flows.get(flow) if self.project is not None else None
        if f is None or not (0 <= index < len(f.steps)) or image.isNull():
            self.header.setText("Nothing to pick on: no live page of a flow of this project is shown.")
            return False
        step = f.steps[index]
        els = tuple(StoredElement(c.ref, c.descriptor, c.enabled, c.visible, c.editable, c.covered, c.checked)
                    for c in candidates)
        view = StepRecordView(flow=flow, run_id=run_id, step=StepRecord(index, step.id, step.title, "running", 0,
                                                                          0.0, ""),
                              action=step.action.kind, snapshot=True, urls={"before": url},
                              before=ObservationSnapshot(url, (0, 0), dpr, els))
        self.live_image = image
        self.run_id, self.flow, self.steps = run_id, flow, [view]
        self.setWindowTitle(f"Step inspector \u2014 {flow}, the live page")
        self.header.setText(f"<b>{_h(flow)}</b> \u2014 <b>the live page</b> at step {index + 1} "
                            f"\u2018{_h(step.title)}\u2019 \u00b7 <i>pick an element to make it this step's "
                            "target</i>")
        self.step_list.blockSignals(True)
        self.step_list.clear()
        self.step_list.addItem(QListWidgetItem(f"{index + 1}. {step.title}  [live page]"))
        self.step_list.blockSignals(False)
        self.step_list.setCurrentRow(0)
        self.show_step(0)
        self.set_mode("before")
        self.pick_button.setChecked(self.pick_button.isEnabled())
        return True

    # --- picking -----------------------------------------------------------------------
    def set_picking(self, on: bool) -> None:
        self.canvas.picking = bool(on) and self.pick_button.isEnabled()
        self.canvas.setCursor(Qt.CursorShape.CrossCursor if self.canvas.picking else Qt.CursorShape.ArrowCursor)
        if self.canvas.picking:
            self.caption.setText("Pick: hover the image, click the element this step must act on (Esc stops)")
        else:
            self.canvas.hover = None
            self.canvas.update()

    def pick(self, element: StoredElement) -> PickCheck | None:
        """``element`` of the shown observation was picked: check it and show the Fix target tab."""
        s = self.current
        if s is None or self.project is None:
            return None
        obs = s.observation(self.when)
        flow = self.project.flows.get(self.flow)
        self.tabs.setCurrentWidget(self.pick_panel)
        self.pick_panel.set_context(self.project.root, self.run_id,
                                    s.after_rel if self.when == "after" else s.before_rel, self.project.name)
        if flow is None or obs is None:
            self.pick_panel.clear(f"The flow \u2018{self.flow}\u2019 is not in the project any more: nothing can be "
                                  "set.")
            return None
        try:
            self.check = check_pick(flow, s.step.step_id, element, obs, self.project.engine_settings.locator)
        except PickError as exc:
            self.pick_panel.clear(str(exc))
            return None
        self.pick_panel.show_check(self.check)
        return self.check

    def _written(self, path: object) -> None:
        s = self.current
        if s is not None and self.sender() is not self.edit_panel:
            # a pick changed the file: the edit fields start again from it
            self.edit_panel.load(self.project.flows.get(self.flow) if self.project else None, s.step.step_id)
        self.flow_written.emit(path)


def install(window: Any) -> Callable[[str, int], StepInspector | None]:
    """Give the studio's main window its step inspector: double-click a step in History's Run tab or in the
    Timeline, or *View > Inspect step* (Ctrl+I); returns ``open(run_id, index)``.

    Uses only the window's public parts: ``project``, ``history_panel``,
    ``timeline_panel``, ``bridge`` (its events: each flow's store run id),
    ``view_menu`` and ``reload_project``.
    """
    from PySide6.QtGui import QAction  # noqa: PLC0415

    from core.engine.events import FlowStarted, ObservationMade  # noqa: PLC0415
    from core.store import STORE_DIRNAME  # noqa: PLC0415

    runs: dict[str, str] = {}  # flow -> the store run id of its latest live run

    def on_event(event: object) -> None:
        if isinstance(event, FlowStarted):
            runs[event.flow] = event.run_id

    window.bridge.event_received.connect(on_event)
    holder: dict[str, StepInspector] = {}

    def reloaded(ins: StepInspector) -> None:
        """A pick was written or undone: the window reads the project again (steps table, Recorder), and the
        inspector checks the next pick against it (refused while a run is on: the window says so)."""
        if window.reload_project():
            ins.project = window.project

    def open_step(run_id: str, index: int, show: bool = True) -> StepInspector | None:
        ins = holder.get("w")
        if ins is None or ins.project is not window.project:
            if ins is not None:
                ins.close()
            ins = StepInspector(window.project.root / STORE_DIRNAME, window.project, window)
            ins.flow_written.connect(lambda _p, w=ins: reloaded(w))
            holder["w"] = ins
        if not show:
            return ins
        if not ins.open_run(run_id, index):
            window.statusBar().showMessage(ins.header.text(), 8000)
        ins.show()
        ins.raise_()
        ins.activateWindow()
        return ins

    def from_history(row: int | None = None) -> bool:
        v = window.history_panel.viewer
        row = v.step_list.currentRow() if row is None else row
        if v.detail is None or not (0 <= row < len(v.steps)):
            return False
        open_step(v.detail.run.id, v.steps[row].index)
        return True

    def from_timeline(index: Any = None) -> bool:
        panel = window.timeline_panel
        idx = index if index is not None else panel.table.currentIndex()
        if idx is None or not idx.isValid():
            return False
        src = panel.proxy.mapToSource(idx)
        if not (0 <= src.row() < panel.model.rowCount()):
            return False
        step = panel.model.step(src.row())
        run_id = panel.model.run_id if panel.model.read_only else runs.get(step.flow, "")
        if not run_id:
            return False
        open_step(run_id, step.index)
        return True

    def inspect_current() -> None:
        hist = window.history_panel
        if hist.tabs.currentWidget() is hist.viewer and from_history():
            return
        if from_timeline():
            return
        if from_history():
            return
        window.statusBar().showMessage("Open a run in History (or select a step of the Timeline) to inspect "
                                       "its steps", 8000)

    live: dict[str, Any] = {}

    def on_observation(event: object) -> None:
        if isinstance(event, ObservationMade):
            live["at"] = event  # the page the run last looked at (before a step, or after one: the next step's)

    window.bridge.event_received.connect(on_observation)

    def pick_live() -> StepInspector | None:
        """The page the run last looked at, with that look's elements: before step N (or after step N - 1) is
        where step N acts.  Its own screenshot when it has one (the boxes are exactly that picture's); else the
        live view's frame, while it still shows the same address and scroll position."""
        lv = window.live_view
        at = live.get("at")
        if at is None or not at.observation.candidates or getattr(window, "_recording", False):
            window.statusBar().showMessage("Run a flow and pause it (or let it stop) at the step to fix: its live "
                                           "page is where the new target is picked", 8000)
            return None
        obs = at.observation
        index = at.index + (1 if at.when == "after" else 0)
        flow = window.project.flows.get(at.flow)
        if flow is None or index >= len(flow.steps):
            window.statusBar().showMessage("The run is past its last step: open the step in History to pick its "
                                           "target on its stored screenshot", 8000)
            return None
        image, dpr = (QImage.fromData(obs.screenshot_png, "PNG"), obs.device_pixel_ratio or 1.0) \
            if obs.screenshot_png else (QImage(), 1.0)
        if image.isNull():
            if lv.image.isNull() or not lv.boxes_current():
                window.statusBar().showMessage("The live page moved since its elements were read: press Step or "
                                               "Pause, then pick", 8000)
                return None
            image, dpr = lv.image.copy(), lv.device_pixel_ratio
        ins = open_step("", -1, show=False)
        if ins is None:
            return None
        ok = ins.show_live(run_id=runs.get(at.flow, at.run_id), flow=at.flow, index=index, image=image,
                           candidates=obs.candidates, dpr=dpr, url=obs.url)
        if not ok:
            window.statusBar().showMessage(ins.header.text(), 8000)
        ins.show()
        ins.raise_()
        return ins

    window.history_panel.viewer.step_list.itemDoubleClicked.connect(
        lambda item: from_history(window.history_panel.viewer.step_list.row(item)))
    window.timeline_panel.table.doubleClicked.connect(from_timeline)
    action = QAction("&Inspect step\u2026", window)
    action.setShortcut(QKeySequence("Ctrl+I"))
    action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
    action.setToolTip("The selected step of History or the Timeline, large, with its locator, verdict, requests "
                      "and timing; pick its target again")
    action.triggered.connect(lambda _c=False: inspect_current())
    window.addAction(action)
    window.view_menu.addSeparator()
    window.view_menu.addAction(action)
    window.action_inspect = action
    pick = QAction("&Pick a target on the live page\u2026", window)
    pick.setShortcut(QKeySequence("Ctrl+Shift+I"))
    pick.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
    pick.setToolTip("The page the run is paused at: click an element to make it the current step's target")
    pick.triggered.connect(lambda _c=False: pick_live())
    window.addAction(pick)
    window.view_menu.addAction(pick)
    window.action_pick_live = pick
    window.open_step_inspector = open_step
    window.pick_on_live_page = pick_live
    return open_step
