"""The Assert button shows the mode entered in the page with Alt+Shift+A (issue 23 item 6), with the REAL recorder
(headless Chromium, the demo app) driven through the live view."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from studio.main_window import MainWindow
from studio.views.recorder import RecorderState

DEMO = Path(__file__).resolve().parents[2] / "projects" / "demo"
ALT_SHIFT = Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ShiftModifier


def _recording(qtbot, tmp_path: Path) -> tuple[MainWindow, Any, Any]:  # noqa: ANN001
    """The studio on a copy of the demo, recording a flow named "checks" (the page loaded): window, dock, live view."""
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".steadyhand"))
    w = MainWindow(root, close_timeout=15.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    dock, lv = w.recorder_dock, w.live_view
    w.action_record.trigger()
    dock.name_edit.setText("checks")
    assert dock.start_recording()
    qtbot.waitUntil(lambda: dock.state is RecorderState.RECORDING and bool(lv.candidates), timeout=60_000)
    return w, dock, lv


def test_alt_shift_a_in_the_page_checks_the_assert_button_and_escape_unchecks_it(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    w, dock, lv = _recording(qtbot, tmp_path)
    assert not dock.assert_button.isChecked()
    lv.setFocus()
    qtbot.keyClick(lv, Qt.Key.Key_A, ALT_SHIFT)  # forwarded to the page, whose recorder turns assert mode on
    qtbot.waitUntil(dock.assert_button.isChecked, timeout=30_000)
    assert dock.inspecting and "Alt+Shift+A" in dock.message.text()
    shots = os.environ.get("STEADYHAND_SHOTS")
    if shots:
        dock.grab().save(str(Path(shots) / "recorder-assert-mode.png"))
    qtbot.keyClick(lv, Qt.Key.Key_Escape)  # the page leaves assert mode: the button follows
    qtbot.waitUntil(lambda: not dock.assert_button.isChecked(), timeout=30_000)
    dock.stop_recording()
    qtbot.waitUntil(lambda: dock.state is RecorderState.STOPPED, timeout=60_000)
    w.close()


def test_escape_after_a_pick_keeps_the_check_until_add_or_dismiss(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """Alt+Shift+A, click an element, Escape in the page: the "Add assertion" bar was hidden and the check lost
    silently.  Now the bar stays, the message says the check is not added yet, and Add adds it."""
    w, dock, lv = _recording(qtbot, tmp_path)
    lv.setFocus()
    qtbot.keyClick(lv, Qt.Key.Key_A, ALT_SHIFT)
    qtbot.waitUntil(dock.assert_button.isChecked, timeout=30_000)
    target = next(c for c in lv.candidates if c.descriptor.label_text and c.descriptor.bbox is not None)
    b = target.descriptor.bbox
    assert lv.page_clicked is not None
    lv.page_clicked.emit(b.x + b.width / 2, b.y + b.height / 2, False)  # the click the live view maps to CSS px
    qtbot.waitUntil(lambda: dock.assertion_panel.isVisible(), timeout=30_000)
    rows = dock.model.rowCount()
    lv.setFocus()
    qtbot.keyClick(lv, Qt.Key.Key_Escape)  # the page leaves assert mode
    qtbot.waitUntil(lambda: not dock.assert_button.isChecked(), timeout=30_000)
    qtbot.wait(100)
    assert dock.assertion_panel.isVisible() and dock.assertion_panel.pick is not None  # not lost
    assert "not added yet" in dock.message.text()
    qtbot.mouseClick(dock.assertion_panel.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dock.model.rowCount() == rows + 1, timeout=30_000)
    assert "Check added" in dock.message.text() and "_" not in dock.message.text().split("Check added")[1][:40]
    dock.stop_recording()
    qtbot.waitUntil(lambda: dock.state is RecorderState.STOPPED, timeout=60_000)
    w.close()
