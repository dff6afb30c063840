"""While taken over, the live view's clicks, keys and wheel go to the engine as commands, in CSS px of the page."""
from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QWheelEvent
from PySide6.QtWidgets import QApplication

from core.engine.events import FlowStarted, HandedBack, RunStarted, TakeoverFrame, TakeoverStarted
from core.record.events import ForwardClick, ForwardKey, ForwardScroll, ForwardType
from studio.main_window import MainWindow
from studio.testing import RecordingEngine

FLOW = "login_lockout"


def _png(width: int, height: int) -> bytes:
    img = QImage(width, height, QImage.Format.Format_RGB32)
    img.fill(QColor("#dde"))
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    return bytes(data.data())


def _play(qtbot, w: MainWindow, engine: RecordingEngine, *events) -> None:  # noqa: ANN001
    with qtbot.waitSignal(w.bridge.event_received, timeout=5000, check_params_cb=lambda e: e is events[-1]):
        engine.emit_from_thread(*events)


def _sent(engine: RecordingEngine) -> list[object]:
    return [c for c in engine.commands if isinstance(c, (ForwardClick, ForwardKey, ForwardScroll, ForwardType))]


def test_live_view_input_reaches_the_engine_only_while_taken_over(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.resize(1400, 900)
    w.show()
    w.start_run((FLOW,))
    engine = engines[0]
    lv = w.live_view
    _play(qtbot, w, engine, RunStarted("r1", "demo", (FLOW,)), FlowStarted("r1", FLOW, ("a", "b")))
    frame = TakeoverFrame("r1", FLOW, 1, _png(2560, 1600), 2.0, "http://127.0.0.1:1/requests")
    _play(qtbot, w, engine, frame)  # a frame before the takeover is not shown as the human's page
    assert lv.image.isNull() or lv.image.width() != 2560
    qtbot.mouseClick(lv, Qt.MouseButton.LeftButton, pos=lv.rect().center())
    lv.flush_click()
    assert _sent(engine) == []

    _play(qtbot, w, engine, TakeoverStarted("r1", FLOW, 1), frame)
    assert lv.interactive() and lv.image.width() == 2560 and "You have the page" in w.caption.text()
    rect = lv.image_rect()
    at = QPointF(rect.x() + rect.width() * 0.25, rect.y() + rect.height() * 0.5)
    css = lv.map_to_css(at)
    assert css is not None and abs(css[0] - 320) < 2 and abs(css[1] - 400) < 2  # a quarter of 1280 CSS px
    qtbot.mouseClick(lv, Qt.MouseButton.LeftButton, pos=QPoint(round(at.x()), round(at.y())))
    lv.flush_click()
    qtbot.keyClicks(lv, "ab")
    qtbot.keyClick(lv, Qt.Key.Key_Return)
    wheel = QWheelEvent(at, lv.mapToGlobal(at), QPoint(0, 0), QPoint(0, -120), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(lv, wheel)
    sent = _sent(engine)
    assert [type(c) for c in sent] == [ForwardClick, ForwardType, ForwardType, ForwardKey, ForwardScroll]
    click = sent[0]
    assert abs(click.x - 320) < 2 and abs(click.y - 400) < 2 and not click.double
    assert (sent[1].text, sent[2].text, sent[3].key) == ("a", "b", "Enter")
    assert sent[4].dy > 0 and abs(sent[4].x - 320) < 2
    assert w.takeover.sent == sent

    _play(qtbot, w, engine, HandedBack("r1", FLOW, 2, "replace"))
    assert not lv.interactive() and not w.takeover.active
    qtbot.mouseClick(lv, Qt.MouseButton.LeftButton, pos=QPoint(round(at.x()), round(at.y())))
    lv.flush_click()
    assert _sent(engine) == sent  # nothing more once handed back
