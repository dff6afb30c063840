"""Issue 23 item 6, the layout: nothing moves under the pointer when a bar appears, the window stays on the
screen, the Timeline's step column fits its titles, the state graph's labels do not overlap.

Real widgets of the window, offscreen (the offscreen screen is 800 x 800 px).
"""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem

from core.domain import BBox, EscalationCandidate
from core.engine.events import (
    EscalationRaised, FlowStarted, Paused, Resumed, RunStarted, StepStarted, TakeoverActionRecorded, TakeoverStarted,
)
from studio.main_window import MainWindow
from studio.testing import RecordingEngine

FLOW = "login_lockout"
CANDIDATES = (EscalationCandidate("0:9", "link Unlock account", 0.78, BBox(680, 492, 128, 20)),)


def _play(qtbot, w: MainWindow, engine: RecordingEngine, *events) -> None:  # noqa: ANN001
    with qtbot.waitSignal(w.bridge.event_received, timeout=5000, check_params_cb=lambda e: e is events[-1]):
        engine.emit_from_thread(*events)


def _view_geometry(w: MainWindow) -> tuple[int, int, int, int]:
    top_left = w.live_view.mapTo(w, QPoint(0, 0))
    return top_left.x(), top_left.y(), w.live_view.width(), w.live_view.height()


def _settle(qtbot) -> None:  # noqa: ANN001
    QApplication.processEvents()
    qtbot.wait(50)  # the layout's deferred passes and the window's fit to the screen
    QApplication.processEvents()


