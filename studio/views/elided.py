"""A one-line label that never widens its window: long text is cut with "…", the whole text on hover.

Used where a paragraph of variable length sits above controls that must stay
in sight (the takeover bar's title and "the engine already tried ..." line)
and where a long title would otherwise set a dock's minimum width.
"""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

__all__ = ["ElidedLabel"]


class ElidedLabel(QLabel):
    """A plain-text label of one line: the text is elided at the right to the label's width.

    :meth:`text` returns the whole text (as set); the tooltip shows it too
    when it does not fit.  The horizontal size policy is ``Ignored`` and the
    size hint is a few characters wide, so the text never sets the minimum
    width of its layout (nor of a dock or the window).
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt API
        self._full = text or ""
        self._elide()

    def text(self) -> str:
        """The whole text, as set (what is shown may be cut with "…")."""
        return self._full

    def shown_text(self) -> str:
        """The text drawn now (elided to the width)."""
        return super().text()

    def is_elided(self) -> bool:
        """True when the whole text does not fit on the line."""
        return self.shown_text() != " ".join(self._full.split())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        fm = self.fontMetrics()
        return QSize(min(fm.horizontalAdvance(self._full), 40 * fm.averageCharWidth()), fm.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(0, self.fontMetrics().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = max(0, self.width() - 2)
        line = " ".join(self._full.split())
        shown = self.fontMetrics().elidedText(line, Qt.TextElideMode.ElideRight, width) if width else line
        QLabel.setText(self, shown)
        self.setToolTip(self._full if shown != line else "")
