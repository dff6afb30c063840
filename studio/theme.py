"""The studio's look: a dark Fusion palette, one style sheet, status colours."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleOption, QWidget

__all__ = [
    "STATUS_COLORS", "STATUS_LABELS", "STATUS_TIPS", "BREAKER_COLORS", "COLORS", "TAKEOVER_COLOR", "status_color",
    "status_label", "apply_theme", "StudioStyle",
]

#: Base colours of the dark theme.
COLORS = {
    "window": "#1f2125",
    "panel": "#26282d",
    "base": "#1b1d21",
    "alt": "#22252a",
    "border": "#3a3d44",
    "text": "#e3e5e8",
    "muted": "#9aa0aa",
    "accent": "#4c8dff",
    "canvas": "#141518",
}

#: Colour of a takeover: the banner while a human has the page, and the steps done by hand.
TAKEOVER_COLOR = "#b48cff"

#: Step status -> colour (pending grey, running blue, passed green, failed red, escalated amber,
#: skipped grey, stopped light grey, error pink, done by hand violet).
STATUS_COLORS = {
    "pending": "#7d838d",
    "running": "#4c8dff",
    "passed": "#3fb96b",
    "failed": "#f0524f",
    "escalated": "#f5a524",
    "skipped": "#7d838d",
    "stopped": "#b3b8c2",
    "error": "#ff6f9c",
    "manual": TAKEOVER_COLOR,
}

#: Step status -> the word shown for it (the status itself when absent).
STATUS_LABELS = {"manual": "by hand"}

#: Step status -> what it means, for tooltips (see ``core.domain.StepOutcome``).
STATUS_TIPS = {
    "pending": "not run yet",
    "running": "running now",
    "passed": "done and verified",
    "failed": "an assertion did not hold",
    "escalated": "the engine could not go on alone and asked you",
    "skipped": "skipped (an optional step whose target was absent, or you skipped it)",
    "stopped": "the run was stopped during this step",
    "error": "the browser or the page crashed during this step",
    "manual": "done by hand during a takeover",
}

#: Circuit breaker state -> colour (R4).
BREAKER_COLORS = {"closed": "#3fb96b", "half_open": "#f5a524", "open": "#f0524f"}


def status_color(status: str) -> QColor:
    """Colour of a step / run status (grey for unknown ones)."""
    return QColor(STATUS_COLORS.get(status, STATUS_COLORS["pending"]))


def status_label(status: str) -> str:
    """The word shown for a step status (``"manual"`` reads ``"by hand"``)."""
    return STATUS_LABELS.get(status, status)


_STYLE = """
QMainWindow, QDockWidget {{ background: {window}; }}
QDockWidget {{ color: {text}; font-weight: bold; titlebar-close-icon: none; }}
QDockWidget::title {{ background: {panel}; padding: 6px 8px; border-bottom: 1px solid {border}; }}
QToolBar {{ background: {panel}; border: none; border-bottom: 1px solid {border}; spacing: 4px; padding: 4px 6px; }}
QToolBar QToolButton {{ color: {text}; padding: 4px 10px; border-radius: 4px; }}
QToolBar QToolButton:hover {{ background: #33363c; }}
QToolBar QToolButton:checked {{ background: #2f3a52; border: 1px solid {accent}; }}
QToolBar QToolButton:disabled {{ color: #5d626b; }}
QStatusBar {{ background: {panel}; color: {muted}; border-top: 1px solid {border}; }}
QStatusBar QLabel {{ padding: 0 8px; }}
QTableView, QListView, QTreeView, QTextBrowser, QPlainTextEdit {{
    background: {base}; alternate-background-color: {alt}; color: {text};
    border: none; selection-background-color: #2f4a7a; selection-color: #ffffff;
}}
QHeaderView::section {{
    background: {panel}; color: {muted}; border: none; border-right: 1px solid {border};
    border-bottom: 1px solid {border}; padding: 4px 6px;
}}
QSplitter::handle {{ background: {border}; }}
QLabel#panelTitle {{ color: {muted}; font-weight: bold; padding: 4px 2px; }}
QLabel#liveCaption {{ color: {muted}; padding: 6px 10px; background: {panel}; border-bottom: 1px solid {border}; }}
QFrame#escalationBanner {{ background: #3a2e14; border: 1px solid #8a6420; border-radius: 4px; }}
QFrame#escalationBanner QLabel {{ color: #ffd79a; }}
QFrame#takeoverBanner {{ background: #2d2342; border: 1px solid #7a5cc0; border-radius: 4px; }}
QFrame#takeoverBanner QLabel {{ color: #e4d6ff; }}
QPushButton#primaryAnswer {{ background: #2f4a7a; border-color: {accent}; }}
QPushButton#primaryAnswer:hover {{ background: #37588f; }}
QPushButton {{ background: #33363c; color: {text}; border: 1px solid {border}; border-radius: 4px; padding: 4px 12px; }}
QPushButton:hover {{ background: #3c4047; }}
QPushButton:disabled {{ color: #5d626b; }}
QComboBox {{ background: #2c2f35; color: {text}; border: 1px solid {border}; border-radius: 4px; padding: 2px 8px; }}
QToolTip {{ background: #2c2f35; color: {text}; border: 1px solid {border}; padding: 4px; }}
"""


class StudioStyle(QProxyStyle):
    """Fusion, with check boxes that stay visible on the dark palette.

    Fusion outlines check boxes with a darker shade of the window colour,
    which vanishes on a dark window; these are drawn with a light outline
    and an accent fill with a white tick when checked.
    """

    def __init__(self) -> None:
        super().__init__("Fusion")

    def drawPrimitive(self, element: QStyle.PrimitiveElement, option: QStyleOption,  # noqa: N802 - Qt API
                      painter: QPainter, widget: QWidget | None = None) -> None:
        if element not in (QStyle.PrimitiveElement.PE_IndicatorCheckBox,
                           QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck):
            super().drawPrimitive(element, option, painter, widget)
            return
        r = QRectF(option.rect).adjusted(1.5, 1.5, -1.5, -1.5)
        side = min(r.width(), r.height(), 14.0)
        box = QRectF(r.center().x() - side / 2, r.center().y() - side / 2, side, side)
        on = bool(option.state & QStyle.StateFlag.State_On)
        enabled = bool(option.state & QStyle.StateFlag.State_Enabled)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        accent = QColor(COLORS["accent"] if enabled else COLORS["muted"])
        painter.setPen(QPen(accent if on else QColor("#8a909a" if enabled else "#5d626b"), 1.2))
        painter.setBrush(accent if on else QColor(COLORS["base"]))
        painter.drawRoundedRect(box, 3, 3)
        if on:
            tick = QPainterPath(QPointF(box.left() + side * 0.22, box.top() + side * 0.52))
            tick.lineTo(QPointF(box.left() + side * 0.42, box.top() + side * 0.72))
            tick.lineTo(QPointF(box.left() + side * 0.78, box.top() + side * 0.3))
            pen = QPen(QColor("#ffffff"), 1.8)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(tick)
        painter.restore()


def apply_theme(app: QApplication) -> None:
    """Apply the studio style (Fusion), the dark palette, DejaVu Sans 9.5 pt and the style sheet."""
    app.setStyle(StudioStyle())
    pal = QPalette()
    c = {k: QColor(v) for k, v in COLORS.items()}
    pal.setColor(QPalette.ColorRole.Window, c["window"])
    pal.setColor(QPalette.ColorRole.WindowText, c["text"])
    pal.setColor(QPalette.ColorRole.Base, c["base"])
    pal.setColor(QPalette.ColorRole.AlternateBase, c["alt"])
    pal.setColor(QPalette.ColorRole.Text, c["text"])
    pal.setColor(QPalette.ColorRole.Button, c["panel"])
    pal.setColor(QPalette.ColorRole.ButtonText, c["text"])
    pal.setColor(QPalette.ColorRole.Highlight, QColor("#2f4a7a"))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.ToolTipBase, QColor("#2c2f35"))
    pal.setColor(QPalette.ColorRole.ToolTipText, c["text"])
    pal.setColor(QPalette.ColorRole.PlaceholderText, c["muted"])
    pal.setColor(QPalette.ColorRole.Link, c["accent"])
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#5d626b"))
    app.setPalette(pal)
    font = QFont("DejaVu Sans")
    font.setPointSizeF(9.5)
    app.setFont(font)
    app.setStyleSheet(_STYLE.format(**COLORS))
