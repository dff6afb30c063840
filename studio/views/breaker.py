"""Circuit breaker indicator (R4): closed / open / half_open with failures / threshold."""
from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from core.engine.events import BreakerChanged, EngineEvent

from ..theme import BREAKER_COLORS, COLORS

__all__ = ["BreakerIndicator"]

_LABELS = {"closed": "closed", "open": "OPEN", "half_open": "half-open"}


class BreakerIndicator(QWidget):
    """A coloured dot and ``Breaker closed · 0/3``; unknown until the first ``BreakerChanged``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = ""
        self._failures = 0
        self._threshold = 0
        self._update_tooltip()

    @property
    def state(self) -> str:
        """``closed`` / ``open`` / ``half_open``, or ``""`` before the first event."""
        return self._state

    @property
    def failures(self) -> int:
        return self._failures

    @property
    def threshold(self) -> int:
        return self._threshold

    def text(self) -> str:
        """The shown text."""
        if not self._state:
            return "Breaker \u2014"
        return f"Breaker {_LABELS.get(self._state, self._state)} \u00b7 {self._failures}/{self._threshold}"

    def color(self) -> QColor:
        """Colour of the dot (grey before the first event)."""
        return QColor(BREAKER_COLORS.get(self._state, COLORS["muted"]))

    def apply(self, event: EngineEvent) -> None:
        """Update from a ``BreakerChanged`` event (others are ignored)."""
        if isinstance(event, BreakerChanged):
            self.set_state(event.state, event.consecutive_failures, event.threshold)

    def set_state(self, state: str, failures: int, threshold: int) -> None:
        """Show ``state`` with ``failures`` consecutive failures out of ``threshold``."""
        self._state, self._failures, self._threshold = state, failures, threshold
        self._update_tooltip()
        self.updateGeometry()
        self.update()

    def reset(self) -> None:
        self.set_state("", 0, 0)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance(self.text()) + 30, max(22, fm.height() + 6))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return self.sizeHint()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        h = self.height()
        d = 10.0
        color = self.color()
        if self._state == "open":
            halo = QColor(color)
            halo.setAlpha(70)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(halo)
            p.drawEllipse(QRectF(4, (h - d) / 2 - 3, d + 6, d + 6))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(color)
        p.drawEllipse(QRectF(7, (h - d) / 2, d, d))
        p.setPen(QColor(COLORS["text"]) if self._state else QColor(COLORS["muted"]))
        p.drawText(QRectF(24, 0, self.width() - 24, h), Qt.AlignmentFlag.AlignVCenter, self.text())
        p.end()

    def _update_tooltip(self) -> None:
        self.setToolTip(
            "Circuit breaker (R4): opens after the threshold of consecutive failures and pauses "
            "the run for you; half-open lets one probe through; closes on success.")
