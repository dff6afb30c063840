"""What keeps the GUI thread free while a run goes (issue 20, item 4): pictures decoded off it, events taken in
batches, panels refreshed once per burst, the store read off it, the engine and recorder in their own processes,
and the watchdog that names what a stall was made of.  No timing is asserted here: timing is `bench studio`'s."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QTimer
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QHeaderView

from core.engine.events import (
    ActionPerformed, FlowStarted, RunStarted, StepFinished, StepStarted,
)


def _png(color: str = "red", size: tuple[int, int] = (64, 40)) -> bytes:
    img = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    img.fill(QColor(color))
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    return bytes(data.data())


def test_pictures_are_decoded_off_the_gui_thread(qtbot) -> None:  # noqa: ANN001
    from studio.coalesce import ImageLoader

    loader = ImageLoader()
    png = _png("red")
    try:
        assert loader.get("k", png) is None  # queued, not decoded here
        with qtbot.waitSignal(loader.loaded, timeout=10_000) as sig:
            pass
        assert sig.args == ["k"]
        assert loader.decoder_thread is not None and loader.decoder_thread is not threading.main_thread()
        assert loader.decoded_on and threading.main_thread().ident not in loader.decoded_on
        img = loader.get("k", png)  # the same bytes: taken from the cache, nothing queued
        assert img is not None and img.width() == 64 and img.pixelColor(3, 3) == QColor("red")
        assert len(loader.decoded_on) == 1
        assert loader.get("k", _png("blue")) is None  # another picture for the key: decoded again
        assert loader.get("none", b"").isNull()  # no picture: a null image at once
    finally:
        loader.close()


def test_a_burst_of_asks_makes_one_refresh(qtbot) -> None:  # noqa: ANN001
    from studio.coalesce import Deferred

    calls: list[int] = []
    d = Deferred(lambda: calls.append(1), interval_ms=10)
    for _ in range(25):
        d.schedule()
    qtbot.waitUntil(lambda: d.calls == 1, timeout=5000)
    qtbot.wait(50)
    assert calls == [1]
    d.schedule()
    d.flush()  # a person's action: at once
    assert calls == [1, 1] and not d.pending


def test_a_burst_of_engine_events_is_applied_in_batches_with_the_event_loop_between(qtbot, monkeypatch,
                                                                                    project) -> None:  # noqa: ANN001
    import studio.bridge as bridge_mod
    from studio.bridge import EngineBridge
    from studio.testing import RecordingEngine

    monkeypatch.setattr(bridge_mod, "DISPATCH_BUDGET_MS", 0.0)  # every event its own batch
    b = EngineBridge()
    engines: list[RecordingEngine] = []
    b.open(project, RecordingEngine.factory(engines))
    try:
        b.start()
        seen: list[object] = []
        order: list[str] = []
        b.event_received.connect(seen.append)
        b.event_received.connect(lambda e: order.append(type(e).__name__))
        burst = [RunStarted("r", "p", ("f",)), FlowStarted("r", "f", tuple(f"s{i}" for i in range(40)))]
        burst += [StepStarted("r", "f", i, f"s{i}", 1) for i in range(40)]

        def emit() -> None:
            engines[0].emit(*burst)

        t = threading.Thread(target=emit)
        t.start()
        t.join()
        # a timer queued once the burst is waiting fires before its last event is applied: the loop ran between
        QTimer.singleShot(0, lambda: order.append("timer"))
        qtbot.waitUntil(lambda: len(seen) == len(burst), timeout=10_000)
        assert seen == burst  # in order, none lost
        assert b.batches_split > 0 and b.batches > 1
        assert "timer" in order and order.index("timer") < len(order) - 1
    finally:
        b.close()


def test_the_timeline_refreshes_once_per_burst_and_sizes_columns_from_the_changed_rows(qtbot) -> None:  # noqa: ANN001
    from studio.views.timeline import TimelineModel, TimelinePanel

    tl = TimelinePanel()
    qtbot.addWidget(tl)
    tl.resize(1200, 500)
    tl.show()
    hh = tl.table.horizontalHeader()
    assert hh.sectionResizeMode(TimelineModel.COL_ACTION) != QHeaderView.ResizeMode.ResizeToContents
    before = tl.refresh.calls
    events = [RunStarted("r", "p", ("f",)), FlowStarted("r", "f", ("one", "two", "three"))]
    for i in range(3):
        events += [StepStarted("r", "f", i, "", 1), ActionPerformed("r", "f", i, "a_very_long_action_kind_name", True),
                   StepFinished("r", "f", i, "passed", False, 12.0)]
    for e in events:
        tl.apply(e)
    assert tl.model.step(2).status == "passed"  # the model changes at once
    qtbot.waitUntil(lambda: tl.refresh.calls > before and not tl.refresh.pending, timeout=5000)
    assert tl.refresh.calls - before <= 2  # one refresh for the burst (two if the clock ticked between)
    width = tl.table.fontMetrics().horizontalAdvance("a_very_long_action_kind_name")
    assert hh.sectionSize(TimelineModel.COL_ACTION) >= width  # the column fits the new text
    assert tl.count_label.text() == "3 steps"


def test_the_history_reads_the_store_off_the_gui_thread_after_a_flow(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from core.domain import RunResult
    from core.engine.events import FlowFinished
    from core.store import Store
    from studio.views.history import HistoryPanel

    media = tmp_path / ".steadyhand"
    media.mkdir()
    with Store.open(media / "store.sqlite") as store:
        store.begin_run("p", "login")
    panel = HistoryPanel(media, flows=["login"])
    qtbot.addWidget(panel)
    panel.show()
    assert len(panel.entries) == 1  # built: read at once
    readers: list[int] = []
    read = panel._read

    def spy(flow):  # noqa: ANN001, ANN202
        readers.append(threading.get_ident())
        return read(flow)

    panel._read = spy  # type: ignore[method-assign]
    with Store.open(media / "store.sqlite") as store:
        store.begin_run("p", "login")
    panel.apply(FlowFinished("r", RunResult("r", "login", "passed", (), 0, 0, 1.0)))
    qtbot.waitUntil(lambda: len(panel.entries) == 2, timeout=10_000)
    assert readers and threading.main_thread().ident not in readers
    assert panel.table.rowCount() == 2


def test_the_watchdog_names_what_the_gui_thread_did_during_a_stall(qtbot) -> None:  # noqa: ANN001
    from studio.stall_watch import StallWatch, format_stalls

    watch = StallWatch(threshold_ms=20.0)
    release = threading.Event()

    def sampled() -> None:  # let the GUI thread go once the watchdog has sampled it at least once
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            s = watch._open
            if s is not None and sum(s.samples.values()) > 0:
                break
            time.sleep(0.01)
        release.set()

    def _busy_here() -> None:
        release.wait(60)

    watch.start()
    try:
        watch.beat()
        threading.Thread(target=sampled, daemon=True).start()
        _busy_here()
        watch.beat()
    finally:
        watch.stop()
    assert watch.stalls, "no stall recorded"
    stall = watch.stalls[-1]
    assert any("_busy_here" in frame for stack in stall.samples for frame in stack)
    assert "_busy_here" in format_stalls(watch.stalls)


def test_an_engine_process_that_dies_is_said_to_the_studio() -> None:
    import queue

    from core.engine.events import EngineError
    from core.project import load_project
    from studio.engine_process import EngineProcess

    root = Path(__file__).resolve().parents[2] / "projects" / "demo"
    events: queue.Queue[object] = queue.Queue()
    engine = EngineProcess(load_project(root), on_event=events.put)
    engine.start()
    try:
        assert engine.pid is not None and engine.pid != os.getpid()
        os.kill(engine.pid, 9)
        event = events.get(timeout=60)
        assert isinstance(event, EngineError) and "ended unexpectedly" in event.message
    finally:
        engine.close(timeout=5)


@pytest.mark.browser
def test_a_studio_run_goes_through_the_engine_process(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    import shutil

    from studio.engine_process import EngineProcess
    from studio.main_window import MainWindow
    from studio.run_state import RunState

    root = Path(__file__).resolve().parents[2] / "projects" / "demo"
    project = tmp_path / "demo"
    shutil.copytree(root, project, ignore=shutil.ignore_patterns(".steadyhand"))
    w = MainWindow(project, close_timeout=20.0)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    try:
        assert w.start_run(("sort_table",))
        engine = w.bridge.engine
        assert isinstance(engine, EngineProcess) and engine.pid != os.getpid()
        qtbot.waitUntil(lambda: w.state is RunState.FINISHED, timeout=300_000)
        assert [r.status for r in w.steps_panel.model.rows("sort_table")] == ["passed"] * 5
        assert w.bridge.frames_received > 0 and w.live_view.frames_painted > 0  # the screencast came through
        assert [s.status for s in w.timeline_panel.model.steps()] == ["passed"] * 5
    finally:
        w.shutdown()
    QApplication.processEvents()


def test_the_state_graph_reads_the_store_off_the_gui_thread_and_keeps_the_changes_that_came_meanwhile(
        qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from core.engine.events import StateGraphChanged
    from core.state.graph import StateEdge, StateNode, flow_graph_name
    from studio.views.state_graph import StateGraphView

    view = StateGraphView(tmp_path / ".steadyhand")
    qtbot.addWidget(view)
    readers: list[int] = []
    gate = threading.Event()
    read = view._read

    def slow_read(name):  # noqa: ANN001, ANN202 - the store answers only once the changes below came
        readers.append(threading.get_ident())
        gate.wait(30)
        return read(name)

    view._read = slow_read  # type: ignore[method-assign]
    name = flow_graph_name("login")
    view.apply(FlowStarted("r", "login", ("one",)))
    a, b = StateNode("a", "s-a", url="http://127.0.0.1/a"), StateNode("b", "s-b", url="http://127.0.0.1/b")
    view.apply(StateGraphChanged("r", "login", 0, name, a, b, StateEdge("a", "b", "e1", "click"),
                                 True, True, True, False))
    assert len(view.graph) == 0  # held while the stored graph is read
    gate.set()
    qtbot.waitUntil(lambda: len(view.graph) == 2, timeout=10_000)
    assert view.graph.name == name and view.current == "b"
    assert readers and threading.main_thread().ident not in readers


def test_the_child_builds_only_the_runners_it_knows() -> None:
    from core.engine.child import build_runner

    with pytest.raises(ValueError, match="unknown runner kind"):
        build_runner("browser", (), lambda _e: None)
