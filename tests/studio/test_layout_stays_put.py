"""Trial-14/24/30/31: what appears or changes in a panel must not move what is under the pointer - the Recorder's
message and its assertion bar pushed the steps table down.  Real window, offscreen."""
from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication

from core.domain import ElementDescriptor
from core.record.events import ElementPicked
from studio.testing import RecordingEngine


def _settle(qtbot) -> None:  # noqa: ANN001
    QApplication.processEvents()
    qtbot.wait(50)
    QApplication.processEvents()


def _where(widget, window) -> tuple[int, int, int, int]:  # noqa: ANN001
    p = widget.mapTo(window, QPoint(0, 0))
    return p.x(), p.y(), widget.width(), widget.height()


def test_the_recorders_message_and_assertion_bar_do_not_push_its_table(qtbot, make_window, tmp_path) -> None:  # noqa: ANN001
    w = make_window(RecordingEngine.factory([]))
    w.resize(1400, 900)
    w.show()
    w.show_recorder()
    _settle(qtbot)
    dock = w.recorder_dock
    before = _where(dock.table, w)
    dock._say("Assert mode (Alt+Shift+A): click an element (or select text) in the live view to check it. " * 4)  # noqa: SLF001
    _settle(qtbot)
    assert _where(dock.table, w) == before
    dock._on_picked(ElementPicked(1, ElementDescriptor(role="heading", name="Leave requests"),  # noqa: SLF001
                                  text="Leave requests", suggested=("text_equals",)))
    _settle(qtbot)
    assert dock.assertion_panel.isVisible()
    assert _where(dock.table, w) == before
    dock.grab().save(str(tmp_path / "recorder-assert-strip.png"))
    dock.assertion_panel.hide()
    dock._say("")  # noqa: SLF001
    _settle(qtbot)
    assert _where(dock.table, w) == before
