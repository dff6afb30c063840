"""A strip of fixed height above the live view that holds the window's bars.

The escalation bar, the takeover bar ("You have the page") and the "files
changed on disk" bar used to be inserted into the central column as they
appeared: the live view moved down by their height, so a click aimed a second
earlier landed on another widget (issue 23, item 6).  In the slot they take
turns in a space that is always there: the live view never moves when a bar
appears, grows or goes, and a bar taller than the slot scrolls inside it
instead of pushing the view (or the window) down.  Nor does a bar's width
widen the window: the slot scrolls sideways before it asks for more room.

With no bar shown the slot says, in a muted line, what will appear there.

The full height is kept only while a run is live (:meth:`BannerSlot.set_reserved`): that is when the
escalation and takeover bars come.  Before a run and after it, the slot is as high as its idle line and the
one-row bars that may come then (the "files changed on disk" bar: :meth:`BannerSlot.add_bar` with
``compact=True``), and the live view below gets the rest of the room.
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from ..theme import COLORS

__all__ = ["BannerSlot", "SLOT_LINES", "IDLE_TEXT"]

#: Lines of text the slot is high: the takeover bar's title (two lines at a usual width), its recorded actions,
#: the meaning row and the hand-back row, with their margins (about 8 lines of the window's font).
SLOT_LINES = 8
#: What the slot says while no bar is shown.
IDLE_TEXT = ("No question from the engine. When it cannot decide on its own, or you take over the page, "
             "it asks here; the view below does not move.")


class BannerSlot(QScrollArea):
    """A fixed-height, scrolling holder for ``bars`` (QWidgets shown and hidden by their owners).

    The height is :data:`SLOT_LINES` lines of the font plus margins, set once;
    the width follows the window and never sets its minimum (the content
    scrolls).  Bars are stacked in the given order; :attr:`idle` (a muted
    line, :data:`IDLE_TEXT`) is shown while none of them is visible.
    """

    def __init__(self, bars: Sequence[QWidget] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("bannerSlot")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._inner = QWidget()
        self._inner.setObjectName("bannerSlotInner")
        self._column = QVBoxLayout(self._inner)
        self._column.setContentsMargins(8, 6, 8, 6)
        self._column.setSpacing(6)
        self.idle = QLabel(IDLE_TEXT)
        self.idle.setObjectName("bannerSlotIdle")
        self.idle.setWordWrap(True)
        self.idle.setStyleSheet(f"color: {COLORS['muted']};")
        self.idle.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self._column.addWidget(self.idle)
        self._bars: list[QWidget] = []
        self._compact: list[QWidget] = []
        self._reserved = True
        for bar in bars:
            self.add_bar(bar)
        self._column.addStretch(1)
        self.setWidget(self._inner)
        self.setFixedHeight(self.slot_height())
        self._update_idle()

    def slot_height(self) -> int:
        """The slot's full height in px: :data:`SLOT_LINES` lines of the font plus the margins."""
        return SLOT_LINES * self.fontMetrics().lineSpacing() + 24 + 2 * self.frameWidth()

    def compact_height(self) -> int:
        """The slot's height in px while no run is live: two lines of the font (the idle line, wrapped on a
        narrow window) or the tallest compact bar, plus the margins; never above :meth:`slot_height`."""
        inner = max([2 * self.fontMetrics().lineSpacing()] + [b.sizeHint().height() for b in self._compact])
        return min(self.slot_height(), inner + 12 + 2 * self.frameWidth())

    @property
    def reserved(self) -> bool:
        """True while the slot keeps its full height (a run is live)."""
        return self._reserved

    def set_reserved(self, on: bool) -> None:
        """Keep the full height (``on``: a run is live, its bars may come) or the compact one.

        Whichever it is, a bar shown that needs more room than the compact height gets the full height (the
        view moves once, never while a run is live).
        """
        self._reserved = bool(on)
        self._fit_height()

    def _fit_height(self) -> None:
        full = self._reserved or any(b not in self._compact for b in self.shown_bars())
        height = self.slot_height() if full else self.compact_height()
        if height != self.height() or self.minimumHeight() != height:
            self.setFixedHeight(height)

    def add_bar(self, bar: QWidget, *, compact: bool = False) -> None:
        """Hold ``bar`` (after those already held); its owner keeps showing and hiding it.

        ``compact``: a one-row bar that may show while no run is live; the compact height makes room for it.
        """
        self._bars.append(bar)
        if compact:
            self._compact.append(bar)
        self._column.insertWidget(self._column.count() - (1 if self.widget() is not None else 0), bar)
        bar.installEventFilter(self)
        self._update_idle()
        if self.widget() is not None:
            self._fit_height()

    @property
    def bars(self) -> tuple[QWidget, ...]:
        """The bars held, in order."""
        return tuple(self._bars)

    def shown_bars(self) -> tuple[QWidget, ...]:
        """The bars their owners show now (not hidden explicitly)."""
        return tuple(b for b in self._bars if not b.isHidden())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() in (QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.ShowToParent,
                            QEvent.Type.HideToParent) and watched in self._bars:
            self._update_idle()
            self._fit_height()
            if event.type() in (QEvent.Type.Show, QEvent.Type.ShowToParent):
                self.verticalScrollBar().setValue(0)  # a bar that appears is read from its top
        return False

    def _update_idle(self) -> None:
        self.idle.setVisible(not self.shown_bars())
