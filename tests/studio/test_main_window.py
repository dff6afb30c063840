"""MainWindow over a RecordingEngine: commands sent, controls enabled by state, close stops the engine."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from core.domain import BBox, EscalationCandidate
from core.engine.events import (
    EngineError, EscalationRaised, FlowStarted, Pause, Paused, Resume, Resumed, RunFinished, RunStarted,
    Start, StepOnce, StepStarted, Stop,
)
from studio.main_window import MainWindow
from studio.run_state import RunState
from studio.testing import RecordingEngine


def _enabled(w: MainWindow) -> tuple[bool, bool, bool, bool]:
    return (w.action_start.isEnabled(), w.action_pause.isEnabled(), w.action_step.isEnabled(),
            w.action_stop.isEnabled())


def _play(qtbot, w: MainWindow, engine: RecordingEngine, *events) -> None:  # noqa: ANN001
    """Emit events from an engine thread and wait until the window has handled the last one."""
    with qtbot.waitSignal(w.bridge.event_received, timeout=5000,
                          check_params_cb=lambda e: e is events[-1]):
        engine.emit_from_thread(*events)


def test_layout_and_shortcuts(recorded) -> None:  # noqa: ANN001
    w, _ = recorded
    assert w.flow_names() == ["login_lockout", "export_report"]
    assert w.checked_flows() == ("login_lockout", "export_report")
    assert w.action_start.shortcut() == QKeySequence("F5")
    assert w.action_pause.shortcut() == QKeySequence("F6")
    assert w.action_step.shortcut() == QKeySequence("F10")
    assert w.action_stop.shortcut() == QKeySequence("Shift+F5")
    assert w.action_grid.isCheckable() and not w.action_grid.isChecked()
    assert w.state is RunState.IDLE
    assert _enabled(w) == (True, False, True, False)
    assert w.steps_panel.model.rowCount() == 7  # the first flow's steps, pending
    assert "Idle" in w.state_label.text()


def test_buttons_across_start_pause_resume_stop(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    assert engines == []  # the engine is built on the first run
    w.set_checked_flows(["export_report"])
    w.start_or_resume()
    engine = engines[0]
    assert engine.started and engine.commands == [Start(flows=("export_report",))]
    assert w.state is RunState.STARTING and _enabled(w) == (False, True, False, True)

    _play(qtbot, w, engine, RunStarted("r1", "demo", ("export_report",)),
          FlowStarted("r1", "export_report", ("a", "b")), StepStarted("r1", "export_report", 0, "a", 1))
    assert w.state is RunState.RUNNING and _enabled(w) == (False, True, False, True)
    assert not w.flows_list.item(0).flags() & Qt.ItemFlag.ItemIsUserCheckable  # no edits while running

    w.pause()
    assert engine.commands[-1] == Pause() and w.state is RunState.PAUSING
    assert _enabled(w) == (False, False, False, True)
    _play(qtbot, w, engine, Paused("r1", "export_report", 1, "paused by the user"))
    assert w.state is RunState.PAUSED and _enabled(w) == (True, False, True, True)
    assert w.action_start.text() == "Resume"
    assert w.banner.isVisibleTo(w) and "Paused before step 2" in w.banner_text.text()

    w.step()
    assert engine.commands[-1] == StepOnce()
    _play(qtbot, w, engine, StepStarted("r1", "export_report", 1, "b", 1), Paused("r1", "export_report", 2))
    assert w.state is RunState.PAUSED

    w.start_or_resume()
    assert engine.commands[-1] == Resume()
    _play(qtbot, w, engine, Resumed("r1"))
    assert w.state is RunState.RUNNING and not w.banner.isVisibleTo(w)
    assert w.action_start.text() == "Start"

    w.stop()
    assert engine.commands[-1] == Stop() and w.state is RunState.STOPPING
    assert _enabled(w) == (False, False, False, False)
    _play(qtbot, w, engine, RunFinished("r1", ()))
    assert w.state is RunState.FINISHED and _enabled(w) == (True, False, True, False)
    assert w.flows_list.item(0).flags() & Qt.ItemFlag.ItemIsUserCheckable


def test_disabled_actions_send_nothing(recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.pause()
    w.stop()
    assert engines == []


def test_step_from_idle_starts_paused(recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.step()
    assert engines[0].commands == [Start(flows=("login_lockout", "export_report"), paused=True)]


def test_no_checked_flow_disables_start(recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.set_checked_flows([])
    assert _enabled(w) == (False, False, False, False)
    w.start_or_resume()
    assert engines == []


def test_escalation_raises_the_panel_and_the_banner(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.start_run()
    engine = engines[0]
    _play(qtbot, w, engine, RunStarted("r1", "demo", ("login_lockout",)),
          FlowStarted("r1", "login_lockout", tuple("abcdefg")),
          EscalationRaised("r1", "login_lockout", 5, "Click Unlock account", "locator abstained",
                           (EscalationCandidate("0:1", "link A", 0.78, BBox(10, 10, 80, 20)),
                            EscalationCandidate("0:2", "button B", 0.76, None)), ("step 4 done",), "abstained"),
          Paused("r1", "login_lockout", 5, "escalation"))
    assert w.escalations_panel.model.open_count == 1
    assert "Escalated at step 6" in w.banner_text.text() and "locator abstained" in w.banner_text.text()
    assert w.steps_panel.model.row(5).status == "escalated"
    assert "Paused" in w.state_label.text() and "login_lockout" in w.state_label.text()


def test_keyboard_shortcuts_drive_the_run(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.show()
    with qtbot.waitActive(w):
        w.activateWindow()
    qtbot.keyClick(w, Qt.Key.Key_F5)
    engine = engines[0]
    assert engine.commands == [Start(flows=("login_lockout", "export_report"))]
    _play(qtbot, w, engine, RunStarted("r1", "demo", ("login_lockout",)))
    qtbot.keyClick(w, Qt.Key.Key_F6)
    assert engine.commands[-1] == Pause()
    _play(qtbot, w, engine, Paused("r1", "login_lockout", 0))
    qtbot.keyClick(w, Qt.Key.Key_F10)
    assert engine.commands[-1] == StepOnce()
    _play(qtbot, w, engine, Paused("r1", "login_lockout", 1))
    qtbot.keyClick(w, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    assert engine.commands[-1] == Stop()
    qtbot.keyClick(w, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    assert w.action_grid.isChecked() and w.live_view.grid_visible()


def test_run_on_show_starts_all_flows(qtbot, make_window) -> None:  # noqa: ANN001
    engines: list[RecordingEngine] = []
    w = make_window(RecordingEngine.factory(engines), run_on_show=True)
    w.set_checked_flows(["export_report"])  # run_on_show runs ALL flows regardless
    w.show()
    qtbot.waitUntil(lambda: bool(engines) and bool(engines[0].commands), timeout=5000)
    assert engines[0].commands == [Start(flows=("login_lockout", "export_report"))]


def test_closing_the_window_closes_the_engine(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.start_run()
    w.close()
    assert engines[0].closed


def test_an_engine_that_cannot_be_built_is_reported(qtbot, make_window) -> None:  # noqa: ANN001
    def broken(project, on_event):  # noqa: ANN001, ANN202
        raise FileNotFoundError("chromium not found at /usr/bin/chromium")

    w = make_window(broken)
    assert w.start_run() is False
    assert w.state is RunState.IDLE and _enabled(w) == (True, False, True, False)
    assert "chromium not found" in w.statusBar().currentMessage()
    assert "chromium not found" in w.event_log.toPlainText()


def test_engine_error_is_shown(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.start_run()
    _play(qtbot, w, engines[0], EngineError("", "browser crashed"))
    assert "browser crashed" in w.statusBar().currentMessage()
    assert w.state is RunState.FINISHED


def test_a_run_refused_by_the_engine_returns_to_idle_controls(qtbot, recorded) -> None:  # noqa: ANN001
    w, engines = recorded
    w.start_run(("missing",))
    _play(qtbot, w, engines[0], EngineError("run-9", "unknown flow: missing"))
    assert w.state is RunState.FINISHED and _enabled(w) == (True, False, True, False)
