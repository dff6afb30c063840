"""Taking over in the studio: the live view drives the engine's page, and the correction offered after.

:class:`TakeoverController` is wired to the window's bridge, live view and
"You have the page" bar.  Between ``TakeoverStarted`` and the hand-back the
live view is interactive: clicks, double clicks, wheel, typing and keys
(already mapped from the view's image px to CSS px by
:meth:`~studio.views.live_view.LiveView.map_to_css`) are sent to the engine
thread as :data:`core.engine.events.TakeoverInput` commands, which puts them
on its own page; the frames of that page (``TakeoverFrame``) are shown as
they come and the actions recorded so far (``TakeoverActionRecorded``) are
listed in the bar.  Nothing here touches Playwright: the engine thread owns it.

After the hand-back the engine stores the manual segment as a correction and
says so (``CorrectionOffered``); when it is offered as a flow edit,
:class:`CorrectionDialog` shows the diff with Accept / Reject / Later.
Accepting writes the flow file through :func:`core.heal.corrections.accept_correction`
(the core decides what the file becomes; the dialog only shows it).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import (
    QDialog, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget,
)

from core.progress import counted
from core.engine.events import (
    CorrectionOffered, FlowFinished, HandedBack, Recovered, RollBackStep, RunFinished, StepStarted,
    TakeoverActionRecorded, TakeoverFrame, TakeoverRolledBack, TakeoverStarted,
)
from core.record.events import ForwardClick, ForwardKey, ForwardMove, ForwardScroll, ForwardType

__all__ = ["TakeoverController", "CorrectionDialog", "DiffHighlighter", "MOVE_INTERVAL_S"]

#: The pointer position is forwarded at most this often, s (hover menus open; the queue stays short).
MOVE_INTERVAL_S = 0.1


class DiffHighlighter(QSyntaxHighlighter):
    """Colours a unified diff: added lines green, removed red, hunk headers blue."""

    def __init__(self, document: Any) -> None:
        super().__init__(document)
        self._formats: dict[str, QTextCharFormat] = {}
        for key, colour in (("+", "#1a7f37"), ("-", "#cf222e"), ("@", "#0969da")):
            f = QTextCharFormat()
            f.setForeground(QColor(colour))
            self._formats[key] = f

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt API
        if text.startswith(("+++", "---")):
            return
        fmt = self._formats.get(text[:1])
        if fmt is not None:
            self.setFormat(0, len(text), fmt)


class CorrectionDialog(QDialog):
    """The flow edit offered from a takeover: the diff, Accept (writes the file), Reject (with a reason), Later.

    Signals
    -------
    reviewed(int, str)
        Correction id and its new state (``accepted`` / ``rejected``).
    """

    reviewed = Signal(int, str)

    def __init__(self, event: CorrectionOffered, project_root: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("correctionDialog")
        self.offer = event
        self.project_root = Path(project_root)
        self.setWindowTitle(f"Flow edit from your takeover \u2014 {event.flow}")
        self.setModal(False)
        what = {"replace": f"replace step {event.index + 1}", "insert": f"go before step {event.index + 1}"}.get(
            event.meaning, event.meaning)
        steps = "; ".join(f"{i}. {t}" for i, t in enumerate(event.steps, 1)) or "none"
        self.title = QLabel(f"<b>Your actions {what} of {event.flow}</b> (correction #{event.correction_id}). "
                            f"Recorded: {steps}.<br>Accept writes this change to the flow file; nothing is "
                            "written until you do.")
        self.title.setWordWrap(True)
        self.diff = QPlainTextEdit(event.diff)
        self.diff.setReadOnly(True)
        self.diff.setObjectName("correctionDiff")
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.diff.setFont(mono)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._highlighter = DiffHighlighter(self.diff.document())
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("Why reject (optional)")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.accept_button = QPushButton("Accept and write the flow file")
        self.accept_button.setObjectName("primaryAnswer")
        self.reject_button = QPushButton("Reject")
        self.later_button = QPushButton("Later")
        self.later_button.setToolTip("Keep it offered; it stays in the store's corrections for review")
        self.accept_button.clicked.connect(self.accept_edit)
        self.reject_button.clicked.connect(self.reject_edit)
        self.later_button.clicked.connect(self.close)
        row = QHBoxLayout()
        row.addWidget(self.reason, 1)
        row.addWidget(self.reject_button)
        row.addWidget(self.later_button)
        row.addWidget(self.accept_button)
        col = QVBoxLayout(self)
        col.addWidget(self.title)
        col.addWidget(self.diff, 1)
        col.addWidget(self.status)
        col.addLayout(row)
        self.resize(820, 560)

    def _store(self) -> Any:
        from core.store import Store, store_path

        return Store.open(store_path(self.project_root))

    def _done(self, state: str, text: str) -> None:
        self.status.setText(text)
        for b in (self.accept_button, self.reject_button):
            b.setEnabled(False)
        self.later_button.setText("Close")
        self.reviewed.emit(self.offer.correction_id, state)

    def accept_edit(self) -> bool:
        """Write the edit (computed again against the file as it is now); False with the reason shown."""
        from core.heal.corrections import CorrectionReviewError, accept_correction

        try:
            store = self._store()
            try:
                diff = accept_correction(store, self.offer.correction_id, project_root=self.project_root)
            finally:
                store.close()
        except (CorrectionReviewError, OSError, RuntimeError) as exc:
            self.status.setText(f"Not written: {exc}")
            return False
        self.diff.setPlainText(diff)
        self._done("accepted", "Written to the flow file.")
        return True

    def reject_edit(self) -> bool:
        """Mark the correction rejected with the reason typed; the flow file is not touched."""
        from core.heal.corrections import CorrectionReviewError, reject_correction

        try:
            store = self._store()
            try:
                reject_correction(store, self.offer.correction_id, self.reason.text().strip())
            finally:
                store.close()
        except (CorrectionReviewError, OSError, RuntimeError) as exc:
            self.status.setText(f"Not rejected: {exc}")
            return False
        self._done("rejected", "Rejected; the flow file stays as it is.")
        return True


class TakeoverController(QObject):
    """Forwards the live view's input to the engine's page during a takeover and offers the correction after.

    Parameters
    ----------
    window : studio.main_window.MainWindow
        Its ``bridge``, ``live_view``, ``takeover_banner``, ``event_log``
        and ``project`` are used.

    Attributes
    ----------
    active : bool
        True between ``TakeoverStarted`` and the hand-back (or the end of the flow).
    sent : list
        The input commands sent to the engine this takeover (for the event log and tests).
    dialog : CorrectionDialog | None
        The last flow edit offered.
    """

    correction_offered = Signal(object)

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.active = False
        self.sent: list[Any] = []
        self.dialog: CorrectionDialog | None = None
        self._last_move = 0.0
        self._recovered: list[str] = []  # what the engine did to the page at this step before asking
        window.bridge.event_received.connect(self._on_event)
        window.takeover_banner.rollback_requested.connect(self.roll_back)
        lv = window.live_view
        lv.page_clicked.connect(self.forward_click)
        lv.page_scrolled.connect(self.forward_scroll)
        lv.pointer_moved.connect(self.forward_move)
        lv.text_typed.connect(lambda text: self._send(ForwardType(text)))
        lv.key_pressed.connect(lambda key: self._send(ForwardKey(key)))

    # --- input ----------------------------------------------------------------------------
    def _send(self, command: Any) -> bool:
        engine = self.window.bridge.engine
        if not self.active or engine is None:
            return False
        # straight to the engine's queue: input is not a run command (no state change, no log line per
        # pointer move; what it did is logged when the engine recorded it)
        engine.send(command)
        if not isinstance(command, ForwardMove):
            self.sent.append(command)
        return True

    def forward_click(self, x: float, y: float, double: bool = False) -> bool:
        """A click of the live view at ``(x, y)`` CSS px to the engine's page; False when not taken over."""
        return self._send(ForwardClick(x, y, double))

    def roll_back(self) -> bool:
        """The person asked to roll the page back to before the step (the engine answers ``TakeoverRolledBack``)."""
        sent = self._send(RollBackStep())
        if sent:
            self.window.event_log.log("\u2192 roll back to before this step (asked by you)")
        else:
            self.window.takeover_banner.rolled_back(False, "nothing was rolled back: you do not have the page")
        return sent

    def forward_scroll(self, x: float, y: float, dx: float, dy: float) -> bool:
        """The wheel over ``(x, y)`` CSS px: scroll the engine's page by ``(dx, dy)`` CSS px."""
        return self._send(ForwardScroll(x, y, dx, dy))

    def forward_move(self, x: float, y: float) -> bool:
        """The pointer at ``(x, y)`` CSS px, at most every :data:`MOVE_INTERVAL_S`."""
        now = time.monotonic()
        if now - self._last_move < MOVE_INTERVAL_S:
            return False
        self._last_move = now
        return self._send(ForwardMove(x, y))

    # --- events ---------------------------------------------------------------------------
    def _set_active(self, on: bool) -> None:
        self.active = on
        if not getattr(self.window, "_recording", False):
            self.window.live_view.set_interactive(on)
        if on:
            self.sent = []
            self.window.live_view.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_event(self, event: Any) -> None:
        if isinstance(event, StepStarted) and event.attempt == 1:
            self._recovered = []
        elif isinstance(event, Recovered):
            self._recovered.append(f"{'rolled back' if event.how == 'rollback' else 'closed a popup'}: {event.detail}"
                                   if event.how in ("rollback", "dismiss") else event.detail)
        if isinstance(event, TakeoverStarted):
            self._set_active(True)
            if self._recovered:  # said, so that a page that differs from an earlier picture is no surprise
                self.window.takeover_banner.say("Before asking you, the engine already tried at this step: "
                                                + "; ".join(self._recovered[-3:]) + ". The page is handed "
                                                "to you as it is now; nothing more was changed.")
            # the locator's target and look-alikes are not the human's to click; a candidate the user
            # selected in the escalation stays outlined
            self.window.live_view.set_target(None)
        elif isinstance(event, TakeoverFrame) and self.active:
            image = QImage.fromData(event.png, "PNG")
            if not image.isNull():
                self.window.live_view.set_image(image, device_pixel_ratio=event.device_pixel_ratio,
                                                candidates=event.candidates)
                caption = getattr(self.window, "caption", None)
                if caption is not None:
                    caption.setText(f"You have the page   \u00b7   {event.url}   \u00b7   "
                                    f"{len(event.candidates)} candidates   \u00b7   click, scroll and type in the "
                                    "view: it is the engine's own page")
        elif isinstance(event, TakeoverActionRecorded) and self.active:
            self.window.takeover_banner.set_actions(event.titles)
            if event.titles:
                self.window.event_log.log(f"by hand: {event.titles[-1]}")
        elif isinstance(event, TakeoverRolledBack) and self.active:
            self.window.takeover_banner.rolled_back(event.ok, event.detail)
            self.window.event_log.log(event.detail[:1].upper() + event.detail[1:])
        elif isinstance(event, (HandedBack, FlowFinished, RunFinished)) and self.active:
            self._set_active(False)
            caption = getattr(self.window, "caption", None)
            if caption is not None:  # "You have the page" is not true any more (trial-65/70)
                caption.setText("Handed back \u00b7 the engine has the page again" if isinstance(event, HandedBack)
                                else "The takeover ended with the run")
        elif isinstance(event, CorrectionOffered):
            self._on_correction(event)

    def _on_correction(self, event: CorrectionOffered) -> None:
        what = f"{counted(len(event.steps), 'action')} by hand at step {event.index + 1}"
        if event.state == "offered" and event.correction_id:
            self.window.event_log.log(f"correction #{event.correction_id}: {what} offered as a flow edit "
                                      f"({event.meaning})")
            self.dialog = CorrectionDialog(event, Path(self.window.project.root), self.window)
            self.dialog.show()
        else:
            note = f" \u2014 {event.note}" if event.note else ""
            self.window.event_log.log(f"correction #{event.correction_id}: {what} kept{note}")
        self.correction_offered.emit(event)
