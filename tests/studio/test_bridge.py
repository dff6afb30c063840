"""EngineBridge: engine-thread events arrive on the GUI thread, typed, de-staled, with images."""
from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from core.engine.events import (
    EngineError, FlowStarted, ObservationMade, Pause, RunStarted, Start, StepOnce, StepStarted, Stop,
)
from studio.bridge import EngineBridge
from studio.samples import SAMPLE_DPR, SAMPLE_VIEWPORT, sample_observation
from studio.testing import RecordingEngine


@pytest.fixture
def bridge(qtbot, project):  # noqa: ANN001
    b = EngineBridge()
    engines: list[RecordingEngine] = []
    b.open(project, RecordingEngine.factory(engines))
    yield b, engines[0]
    b.close()


def _from_thread(fn, *args) -> threading.Thread:  # noqa: ANN001
    t = threading.Thread(target=fn, args=args)
    t.start()
    t.join()
    return t


def test_open_starts_the_engine_and_commands_reach_it(bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    assert engine.started
    b.start(("login_lockout",), paused=True)
    b.pause()
    b.step()
    b.stop()
    assert engine.commands == [Start(flows=("login_lockout",), paused=True), Pause(), StepOnce(), Stop()]


def test_events_from_the_engine_thread_are_delivered_on_the_gui_thread(qtbot, bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    seen: list[tuple[object, bool]] = []
    b.step_started.connect(lambda e: seen.append((e, QThread.currentThread() is QApplication.instance().thread())))
    b.start()
    started = RunStarted("r1", "demo", ("f",))
    step = StepStarted("r1", "f", 0, "Open", 1)
    with qtbot.waitSignal(b.step_started, timeout=5000):
        _from_thread(engine.emit, started, step)
    assert seen == [(step, True)]


def test_typed_redispatch_sends_each_event_to_its_signal(qtbot, bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    got: dict[str, list[object]] = {"run": [], "all": []}
    b.run_started.connect(got["run"].append)
    b.event_received.connect(got["all"].append)
    b.start()
    with qtbot.waitSignal(b.run_started, timeout=5000):
        engine.emit(RunStarted("r1", "demo", ()))
    assert [type(e).__name__ for e in got["all"]] == ["RunStarted"]
    assert got["run"][0].run_id == "r1"


def test_events_of_a_previous_run_are_dropped(qtbot, bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    steps: list[StepStarted] = []
    b.step_started.connect(steps.append)
    b.start()
    engine.emit(RunStarted("old", "demo", ("f",)), StepStarted("old", "f", 0, "a", 1))
    qtbot.waitUntil(lambda: len(steps) == 1, timeout=5000)
    assert b.run_id == "old"
    b.start()  # a new run: everything of "old" is stale from now on
    engine.emit(StepStarted("old", "f", 1, "late", 1), RunStarted("new", "demo", ("f",)),
                StepStarted("old", "f", 2, "later", 1), StepStarted("new", "f", 0, "fresh", 1))
    qtbot.waitUntil(lambda: len(steps) == 2, timeout=5000)  # queued in order: the stale ones came first
    assert [s.title for s in steps] == ["a", "fresh"]
    assert b.dropped_count == 2


def test_flow_runs_with_their_own_ids_belong_to_the_current_run(qtbot, bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    steps: list[StepStarted] = []
    b.step_started.connect(steps.append)
    b.start()
    engine.emit(RunStarted("batch", "demo", ("a", "b")), FlowStarted("job-a", "a", ("x",)),
                StepStarted("job-a", "a", 0, "x", 1), FlowStarted("job-b", "b", ("y",)),
                StepStarted("job-b", "b", 0, "y", 1))
    qtbot.waitUntil(lambda: len(steps) == 2, timeout=5000)
    b.start()
    engine.emit(StepStarted("job-b", "b", 0, "stale", 1), RunStarted("batch2", "demo", ("a",)),
                StepStarted("job-a", "a", 0, "stale too", 1), FlowStarted("job-c", "a", ("x",)),
                StepStarted("job-c", "a", 0, "fresh", 1))
    qtbot.waitUntil(lambda: len(steps) == 3, timeout=5000)
    assert [s.title for s in steps] == ["x", "y", "fresh"]


def test_engine_errors_outside_a_run_pass(qtbot, bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    with qtbot.waitSignal(b.engine_error, timeout=5000) as sig:
        engine.emit(EngineError("", "chromium not found"))
    assert sig.args[0].message == "chromium not found"


def test_an_error_of_a_run_that_never_started_passes(qtbot, bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    b.start(("nope",))
    with qtbot.waitSignal(b.engine_error, timeout=5000) as sig:
        engine.emit(EngineError("3f2a", "unknown flow: nope"))  # the real runner: no RunStarted
    assert "nope" in sig.args[0].message
    engine.emit(RunStarted("r2", "demo", ()))
    errors: list[EngineError] = []
    b.engine_error.connect(errors.append)
    with qtbot.waitSignal(b.run_started, timeout=5000):
        engine.emit(EngineError("3f2a", "late error of another run"), RunStarted("r3", "demo", ()))
    assert errors == []


def test_screenshot_is_decoded_to_a_qimage_in_device_px(qtbot, bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    b.start()
    obs = sample_observation("login")
    with qtbot.waitSignal(b.observation_made, timeout=5000) as sig:
        _from_thread(engine.emit, RunStarted("r1", "demo", ("f",)), ObservationMade("r1", "f", 0, "before", obs))
    event, image = sig.args
    assert event.observation is obs
    assert (image.width(), image.height()) == (round(SAMPLE_VIEWPORT[0] * SAMPLE_DPR),
                                               round(SAMPLE_VIEWPORT[1] * SAMPLE_DPR))


def test_superseded_screenshots_are_not_decoded(qtbot, bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    images = []
    b.observation_made.connect(lambda e, img: images.append((e.index, img.isNull())))
    b.start()
    engine.emit(RunStarted("r1", "demo", ("f",)))
    obs = sample_observation("login")
    engine.emit(*(ObservationMade("r1", "f", i, "before", obs) for i in range(3)))  # all queued at once
    qtbot.waitUntil(lambda: len(images) == 3, timeout=5000)
    assert images == [(0, True), (1, True), (2, False)]


def test_close_closes_the_engine_and_ignores_later_events(qtbot, bridge) -> None:  # noqa: ANN001
    b, engine = bridge
    got: list[object] = []
    b.event_received.connect(got.append)
    b.close()
    assert engine.closed
    engine.emit(RunStarted("r1", "demo", ()))  # post() drops it at once: nothing is queued
    QApplication.processEvents()
    assert got == []
    with pytest.raises(RuntimeError):
        b.start()