def test_a_banner_or_a_takeover_does_not_move_the_live_view_nor_grow_the_window(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    avail = w.screen().availableGeometry()
    w.resize(760, 700)
    w.show()
    _settle(qtbot)
    w.start_run((FLOW,))
    engine = engines[0]
    _play(qtbot, w, engine, RunStarted("r1", "demo", (FLOW,)),
          FlowStarted("r1", FLOW, tuple(f"s{i}" for i in range(7))), StepStarted("r1", FLOW, 5, "Click Unlock", 1))
    _settle(qtbot)
    before = _view_geometry(w)
    size = w.size()
    aim = w.live_view.mapTo(w, QPoint(w.live_view.width() // 2, 12))  # where a click was aimed a second earlier
    assert w.childAt(aim) is w.live_view
    assert w.banner_slot.idle.isVisibleTo(w)  # the strip is there before any bar, saying what comes there

    _play(qtbot, w, engine, EscalationRaised("r1", FLOW, 5, "Click Unlock account", "locator abstained " * 8,
                                             CANDIDATES, (), "abstained", ("retry", "skip", "stop", "take_over")),
          Paused("r1", FLOW, 5, "escalated: locator abstained"))
    _settle(qtbot)
    assert w.banner.isVisibleTo(w) and not w.banner_slot.idle.isVisibleTo(w)
    assert _view_geometry(w) == before and w.size() == size
    assert w.childAt(aim) is w.live_view  # the click lands on the page it was aimed at, not on a bar

    qtbot.mouseClick(w.banner_answers.buttons["take_over"], Qt.MouseButton.LeftButton)
    _play(qtbot, w, engine, Resumed("r1"), TakeoverStarted("r1", FLOW, 5), Paused("r1", FLOW, 5, "taken over"))
    _play(qtbot, w, engine, TakeoverActionRecorded("r1", FLOW, 5, tuple(f"Click button {i}" for i in range(9))))
    _settle(qtbot)
    assert w.takeover_banner.isVisibleTo(w) and not w.banner.isVisibleTo(w)
    assert _view_geometry(w) == before and w.size() == size
    assert w.childAt(aim) is w.live_view
    # the takeover bar is wider than the window: it scrolls in its strip, the window does not widen
    assert w.frameGeometry().width() <= avail.width() and w.frameGeometry().height() <= avail.height()

    w.files_text.setText("<b>Files changed on disk</b> (login_lockout.yaml).")
    w.files_bar.show()
    _settle(qtbot)
    assert _view_geometry(w) == before and w.size() == size

    w.takeover_banner.end()
    w.files_bar.hide()
    _settle(qtbot)
    assert _view_geometry(w) == before and w.banner_slot.idle.isVisibleTo(w)


def test_the_window_never_grows_past_the_screens_available_geometry(qtbot, recorded) -> None:  # noqa: ANN001
    w, _engines = recorded
    avail = w.screen().availableGeometry()
    w.resize(avail.width() + 600, avail.height() + 300)  # a geometry saved on a larger screen
    w.show()
    _settle(qtbot)
    assert w.frameGeometry().width() <= avail.width() and w.frameGeometry().height() <= avail.height()
    assert avail.contains(w.frameGeometry().topLeft())
    # a long URL in the caption does not widen it either
    w.caption.setText("http://127.0.0.1:5000/" + "very/long/path/" * 40)
    _settle(qtbot)
    assert w.frameGeometry().width() <= avail.width()


def test_the_timelines_step_column_fits_the_titles(qtbot) -> None:  # noqa: ANN001
    from studio.views.timeline import TimelineModel, TimelinePanel

    panel = TimelinePanel()
    qtbot.addWidget(panel)
    panel.resize(1100, 400)
    panel.show()
    titles = ["Type the user name", "Sort the requests table by employee, descending", "Sign in"]
    for i, t in enumerate(titles):
        panel.apply(StepStarted("r1", "sort_table", i, t, 1))
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3, timeout=5000)
    qtbot.wait(100)  # the panel refreshes once per burst of events
    QApplication.processEvents()
    table, col = panel.table, TimelineModel.COL_TITLE
    width = table.horizontalHeader().sectionSize(col)
    need = max(table.fontMetrics().horizontalAdvance(t) for t in titles)
    assert need < width <= need + 40  # every title whole, and not much wider than the longest


def test_state_graph_node_labels_do_not_overlap(qtbot) -> None:  # noqa: ANN001
    from core.state.graph import StateEdge, StateGraph, StateNode
    from studio.views.state_graph import StateGraphView

    g = StateGraph("flow:f")
    long_title = "Quarterly leave requests of every department \u2013 LeaveDesk"
    for i, key in enumerate("abc"):
        g.put_node(StateNode(key, f"s-{key}", url=f"http://127.0.0.1:5000/requests/department/{i}/quarter/2026-Q1",
                             title=long_title, visits=1234))
    g.put_edge(StateEdge("a", "b", "e1", "click", target_summary="button Export the quarterly report", count=1))
    g.put_edge(StateEdge("b", "c", "e2", "click", target_summary="button Export the quarterly report", count=1))
    view = StateGraphView()
    qtbot.addWidget(view)
    view.resize(1000, 600)
    view.show()
    view.set_graph(g, current="a")
    QApplication.processEvents()
    items = view.canvas.node_items
    assert len(items) == 3
    for item in items.values():
        box = item.sceneBoundingRect()
        rects = [t.sceneBoundingRect() for t in item.childItems() if isinstance(t, QGraphicsSimpleTextItem)]
        assert len(rects) == 3  # title, path line, visit count
        for r in rects:
            assert box.contains(r), (r, box)  # no text runs out of its box into the next one
        for i, r in enumerate(rects):
            for other in rects[i + 1:]:
                assert not r.intersects(other), (r, other)  # the path line stops before the visit count


def test_the_left_column_is_wide_enough_for_a_flows_description_on_a_first_launch(make_window, qtbot) -> None:
    """The dock width was set before the first show and ignored: the Flows column stayed at its minimum
    (about 120 px, one word of a description a line)."""
    w = make_window(RecordingEngine.factory([]))
    w.resize(1400, 900)
    w.show()
    # 800 px offscreen screen; the column is sized once the window has its size (a timer after the show)
    qtbot.waitUntil(lambda: min(280, w.width() // 4) - 10 <= w.flows_dock.width() <= w.width() // 4 + 10,
                    timeout=5000)
    assert 180 <= w.flows_dock.width() <= w.width() // 4 + 10
