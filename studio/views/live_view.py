"""Live view: the page, live, with DOM boxes, the resolved target and the grid (P1, P2).

While a run goes the view shows the screencast of the engine's page
(:meth:`LiveView.set_frame`, frames decoded off the GUI thread by
:class:`studio.bridge.FrameDecoder`), with the boxes of the latest
observation drawn over it; otherwise the latest screenshot
(:meth:`LiveView.set_observation`, :meth:`LiveView.set_image`).

Three coordinate systems meet here:

- CSS px: candidate boxes (``descriptor.bbox``), viewport coordinates;
- image px: the screenshot, device px = CSS px * ``device_pixel_ratio``;
- widget px: the image scaled to fit the widget (aspect kept, centred).

:meth:`LiveView.map_to_widget` goes from the first to the last; painting,
hit testing and tests all use it; :meth:`LiveView.map_to_css` goes back from
widget px to CSS px.

Boxes are coloured by state (:meth:`LiveView.box_state`): enabled (blue),
disabled (grey), covered by an overlay (magenta), the current target (solid
amber) and the other candidates of the current resolution (dashed amber, with
their rank and score; overlapping labels are stacked so each stays
readable); a legend in the corner says so.  The grid is ``rows`` x ``cols``
(:meth:`LiveView.set_grid_size`, default 10 x 10, P2).  Zoom: Ctrl+wheel
(around the pointer), ``+`` / ``-``, ``0`` or ``F`` to fit when the view has the focus (the
window adds Ctrl++ / Ctrl+- / Ctrl+0, :func:`studio.views.resolution.install_resolution_dock`); pan: drag, or the
wheel while zoomed (outside interactive mode).  Hovering an element shows its
descriptor (role, accessible name, label, text, test id, anchor, box in CSS
px) as a tooltip; a click on a box reports it (``candidate_clicked``).

Interactive mode (:meth:`LiveView.set_interactive`, used while recording on a
headless Chromium): clicks, double clicks, wheel turns and key presses on the
view are reported as signals in CSS px / Playwright key names, for the
recorder to replay on the page; the view paints a red "REC" frame.
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush, QColor, QFont, QFontMetricsF, QHelpEvent, QImage, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPen, QWheelEvent,
)
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu, QSizePolicy, QToolTip, QWidget

from core.domain import BBox, Candidate, Observation, Resolution
from core.perception.grid import DEFAULT_COLS, DEFAULT_ROWS, Grid

from ..theme import COLORS

__all__ = [
    "LiveView", "GRID_PEN_WIDTH", "GRID_COLOR", "BOX_COLOR", "TARGET_COLOR", "HIGHLIGHT_COLOR", "REC_COLOR",
    "WHEEL_STEP_CSS", "playwright_key", "DISABLED_COLOR", "COVERED_COLOR", "STATE_COLORS", "LEGEND",
    "ZOOM_MIN", "ZOOM_MAX", "ZOOM_STEP", "GRID_PRESETS", "descriptor_lines",
]

#: Grid lines: 2 px semi-transparent red (P2: "2 px semi-transparent red lines").
GRID_PEN_WIDTH = 2
GRID_COLOR = QColor(255, 0, 0, 150)
#: Outline of candidate boxes, and of the hovered one.
BOX_COLOR = QColor(76, 141, 255, 210)
HOVER_COLOR = QColor(120, 180, 255, 255)
#: Outline of the resolved target of the current step.
TARGET_COLOR = QColor(245, 165, 36, 255)
#: Outline of the candidate the user points at in the escalation panel.
HIGHLIGHT_COLOR = QColor(64, 224, 208, 255)
#: Outline of a disabled element's box, and of one covered by an overlay (a popup, a banner).
DISABLED_COLOR = QColor(150, 150, 150, 230)
COVERED_COLOR = QColor(214, 64, 200, 235)
#: Box state (:meth:`LiveView.box_state`) -> outline colour.
STATE_COLORS: dict[str, QColor] = {"enabled": BOX_COLOR, "disabled": DISABLED_COLOR, "covered": COVERED_COLOR,
                                   "target": TARGET_COLOR, "candidate": TARGET_COLOR}
#: The legend, in the order it is drawn: (state, text).
LEGEND: tuple[tuple[str, str], ...] = (("enabled", "enabled"), ("disabled", "disabled"), ("covered", "covered"),
                                       ("target", "target"), ("candidate", "candidate"))
#: Zoom bounds (1.0 = fit the widget) and the factor of one step (+ / -, one Ctrl+wheel notch).
ZOOM_MIN, ZOOM_MAX, ZOOM_STEP = 1.0, 8.0, 1.25
#: Grid sizes offered in the context menu (rows, cols); any 1..26 x >= 1 is accepted (P2).
GRID_PRESETS: tuple[tuple[int, int], ...] = ((5, 5), (10, 10), (15, 15), (20, 20))
#: Frame of the view in interactive (recording) mode.
REC_COLOR = QColor(240, 82, 79, 230)
#: CSS px scrolled per wheel notch (120 eighths of a degree), as Chromium does.
WHEEL_STEP_CSS = 100.0

_NAMED_KEYS: dict[Qt.Key, str] = {
    Qt.Key.Key_Return: "Enter", Qt.Key.Key_Enter: "Enter", Qt.Key.Key_Tab: "Tab", Qt.Key.Key_Backtab: "Tab",
    Qt.Key.Key_Escape: "Escape", Qt.Key.Key_Backspace: "Backspace", Qt.Key.Key_Delete: "Delete",
    Qt.Key.Key_Left: "ArrowLeft", Qt.Key.Key_Right: "ArrowRight", Qt.Key.Key_Up: "ArrowUp",
    Qt.Key.Key_Down: "ArrowDown", Qt.Key.Key_Home: "Home", Qt.Key.Key_End: "End",
    Qt.Key.Key_PageUp: "PageUp", Qt.Key.Key_PageDown: "PageDown",
}


#: Space (widget px) between the page and a label drawn in the margin beside it.
GUTTER_GAP = 8.0


def playwright_key(key: int, modifiers: Qt.KeyboardModifier, text: str) -> tuple[str, str] | None:
    """Translate a Qt key press into ``("type", text)``, ``("key", playwright_name)`` or None.

    Printable text without Ctrl/Alt/Meta is typed; Enter, Tab, Escape,
    Backspace, Delete, arrows, Home/End and PageUp/PageDown become Playwright
    key names with their modifiers (``"Shift+Tab"``); Ctrl (or Meta) with a
    letter or digit becomes ``"Control+a"``.  Anything else (a lone
    modifier, function keys) is None.
    """
    mods = Qt.KeyboardModifier(modifiers)
    ctrl = bool(mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.MetaModifier))
    alt = bool(mods & Qt.KeyboardModifier.AltModifier)
    shift = bool(mods & Qt.KeyboardModifier.ShiftModifier) or key == Qt.Key.Key_Backtab
    try:
        qkey = Qt.Key(key)
    except ValueError:
        qkey = None
    name = _NAMED_KEYS.get(qkey) if qkey is not None else None
    if name is not None:
        prefix = "".join(p for p, on in (("Control+", ctrl), ("Alt+", alt), ("Shift+", shift)) if on)
        return ("key", prefix + name)
    if ctrl and alt and text and text.isprintable():
        return ("type", text)  # AltGr (reported as Ctrl+Alt on some platforms) typing "@", "{"...
    if ctrl or alt:
        if Qt.Key.Key_A <= key <= Qt.Key.Key_Z or Qt.Key.Key_0 <= key <= Qt.Key.Key_9:
            char = chr(key).lower()
            prefix = "".join(p for p, on in (("Control+", ctrl), ("Alt+", alt), ("Shift+", shift)) if on)
            return ("key", prefix + char)
        return None
    if text and text.isprintable():
        return ("type", text)
    return None


def descriptor_lines(candidate: Candidate) -> list[tuple[str, str]]:
    """The descriptor of a box as (field, value) rows, empty fields left out; the box in CSS px.

    Fields: role, accessible name, label, text, placeholder, test id, id, anchor (its text and
    offset in CSS px), container, grid cell, box ``x, y  w x h`` (CSS px) and the state flags.
    """
    d = candidate.descriptor
    rows = [("role", d.role or d.tag), ("name", d.name), ("label", d.label),
            ("text", d.text if d.text != d.name else ""), ("placeholder", d.placeholder), ("test id", d.test_id),
            ("id", d.id)]
    if d.anchor is not None:
        rows.append(("anchor", f"“{d.anchor.text}” {d.anchor.role} ({d.anchor.dx:+.0f}, {d.anchor.dy:+.0f}) px"))
    rows.append(("container", d.container))
    rows.append(("grid cell", candidate.grid_cell))
    if d.bbox is not None:
        b = d.bbox
        rows.append(("box (CSS px)", f"{b.x:.0f}, {b.y:.0f} \u00b7 {b.width:.0f} \u00d7 {b.height:.0f}"))
    flags = [f for f, on in (("disabled", not candidate.enabled), ("covered", candidate.covered),
                             ("hidden", not candidate.visible)) if on]
    rows.append(("state", ", ".join(flags) or "enabled"))  # no "ref": the observation's own id means nothing to a person
    return [(k, " ".join(str(v).split())[:120]) for k, v in rows if v]


class LiveView(QWidget):
    """Screenshot canvas with candidate boxes, target highlight and grid overlay.

    Signals
    -------
    candidate_hovered(object)
        The candidate under the mouse, or None.
    page_clicked(float, float, bool)
        Interactive mode: a left click (``False``) or a double click
        (``True``) at ``(x, y)`` CSS px of the page - one signal per gesture:
        a single click is reported once the double-click interval has passed
        without a second click (or at once when other input follows), so a
        double click is never preceded by a separate single click.
    page_scrolled(float, float, float, float)
        Interactive mode: the wheel turned over ``(x, y)`` CSS px; scroll by
        ``(dx, dy)`` CSS px (positive = right / down, Playwright's sign).
    text_typed(str)
        Interactive mode: printable text typed while the view has focus.
    key_pressed(str)
        Interactive mode: a special key, as a Playwright key name
        (``"Enter"``, ``"Shift+Tab"``, ``"ArrowLeft"``, ``"Control+a"``).
    candidate_clicked(object, QPoint)
        Outside interactive mode: a click (not a drag) on a box - the candidate and the global
        position of the click (where a menu opens).
    zoom_changed(float)
        The zoom factor (1.0 = fit) changed.
    """

    candidate_hovered = Signal(object)
    page_clicked = Signal(float, float, bool)
    page_scrolled = Signal(float, float, float, float)
    text_typed = Signal(str)
    pointer_moved = Signal(float, float)
    key_pressed = Signal(str)
    candidate_clicked = Signal(object, object)
    zoom_changed = Signal(float)
    #: The widget's new size (w, h px): the box frames are fitted into (:meth:`fit_box`).
    resized = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._image = QImage()
        self._scaled = QImage()
        self._dpr = 1.0
        self._streaming = False  # showing live frames (set_frame): observations bring boxes only
        self._frame_at: tuple[str, tuple[float, float]] = ("", (0.0, 0.0))  # the live frame's URL and scroll
        self._boxes_at: tuple[str, tuple[float, float]] = ("", (0.0, 0.0))  # the boxes' observation's
        self._frame_serial = 0
        self._painted_serial = 0
        #: Live frames painted (each counted once, at its first paint): what a person saw of the screencast.
        self.frames_painted = 0
        self._candidates: tuple[Candidate, ...] = ()
        self._target: Candidate | None = None
        self._target_label = ""
        self._alternatives: tuple[tuple[Candidate, str], ...] = ()
        self._highlight: tuple[BBox, str] | None = None
        self._hover: Candidate | None = None
        self._grid_visible = False
        self._boxes_visible = True
        self._grid_rows = DEFAULT_ROWS
        self._grid_cols = DEFAULT_COLS
        self._zoom = 1.0
        self._pan = QPointF(0.0, 0.0)
        self._drag: tuple[QPointF, QPointF] | None = None  # (press position, pan at press), outside interactive
        self._dragged = False
        self._legend_visible = True
        self._placeholder = "No screenshot yet \u2014 press Start (F5)"
        self._interactive = False
        self._picking = False
        self._press: QPointF | None = None
        self._pending_click: tuple[float, float] | None = None
        self._click_timer = QTimer(self)
        self._click_timer.setSingleShot(True)
        self._click_timer.timeout.connect(self.flush_click)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)

    # --- content ---------------------------------------------------------------------------

    def set_observation(self, observation: Observation, image: QImage) -> None:
        """Show ``image`` (the decoded ``observation.screenshot_png``) and its candidates.

        A null ``image`` (a superseded or missing screenshot) is ignored: the
        view keeps showing the previous observation rather than boxes
        without their picture - unless the view shows live frames
        (:meth:`set_frame`): then the observation's boxes are drawn over the
        live page (the frames are the page; the observation says where its
        elements are).
        """
        at = (str(observation.url), (float(observation.scroll[0]), float(observation.scroll[1])))
        if image.isNull():
            if self._streaming:
                self._candidates = tuple(observation.candidates)
                self._boxes_at = at
                self._hover = None
                self.update()
            return
        self.set_image(image, device_pixel_ratio=observation.device_pixel_ratio,
                       candidates=observation.candidates)
        self._boxes_at = self._frame_at = at

    def set_frame(self, image: QImage, css_width: float, scaled: QImage | None = None, *, url: str = "",
                  scroll: tuple[float, float] = (0.0, 0.0)) -> None:
        """Show a live frame of the page (the screencast): ``image`` in image px, the page ``css_width`` CSS px wide.

        The boxes, the target and the highlight stay (they come with the
        observations); image px per CSS px is ``image.width() / css_width``.
        ``scaled``: the frame already scaled to fit :meth:`fit_box` (off the
        GUI thread, :class:`studio.bridge.FrameDecoder`), used when it still
        fits; otherwise the frame is scaled at its first paint.  ``url`` and
        ``scroll`` (CSS px) say what the frame shows: while they differ from
        those of the observation the boxes came from (:meth:`boxes_current`),
        the boxes, target and highlight are not drawn (they would point at
        another page or place).  A null ``image`` is ignored.
        """
        if image.isNull():
            return
        self._frame_at = (url, (float(scroll[0]), float(scroll[1])))
        self._image = image
        self._scaled = scaled if scaled is not None else QImage()
        self._dpr = image.width() / css_width if css_width > 0 else 1.0
        self._streaming = True
        self._frame_serial += 1
        self.update()

    def boxes_current(self) -> bool:
        """True when the boxes belong to the picture shown: always for a screenshot; for a live frame, when
        its URL and scroll position are those of the observation the boxes came from."""
        (url, (fx, fy)), (burl, (bx, by)) = self._frame_at, self._boxes_at
        return not self._streaming or not url or (url == burl and abs(fx - bx) <= 1.0 and abs(fy - by) <= 1.0)

    def fit_box(self) -> tuple[int, int]:
        """The box (w, h widget px) an image is fitted into at zoom 1: the widget's size."""
        return (self.width(), self.height())

    @property
    def streaming(self) -> bool:
        """True while the view shows live frames (:meth:`set_frame`) rather than screenshots."""
        return self._streaming

    def set_image(self, image: QImage, *, device_pixel_ratio: float = 1.0,
                  candidates: tuple[Candidate, ...] = ()) -> None:
        """Show ``image`` (device px) with ``candidates`` (boxes in CSS px)."""
        self._streaming = False
        self._image = image
        self._scaled = QImage()
        self._dpr = float(device_pixel_ratio) or 1.0
        self._candidates = tuple(candidates)
        self._hover = None
        self.update()

    def set_target(self, candidate: Candidate | None, label: str = "") -> None:
        """Highlight ``candidate`` (the resolved target of the current step); None clears it.

        Also clears the alternatives of an abstained step.
        """
        self._target = candidate
        self._target_label = label
        self._alternatives = ()
        self.update()

    def set_alternatives(self, items: Sequence[tuple[Candidate, str]]) -> None:
        """Outline (dashed) the candidates the locator could not tell apart, each with a label.

        Shown when a step abstains, so that the user sees which elements
        were ambiguous; :meth:`set_target` clears them.
        """
        self._alternatives = tuple(items)
        self.update()

    def show_resolution(self, resolution: Resolution, candidate: Candidate | None) -> None:
        """Show a step's resolution: its pick as the target (labelled ``strategy score``) and its other
        top candidates (at most 3, labelled ``#rank score``) as the resolution's candidates; an abstention
        shows its top candidates only."""
        by_ref = {c.ref: c for c in self._candidates}
        if candidate is None or resolution.abstained:
            self.set_target(None)
            self.set_alternatives([(by_ref[s.ref], f"#{i + 1} {s.score:.2f}")
                                   for i, s in enumerate(resolution.top[:3]) if s.ref in by_ref])
            return
        self.set_target(candidate, f"{resolution.strategy} {resolution.score:.2f}")
        self.set_alternatives([(by_ref[s.ref], f"#{i + 1} {s.score:.2f}") for i, s in enumerate(resolution.top[:3])
                               if s.ref in by_ref and s.ref != candidate.ref])

    @property
    def alternatives(self) -> tuple[tuple[Candidate, str], ...]:
        return self._alternatives

    def set_highlight(self, box: BBox | None, label: str = "") -> None:
        """Outline ``box`` (CSS px of the shown page) with ``label``: a candidate the user points at.

        None clears it.  Independent of the target and the alternatives.
        """
        self._highlight = (box, label) if box is not None else None
        self.update()

    @property
    def highlight(self) -> tuple[BBox, str] | None:
        """The highlighted box and its label, or None."""
        return self._highlight

    def clear(self) -> None:
        """Forget image, candidates, target and highlight."""
        self.set_image(QImage())
        self._frame_at = self._boxes_at = ("", (0.0, 0.0))
        self.set_target(None)
        self.set_highlight(None)

    def set_placeholder(self, text: str) -> None:
        """Text shown when there is no screenshot."""
        self._placeholder = text
        self.update()

    @property
    def image(self) -> QImage:
        return self._image

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        return self._candidates

    @property
    def target(self) -> Candidate | None:
        return self._target

    @property
    def device_pixel_ratio(self) -> float:
        """Device px per CSS px of the shown screenshot."""
        return self._dpr

    def boxes_visible(self) -> bool:
        return self._boxes_visible

    def set_boxes_visible(self, visible: bool) -> None:
        """Show or hide the candidates' DOM boxes (the target stays highlighted)."""
        self._boxes_visible = bool(visible)
        self.update()

    # --- interactive mode ------------------------------------------------------------------

    def interactive(self) -> bool:
        """True while clicks, wheel and keys are forwarded to the page (recording)."""
        return self._interactive

    def set_interactive(self, on: bool, *, picking: bool = False) -> None:
        """Forward input as signals (and take keyboard focus on click); ``picking`` shows a cross cursor.

        Off (the default) the view is a passive canvas, exactly as before.
        """
        self.flush_click()
        self._interactive = bool(on)
        self._picking = bool(on and picking)
        self._press = None
        if self._interactive:
            self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            self.setCursor(Qt.CursorShape.CrossCursor if self._picking else Qt.CursorShape.PointingHandCursor)
        else:
            self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            self.unsetCursor()
        self.update()

    def flush_click(self) -> None:
        """Report a single click still waiting to see whether it becomes a double click."""
        self._click_timer.stop()
        pending, self._pending_click = self._pending_click, None
        if pending is not None:
            self.page_clicked.emit(pending[0], pending[1], False)

    def map_to_css(self, pos: QPointF) -> tuple[float, float] | None:
        """Map a point in widget px to CSS px of the page; None outside the image.

        The inverse of :meth:`map_to_widget`: ``(widget - offset) / scale / dpr``.
        """
        rect = self.image_rect()
        if rect.isEmpty() or not rect.contains(pos):
            return None
        k = self._dpr * self.scale()
        return ((pos.x() - rect.x()) / k, (pos.y() - rect.y()) / k)

    # --- grid -----------------------------------------------------------------------------

    def grid_visible(self) -> bool:
        return self._grid_visible

    def set_grid_visible(self, visible: bool) -> None:
        """Show or hide the A1..J10 grid overlay (P2)."""
        self._grid_visible = bool(visible)
        self.update()

    def grid_size(self) -> tuple[int, int]:
        """``(rows, cols)`` of the grid (P2: 10 x 10 by default)."""
        return self._grid_rows, self._grid_cols

    def set_grid_size(self, rows: int, cols: int) -> None:
        """Use a ``rows`` x ``cols`` grid (rows A.., columns 1..).

        Raises
        ------
        ValueError
            When rows is not within 1..26 or cols < 1 (:class:`core.perception.grid.Grid`).
        """
        Grid(1.0, 1.0, rows=rows, cols=cols)  # validates
        self._grid_rows, self._grid_cols = int(rows), int(cols)
        self.update()

    # --- zoom and pan ---------------------------------------------------------------------

    def zoom(self) -> float:
        """Zoom factor: 1.0 fits the widget (aspect kept), up to :data:`ZOOM_MAX`."""
        return self._zoom

    def set_zoom(self, factor: float, anchor: QPointF | None = None) -> None:
        """Zoom to ``factor`` (clamped to ZOOM_MIN..ZOOM_MAX) keeping the image point under ``anchor``
        (widget px; the widget's centre when None) where it is."""
        factor = max(ZOOM_MIN, min(ZOOM_MAX, float(factor)))
        if self._image.isNull():
            self._zoom = factor
            return
        anchor = anchor if anchor is not None else QPointF(self.width() / 2.0, self.height() / 2.0)
        before = self.image_rect()
        rel = ((anchor.x() - before.x()) / before.width(), (anchor.y() - before.y()) / before.height()) \
            if not before.isEmpty() else (0.5, 0.5)
        old = self._zoom
        self._zoom = factor
        if factor == ZOOM_MIN:
            self._pan = QPointF(0.0, 0.0)
        else:
            fit = self._fit_rect()
            w, h = fit.width() * factor, fit.height() * factor
            # place the image so that the anchor keeps its relative position on it
            x, y = anchor.x() - rel[0] * w, anchor.y() - rel[1] * h
            self._pan = QPointF(x - (fit.center().x() - w / 2.0), y - (fit.center().y() - h / 2.0))
            self._clamp_pan()
        self._scaled = QImage()
        self.update()
        if factor != old:
            self.zoom_changed.emit(factor)

    def zoom_in(self) -> None:
        self.set_zoom(self._zoom * ZOOM_STEP)

    def zoom_out(self) -> None:
        self.set_zoom(self._zoom / ZOOM_STEP)

    def fit(self) -> None:
        """Back to the whole page in the widget (zoom 1, no pan)."""
        self.set_zoom(ZOOM_MIN)

    def pan(self) -> QPointF:
        """Offset of the zoomed image from its centred position, widget px."""
        return QPointF(self._pan)

    def pan_by(self, dx: float, dy: float) -> None:
        """Move the zoomed image by ``(dx, dy)`` widget px (kept so that it still fills the view)."""
        if self._zoom <= ZOOM_MIN:
            return
        self._pan = QPointF(self._pan.x() + dx, self._pan.y() + dy)
        self._clamp_pan()
        self.update()

    def _clamp_pan(self) -> None:
        fit = self._fit_rect()
        w, h = fit.width() * self._zoom, fit.height() * self._zoom
        mx, my = max(0.0, (w - self.width()) / 2.0), max(0.0, (h - self.height()) / 2.0)
        self._pan = QPointF(max(-mx, min(mx, self._pan.x())), max(-my, min(my, self._pan.y())))

    # --- states and labels ----------------------------------------------------------------

    def box_state(self, candidate: Candidate) -> str:
        """``target``, ``candidate`` (of the current resolution), ``covered``, ``disabled`` or ``enabled``."""
        if self._target is not None and candidate.ref == self._target.ref:
            return "target"
        if any(c.ref == candidate.ref for c, _ in self._alternatives):
            return "candidate"
        if candidate.covered:
            return "covered"
        if not candidate.enabled:
            return "disabled"
        return "enabled"

    def legend_visible(self) -> bool:
        return self._legend_visible

    def set_legend_visible(self, visible: bool) -> None:
        """Show or hide the colour legend (bottom left)."""
        self._legend_visible = bool(visible)
        self.update()

    def legend_rect(self) -> QRectF:
        """Where the legend is drawn, widget px (empty without an image or when hidden)."""
        if self.image_rect().isEmpty() or not self._legend_visible:
            return QRectF()
        fm = self.fontMetrics()
        col_w = max(fm.horizontalAdvance(text) for _s, text in LEGEND) + 38
        col_h = len(LEGEND) * (fm.height() + 4) + 10
        if self._legend_in_column():  # in the margin beside the page, one row per state: it covers nothing
            return QRectF(8, self.height() - col_h - 8, col_w, col_h)
        w = sum(fm.horizontalAdvance(text) + 30 for _s, text in LEGEND) + 8
        h = fm.height() + 10
        if w > self.width() - 16 or h > self.image_rect().height() * 0.15:
            return QRectF()  # a small view: the legend would hide the page (it is in the context menu's tooltip)
        return QRectF(8, self.height() - h - 8, w, h)

    def _legend_in_column(self) -> bool:
        """The legend is drawn as a column in the margin left of the page: the row would cover the page
        and the column fits the margin (and the view's height)."""
        fm = self.fontMetrics()
        img = self.image_rect()
        row_w = sum(fm.horizontalAdvance(text) + 30 for _s, text in LEGEND) + 8
        col_w = max(fm.horizontalAdvance(text) for _s, text in LEGEND) + 38
        col_h = len(LEGEND) * (fm.height() + 4) + 10
        return row_w + 16 > img.left() and col_w + 16 <= img.left() and col_h + 16 <= self.height()

    def label_rects(self) -> list[tuple[str, QRectF]]:
        """The labels of the target and the resolution's candidates as drawn: (text, chip rect in widget px).

        A label goes beside the page when the page leaves a margin wide enough on the box's side (at the
        box's height, a leader line to it): it then covers nothing of the page (a table's header above the
        box, the box's neighbours).  Otherwise it goes above the box (below when there is no room above).
        Laid out so that no two overlap: a label that would cover an earlier one is stacked above it
        (or below it when there is no room above).
        """
        items: list[tuple[str, QRectF]] = []
        if self._target is not None and self._target.descriptor.bbox is not None:
            items.append((self._target_label or "target",
                          self.map_to_widget(self._target.descriptor.bbox).adjusted(-3, -3, 3, 3)))
        for cand, label in self._alternatives:
            if cand.descriptor.bbox is not None and (self._target is None or cand.ref != self._target.ref):
                items.append((label, self.map_to_widget(cand.descriptor.bbox).adjusted(-3, -3, 3, 3)))
        font = QFont(self.font())
        font.setBold(True)
        fm = QFontMetricsF(font)
        placed: list[tuple[str, QRectF]] = []
        img = self.image_rect()
        for text, r in items:
            w, h = fm.horizontalAdvance(text) + 12, fm.height() + 4
            left_room, right_room = img.left() - GUTTER_GAP, self.width() - img.right() - GUTTER_GAP
            y = min(max(r.center().y() - h / 2.0, 0.0), max(self.height() - h, 0.0))
            if w <= left_room and (r.center().x() - img.left() <= img.right() - r.center().x() or w > right_room):
                chip = QRectF(img.left() - GUTTER_GAP - w, y, w, h)  # in the margin left of the page
            elif w <= right_room:
                chip = QRectF(img.right() + GUTTER_GAP, y, w, h)  # in the margin right of the page
            else:
                chip = QRectF(r.x(), r.y() - h - 3, w, h)
                if chip.top() < 0:
                    chip.moveTop(r.bottom() + 2)
            for _ in range(len(placed) + 1):
                hit = next((q for _t, q in placed if q.intersects(chip)), None)
                if hit is None:
                    break
                up = hit.top() - h - 2
                chip.moveTop(up if up >= 0 else hit.bottom() + 2)
            placed.append((text, chip))
        return placed

    def grid_cells(self) -> list[tuple[str, QRectF]]:
        """Cells of the grid over the shown image, in widget px, row by row (A1..J10).

        Empty when there is no image.
        """
        rect = self.image_rect()
        if rect.isEmpty():
            return []
        grid = Grid(rect.width(), rect.height(), rows=self._grid_rows, cols=self._grid_cols)
        out = []
        for label in grid.labels():
            b = grid.cell_box(label)
            out.append((label, QRectF(rect.x() + b.x, rect.y() + b.y, b.width, b.height)))
        return out

    # --- geometry -------------------------------------------------------------------------

    def _fit_rect(self) -> QRectF:
        if self._image.isNull() or self.width() <= 0 or self.height() <= 0:
            return QRectF()
        iw, ih = self._image.width(), self._image.height()
        s = min(self.width() / iw, self.height() / ih)
        w, h = iw * s, ih * s
        return QRectF((self.width() - w) / 2.0, (self.height() - h) / 2.0, w, h)

    def image_rect(self) -> QRectF:
        """Where the image is drawn, in widget px: scaled to fit (aspect kept, centred), times the zoom,
        moved by the pan."""
        fit = self._fit_rect()
        if fit.isEmpty() or self._zoom == 1.0:
            return fit
        w, h = fit.width() * self._zoom, fit.height() * self._zoom
        c = fit.center()
        return QRectF(c.x() - w / 2.0 + self._pan.x(), c.y() - h / 2.0 + self._pan.y(), w, h)

    def scale(self) -> float:
        """Widget px per image (device) px; 0 without an image."""
        rect = self.image_rect()
        return rect.width() / self._image.width() if not rect.isEmpty() else 0.0

    def map_to_widget(self, bbox: BBox) -> QRectF:
        """Map a box in CSS px to widget px: ``css * dpr`` (image px) ``* scale + offset``."""
        rect = self.image_rect()
        k = self._dpr * self.scale()
        return QRectF(rect.x() + bbox.x * k, rect.y() + bbox.y * k, bbox.width * k, bbox.height * k)

    def candidate_at(self, pos: QPointF) -> Candidate | None:
        """The smallest candidate box under ``pos`` (widget px), or None."""
        best: Candidate | None = None
        best_area = float("inf")
        if not self.boxes_current():
            return None  # the boxes are of another page or place than the live frame shown
        for c in self._candidates:
            if c.descriptor.bbox is None:
                continue
            r = self.map_to_widget(c.descriptor.bbox)
            if r.contains(pos) and r.width() * r.height() < best_area:
                best, best_area = c, r.width() * r.height()
        return best

    @staticmethod
    def tooltip_text(candidate: Candidate) -> str:
        """Tooltip of a box: role and accessible name, then its descriptor (:func:`descriptor_lines`)."""
        d = candidate.descriptor
        name = d.label_text or d.tag or "?"
        lines = [f"<b>{_esc(d.role or d.tag or 'element')}</b> \u201c{_esc(name)}\u201d",
                 f"grid cell <b>{_esc(candidate.grid_cell or '?')}</b> \u00b7 ref {_esc(candidate.ref)}"]
        rows = "".join(f"<tr><td style='color:#8a93a6;padding-right:8px'>{_esc(k)}</td><td>{_esc(v)}</td></tr>"
                       for k, v in descriptor_lines(candidate) if k not in ("grid cell", "ref"))
        return "<br>".join(lines) + f"<table>{rows}</table>"

    # --- Qt -------------------------------------------------------------------------------

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(960, 540)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(320, 180)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            what = self._forwarded(event)
            # Plain typing and editing keys belong to the page, not to the window's shortcuts;
            # Ctrl+letter stays with the shortcuts (it reaches the page only when no shortcut wants it).
            if what is not None and not what[1].startswith(("Control+", "Alt+")):
                event.accept()
                return True
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            c = self.candidate_at(QPointF(event.pos()))
            if c is not None:
                QToolTip.showText(event.globalPos(), self.tooltip_text(c), self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self._drag is not None:
            start, pan = self._drag
            delta = event.position() - start
            if delta.manhattanLength() >= QApplication.startDragDistance():
                self._dragged = True
            if self._dragged and self._zoom > ZOOM_MIN:
                self._pan = QPointF(pan.x() + delta.x(), pan.y() + delta.y())
                self._clamp_pan()
                self.setCursor(Qt.CursorShape.ClosedHandCursor)
                self.update()
        if self._interactive:
            css = self.map_to_css(event.position())
            if css is not None:
                self.pointer_moved.emit(css[0], css[1])
        c = self.candidate_at(event.position())
        if c is not self._hover:
            self._hover = c
            self.candidate_hovered.emit(c)
            self.update()
        super().mouseMoveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self._interactive and event.button() == Qt.MouseButton.LeftButton:
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            self._press = event.position() if self.map_to_css(event.position()) is not None else None
            event.accept()
            return
        if not self._interactive and event.button() == Qt.MouseButton.LeftButton:
            self._drag, self._dragged = (event.position(), QPointF(self._pan)), False
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self._interactive and event.button() == Qt.MouseButton.LeftButton:
            press, self._press = self._press, None
            if press is not None and (event.position() - press).manhattanLength() < QApplication.startDragDistance():
                css = self.map_to_css(press)
                if css is not None:
                    self.flush_click()  # an earlier click elsewhere: it was a single one
                    self._pending_click = css
                    self._click_timer.start(QApplication.doubleClickInterval())
            event.accept()
            return
        if not self._interactive and event.button() == Qt.MouseButton.LeftButton and self._drag is not None:
            dragged, self._drag, self._dragged = self._dragged, None, False
            self.unsetCursor()
            if not dragged:
                c = self.candidate_at(event.position())
                if c is not None:
                    self.candidate_clicked.emit(c, event.globalPosition().toPoint())
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self._interactive and event.button() == Qt.MouseButton.LeftButton:
            self._press = None  # the release that follows is not another click
            self._click_timer.stop()
            self._pending_click = None  # the first click of the pair is part of the double click
            css = self.map_to_css(event.position())
            if css is not None:
                self.page_clicked.emit(css[0], css[1], True)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt API
        angle = event.angleDelta()
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier and angle.y():
            self.set_zoom(self._zoom * ZOOM_STEP ** (angle.y() / 120.0), event.position())
            event.accept()
            return
        if not self._interactive and self._zoom > ZOOM_MIN:
            pixel = event.pixelDelta()
            d = pixel if not pixel.isNull() else angle / 120.0 * 60.0
            self.pan_by(float(d.x()), float(d.y()))
            event.accept()
            return
        css = self.map_to_css(event.position()) if self._interactive else None
        if css is None:
            super().wheelEvent(event)
            return
        self.flush_click()  # keep the order: the click happened before the scroll
        pixel = event.pixelDelta()
        if not pixel.isNull():  # a touchpad: device px of the view, roughly CSS px of the page
            k = self._dpr * self.scale() or 1.0
            dx, dy = -pixel.x() / k, -pixel.y() / k
        else:
            angle = event.angleDelta()
            dx, dy = -angle.x() / 120.0 * WHEEL_STEP_CSS, -angle.y() / 120.0 * WHEEL_STEP_CSS
        if dx or dy:
            self.page_scrolled.emit(css[0], css[1], float(dx), float(dy))
        event.accept()

    def _forwarded(self, event: QKeyEvent) -> tuple[str, str] | None:
        if not self._interactive:
            return None
        return playwright_key(event.key(), event.modifiers(), event.text())

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        what = self._forwarded(event)
        if what is None and not self._interactive:
            key = event.key()
            if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
                self.zoom_in()
            elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
                self.zoom_out()
            elif key in (Qt.Key.Key_0, Qt.Key.Key_F):
                self.fit()
            else:
                super().keyPressEvent(event)
                return
            event.accept()
            return
        if what is None:
            super().keyPressEvent(event)
            return
        self.flush_click()  # keep the order: click a field, then type into it
        kind, value = what
        if kind == "type":
            self.text_typed.emit(value)
        else:
            self.key_pressed.emit(value)
        event.accept()

    def context_menu(self) -> QMenu:
        """The view's context menu: zoom in / out / fit, grid size, legend (built fresh each time)."""
        menu = QMenu(self)
        menu.addAction("Zoom in (+ or Ctrl+wheel)", self.zoom_in)
        menu.addAction("Zoom out (\u2212)", self.zoom_out)
        menu.addAction("Fit (0)", self.fit)
        grid = menu.addMenu("Grid size")
        for rows, cols in GRID_PRESETS:
            a = grid.addAction(f"{rows} \u00d7 {cols}", lambda r=rows, c=cols: self.set_grid_size(r, c))
            a.setCheckable(True)
            a.setChecked((rows, cols) == self.grid_size())
        legend = menu.addAction("Legend", lambda: self.set_legend_visible(not self._legend_visible))
        legend.setCheckable(True)
        legend.setChecked(self._legend_visible)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt API
        if self._interactive:
            super().contextMenuEvent(event)
            return
        self.context_menu().exec(event.globalPos())
        event.accept()

    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: N802, A002 - Qt API
        if self._interactive:
            return False  # Tab / Shift+Tab go to the page, not to the next widget
        return super().focusNextPrevChild(next)

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        if self._hover is not None:
            self._hover = None
            self.candidate_hovered.emit(None)
            self.update()
        super().leaveEvent(event)

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        self._scaled = QImage()
        self.resized.emit(self.width(), self.height())
        super().resizeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(COLORS["canvas"]))
        rect = self.image_rect()
        if rect.isEmpty():
            p.setPen(QColor(COLORS["muted"]))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self._placeholder)
            p.end()
            return
        if self._streaming and self._frame_serial != self._painted_serial:
            self._painted_serial = self._frame_serial
            self.frames_painted += 1
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self._zoom == 1.0:
            p.drawImage(rect.topLeft(), self._scaled_image(rect))
        else:  # zoomed: let the painter scale the visible part only
            p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            p.drawImage(rect, self._image)
        current = self.boxes_current()
        if self._boxes_visible and current:
            self._paint_boxes(p)
        if self._grid_visible:
            self._paint_grid(p, rect)
        if current:
            chips = dict(self.label_rects())
            self._paint_alternatives(p, chips)
            self._paint_target(p, chips)
            self._paint_highlight(p)
        if self._interactive:
            self._paint_rec(p, rect)
        elif self._legend_visible and (self._boxes_visible or self._target is not None or self._alternatives) \
                and not self.legend_rect().isEmpty():
            self._paint_legend(p)
        if self._zoom != 1.0:
            self._paint_zoom(p)
        p.end()

    # --- painting -------------------------------------------------------------------------

    def _scaled_image(self, rect: QRectF) -> QImage:
        size = QSize(round(rect.width()), round(rect.height()))
        if self._scaled.isNull() or abs(self._scaled.width() - size.width()) > 1 \
                or abs(self._scaled.height() - size.height()) > 1:  # a frame scaled off-thread may be 1 px off
            self._scaled = self._image.scaled(size, Qt.AspectRatioMode.IgnoreAspectRatio,
                                              Qt.TransformationMode.SmoothTransformation)
        return self._scaled

    def _paint_boxes(self, p: QPainter) -> None:
        for c in self._candidates:
            if c.descriptor.bbox is None:
                continue
            r = self.map_to_widget(c.descriptor.bbox)
            hovered = c is self._hover
            state = self.box_state(c)
            color = HOVER_COLOR if hovered and state == "enabled" else STATE_COLORS.get(state, BOX_COLOR)
            if state in ("target", "candidate"):
                color = BOX_COLOR if not hovered else HOVER_COLOR  # outlined again, in amber, on top
            pen = QPen(color, 2.0 if hovered or state in ("covered", "disabled") else 1.25)
            if state == "disabled":
                pen.setStyle(Qt.PenStyle.DotLine)
            p.setPen(pen)
            fill = QColor(color)
            fill.setAlpha(60 if hovered else (40 if state == "covered" else 22))
            p.setBrush(fill)
            p.drawRect(r)
            if state == "covered":  # hatched: something lies over it
                hatch = QColor(COVERED_COLOR)
                hatch.setAlpha(110)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QBrush(hatch, Qt.BrushStyle.BDiagPattern))
                p.drawRect(r)
        p.setBrush(Qt.BrushStyle.NoBrush)

    def _paint_legend(self, p: QPainter) -> None:
        box = self.legend_rect()
        if box.isEmpty():
            return
        p.setFont(self.font())  # the font legend_rect measured with (chips leave the painter's bold)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(20, 24, 32, 215))
        p.drawRoundedRect(box, 4, 4)
        fm = p.fontMetrics()
        x = box.x() + 8
        column = self._legend_in_column()
        for i, (state, text) in enumerate(LEGEND):
            if column:
                x, cy = box.x() + 8, box.y() + 5 + (i + 0.5) * (fm.height() + 4)
                sw = QRectF(x, cy - 6, 16, 12)
            else:
                sw = QRectF(x, box.center().y() - 6, 16, 12)
            pen = QPen(STATE_COLORS[state], 2.5 if state in ("target", "covered") else 1.8)
            if state == "candidate":
                pen.setStyle(Qt.PenStyle.DashLine)
            elif state == "disabled":
                pen.setStyle(Qt.PenStyle.DotLine)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(sw)
            p.setPen(QColor(230, 233, 240))
            row = QRectF(x + 20, sw.center().y() - fm.height() / 2.0 - 2, fm.horizontalAdvance(text) + 4,
                         fm.height() + 4) if column else QRectF(x + 20, box.y(), fm.horizontalAdvance(text) + 4,
                                                                box.height())
            p.drawText(row, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)
            x += fm.horizontalAdvance(text) + 30

    def _paint_zoom(self, p: QPainter) -> None:
        text = f"{self._zoom * 100:.0f} %  \u00b7  0 to fit"
        p.setFont(self.font())
        fm = p.fontMetrics()
        chip = QRectF(self.width() - fm.horizontalAdvance(text) - 20, 8, fm.horizontalAdvance(text) + 12,
                      fm.height() + 6)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(20, 24, 32, 215))
        p.drawRoundedRect(chip, 4, 4)
        p.setPen(QColor(230, 233, 240))
        p.drawText(chip, Qt.AlignmentFlag.AlignCenter, text)

    def _paint_grid(self, p: QPainter, rect: QRectF) -> None:
        cells = self.grid_cells()
        pen = QPen(GRID_COLOR, GRID_PEN_WIDTH)
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setPen(pen)
        cw, ch = rect.width() / self._grid_cols, rect.height() / self._grid_rows
        for i in range(1, self._grid_cols):
            x = rect.x() + i * cw
            p.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))
        for j in range(1, self._grid_rows):
            y = rect.y() + j * ch
            p.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))
        p.drawRect(rect.adjusted(1, 1, -1, -1))
        font = QFont(self.font())
        font.setPixelSize(max(8, min(13, round(ch * 0.16))))
        font.setBold(True)
        p.setFont(font)
        fm = p.fontMetrics()
        for label, cell in cells:
            w = fm.horizontalAdvance(label) + 6
            chip = QRectF(cell.x() + 3, cell.y() + 3, w, fm.height() + 2)
            p.fillRect(chip, QColor(255, 255, 255, 190))
            p.setPen(QColor(200, 0, 0))
            p.drawText(chip, Qt.AlignmentFlag.AlignCenter, label)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)

    def _paint_alternatives(self, p: QPainter, chips: dict[str, QRectF]) -> None:
        for cand, label in self._alternatives:
            if cand.descriptor.bbox is None or (self._target is not None and cand.ref == self._target.ref):
                continue
            r = self.map_to_widget(cand.descriptor.bbox).adjusted(-3, -3, 3, 3)
            pen = QPen(TARGET_COLOR, 2, Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(r, 3, 3)
            self._paint_chip(p, r, label, dashed=True, at=chips.get(label))

    def _paint_target(self, p: QPainter, chips: dict[str, QRectF]) -> None:
        if self._target is None or self._target.descriptor.bbox is None:
            return
        r = self.map_to_widget(self._target.descriptor.bbox).adjusted(-3, -3, 3, 3)
        p.setPen(QPen(TARGET_COLOR, 3))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(r, 3, 3)
        label = self._target_label or "target"
        self._paint_chip(p, r, label, at=chips.get(label))

    def _paint_highlight(self, p: QPainter) -> None:
        if self._highlight is None:
            return
        box, label = self._highlight
        r = self.map_to_widget(box).adjusted(-5, -5, 5, 5)
        fill = QColor(HIGHLIGHT_COLOR)
        fill.setAlpha(45)
        p.setPen(QPen(HIGHLIGHT_COLOR, 3))
        p.setBrush(fill)
        p.drawRoundedRect(r, 4, 4)
        if label:
            self._paint_chip(p, r, label, color=HIGHLIGHT_COLOR)

    def _paint_rec(self, p: QPainter, rect: QRectF) -> None:
        p.setPen(QPen(REC_COLOR, 2))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(rect.adjusted(1, 1, -1, -1))
        font = QFont(self.font())
        font.setBold(True)
        p.setFont(font)
        fm = p.fontMetrics()
        text = "\u25cf PICK" if self._picking else "\u25cf REC"
        w, h = fm.horizontalAdvance(text) + 14, fm.height() + 6
        # In the canvas margin when there is one: the page itself stays clickable and visible.
        if rect.left() >= w + 12:
            chip = QRectF(rect.left() - w - 8, rect.top(), w, h)
        elif rect.top() >= h + 8:
            chip = QRectF(rect.left(), rect.top() - h - 4, w, h)
        else:
            chip = QRectF(rect.left() + 6, rect.bottom() - h - 6, w, h)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(REC_COLOR)
        p.drawRoundedRect(chip, 4, 4)
        p.setPen(QColor(255, 255, 255))
        p.drawText(chip, Qt.AlignmentFlag.AlignCenter, text)

    def _paint_chip(self, p: QPainter, r: QRectF, text: str, *, dashed: bool = False,
                    color: QColor = TARGET_COLOR, at: QRectF | None = None) -> None:
        font = QFont(self.font())
        font.setBold(True)
        p.setFont(font)
        fm = p.fontMetrics()
        chip = QRectF(r.x(), r.y() - fm.height() - 6, fm.horizontalAdvance(text) + 12, fm.height() + 4)
        if chip.top() < 0:
            chip.moveTop(r.bottom() + 2)
        if at is not None:
            if at.right() < r.left() - 2 or at.left() > r.right() + 2:  # beside the page: a leader line to its box
                p.setPen(QPen(color, 1.5))
                y = at.center().y()
                p.drawLine(QPointF(at.right() if at.right() < r.left() else at.left(), y),
                           QPointF(r.left() if at.right() < r.left() else r.right(),
                                   min(max(y, r.top()), r.bottom())))
            elif at.bottom() < r.top() - chip.height() or at.top() > r.bottom() + chip.height():
                p.setPen(QPen(color, 1, Qt.PenStyle.DotLine))  # a stacked label: a leader line to its box
                p.drawLine(QPointF(at.left() + 4, at.bottom()), QPointF(r.left() + 4, r.top()))
            chip = at
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(40, 30, 8, 230) if dashed else color)
        p.drawRoundedRect(chip, 3, 3)
        p.setPen(color if dashed else QColor(30, 22, 0))
        p.drawText(chip, Qt.AlignmentFlag.AlignCenter, text)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
