"""Open one panel alone with sample data, for development (the Orange3 ``WidgetPreview`` habit).

``python -m studio.preview live|steps|escalations|breaker|breakpoints|log|recorder|window|recording|takeover [--grab out.png]``

``window`` runs the whole studio against the scripted :class:`~studio.testing.FakeEngine`
(slowed down so it can be watched); ``--grab`` renders the panel with a
finished set of sample events instead and saves a PNG (works offscreen).
``recorder`` is the Recorder dock alone after a recording and a replay;
``recording`` the whole studio while a :class:`~studio.testing.FakeRecorder`
records the sample steps (the live view shows the recorded page); ``takeover``
the whole studio after the escalation of the sample run was answered with
Take over (the "You have the page" bar).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QCoreApplication, QEventLoop, QSize, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from core.engine.events import EngineEvent, ObservationMade, TargetResolved

from .main_window import MainWindow
from .run_state import RunState
from .samples import sample_project
from .testing import FakeEngine, FakeRecorder, RecordingEngine, sample_run_events
from .views.breaker import BreakerIndicator, BreakerPanel
from .views.breakpoints import BreakpointBook, BreakpointGutter, BreakpointsPanel
from .views.escalations import EscalationsPanel
from .views.event_log import EventLog
from .views.live_view import LiveView
from .views.recorder import RecorderDock, RecorderState
from .views.steps import StepsPanel

__all__ = [
    "PANELS", "WINDOWS", "build_panel", "populated_window", "live_window", "recording_window", "takeover_window",
    "grab",
]


def _events() -> list[EngineEvent]:
    return sample_run_events(until_escalation=True)


def _live() -> LiveView:
    view = LiveView()
    events = _events()
    obs = [e for e in events if isinstance(e, ObservationMade) and e.when == "before"]
    last = obs[-2]  # "before" of step 5: the form with the healed "Log in" target
    view.set_observation(last.observation, QImage.fromData(last.observation.screenshot_png, "PNG"))
    target = next(e for e in events if isinstance(e, TargetResolved) and e.index == last.index)
    if target.candidate is not None:
        view.set_target(target.candidate, f"{target.resolution.strategy} {target.resolution.score:.2f}")
    view.set_grid_visible(True)
    view.resize(1120, 630)
    return view


def _steps() -> StepsPanel:
    panel = StepsPanel()
    for e in _events():
        panel.apply(e)
    panel.select_row(3)
    panel.resize(1100, 320)
    return panel


def _escalations() -> EscalationsPanel:
    panel = EscalationsPanel()
    for e in _events():
        panel.apply(e)
    panel.resize(380, 520)
    return panel


def _breaker() -> QWidget:
    """The status-bar indicators in each state, and the Breaker panel after a sample run whose breaker opened."""
    from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout  # noqa: PLC0415

    from core.engine.events import BreakerChanged, RunStarted  # noqa: PLC0415

    box = QWidget()
    row = QHBoxLayout(box)
    col = QVBoxLayout()
    for state, n, final in (("closed", 0, False), ("half_open", 3, False), ("open", 3, False), ("open", 3, True)):
        b = BreakerIndicator()
        b.set_state(state, n, 3)
        if final:
            b.finish()
        col.addWidget(b)
    col.addStretch(1)
    row.addLayout(col)
    panel = BreakerPanel()
    events = sample_run_events(until_escalation=False)
    run_id = next(e.run_id for e in events if isinstance(e, RunStarted))
    for e in events:
        if not isinstance(e, (BreakerChanged,)) and type(e).__name__ != "RunFinished":
            panel.apply(e)
    panel.apply(BreakerChanged(run_id, "open", 3, 3, 287.0, 1))  # a failed probe re-opened it: 4:47 to half-open
    row.addWidget(panel, 1)
    box.resize(1180, 330)
    return box


def _breakpoints() -> QWidget:
    """The steps table with its breakpoint gutter (two red dots) beside the Breakpoints panel."""
    from PySide6.QtWidgets import QHBoxLayout  # noqa: PLC0415

    from core.engine.breakpoints import Breakpoints, Conditions  # noqa: PLC0415

    project = sample_project()
    flow = "login_lockout"
    ids = lambda f: [s.id for s in project.flows[f].steps] if f in project.flows else []  # noqa: E731
    titles = lambda f: [s.title for s in project.flows[f].steps] if f in project.flows else []  # noqa: E731
    book = BreakpointBook()
    steps = _steps()
    steps.table.setVerticalHeader(BreakpointGutter(book, lambda: steps.model.current_flow, ids, steps.table))
    first = ids(flow)
    book.set(Breakpoints({flow: frozenset({first[2], first[5]})},
                         Conditions(low_confidence=True, confidence_below=0.8, abstained=True, irreversible=True)))
    box = QWidget()
    row = QHBoxLayout(box)
    row.addWidget(steps, 3)
    row.addWidget(BreakpointsPanel(book, ids, titles), 1)
    box.resize(1400, 360)
    return box


def _log() -> EventLog:
    log = EventLog()
    for e in _events():
        log.apply(e)
    log.resize(900, 400)
    return log


def _recorder() -> RecorderDock:
    """The Recorder dock after recording the sample steps, one renamed, and a replay with a heal."""
    recorders: list[FakeRecorder] = []
    dock = RecorderDock(sample_project(), recorder_factory=FakeRecorder.factory(recorders))
    dock.name_edit.setText("export_csv_report")
    dock.start_recording()
    _drain(lambda: dock.state is RecorderState.RECORDING)
    recorders[0].play_sample()
    _drain(lambda: dock.model.rowCount() == 7)
    dock.stop_recording()
    _drain(lambda: dock.state is RecorderState.STOPPED)
    m = dock.model
    m.make_parameter(0, "user_name")
    m.set_irreversible(5, True)
    m.set_read_only(6, True)
    m.start_replay()
    for i, (status, verdict, strategy) in enumerate((
            ("passed", "as_expected", "exact"), ("passed", "as_expected", "exact"),
            ("passed", "as_expected", "semantic"), ("passed", "as_expected", "exact"),
            ("passed", "as_expected", "fuzzy_text"), ("failed", "unchanged", "exact"), ("running", "", ""))):
        res = m.replay_result(i)
        assert res is not None
        res.status, res.verdict, res.strategy = status, verdict, strategy
        res.healed = strategy not in ("exact", "")
        m.replay_changed(i)
    dock.select_row(2)
    dock.resize(1180, 380)
    return dock


def recording_window(project_root: Path | None = None, steps: int = 5) -> MainWindow:
    """The studio while a FakeRecorder records: ``steps`` sample steps, the live view on the recorded page."""
    project = sample_project(project_root)
    recorders: list[FakeRecorder] = []
    engines: list[RecordingEngine] = []
    window = MainWindow(project.root, engine_factory=RecordingEngine.factory(engines),
                        project_loader=lambda _p: project, recorder_factory=FakeRecorder.factory(recorders))
    window.resize(1400, 900)
    window.show()  # the dock tabs are laid out once shown
    _drain(lambda: False, rounds=5)
    window.action_record.trigger()
    dock = window.recorder_dock
    dock.name_edit.setText("export_csv_report")
    dock.start_recording()
    _drain(lambda: dock.state is RecorderState.RECORDING)
    recorders[0].play_sample(steps)
    _drain(lambda: dock.model.rowCount() == steps)
    dock.select_row(steps - 1)
    window.resizeDocks([dock], [330], Qt.Orientation.Vertical)
    return window


def populated_window(project_root: Path | None = None) -> MainWindow:
    """A main window over the sample project, fed with a sample run up to its escalation.

    Uses a :class:`~studio.testing.RecordingEngine`: events are replayed,
    nothing runs; the window ends paused at the escalation of step 6.
    """
    project = sample_project(project_root)
    engines: list[RecordingEngine] = []
    window = MainWindow(project.root, engine_factory=RecordingEngine.factory(engines),
                        project_loader=lambda _p: project)
    window.resize(1400, 900)
    window.start_run()
    events = sample_run_events(project)
    engines[0].emit_from_thread(*events)
    _drain(lambda: window.state is RunState.PAUSED)
    window.steps_panel.select_row(3)
    return window


def takeover_window(project_root: Path | None = None) -> MainWindow:
    """The studio while the user has the page: the sample run escalated and was answered with Take over.

    Driven by a :class:`~studio.testing.FakeEngine` (it waits for the hand-back);
    the second candidate of the escalation is selected, so its box is outlined.
    """
    project = sample_project(project_root)
    window = MainWindow(project.root, engine_factory=FakeEngine.factory(), project_loader=lambda _p: project)
    window.resize(1400, 900)
    window.set_checked_flows(["login_lockout"])
    window.show()
    window.start_run()
    _drain(lambda: window.state is RunState.PAUSED)
    window.escalations_panel.select_candidate(1)
    window.take_over()
    _drain(lambda: window.state is RunState.TAKEN_OVER)
    window.takeover_banner.continue_from.setValue(7)
    return window


def live_window(phase_delay_s: float = 0.12) -> MainWindow:
    """A main window over the sample project driven live by a slowed-down FakeEngine."""
    project = sample_project()
    window = MainWindow(project.root, engine_factory=FakeEngine.factory(phase_delay_s=phase_delay_s),
                        project_loader=lambda _p: project, run_on_show=True)
    window.resize(1400, 900)
    return window


PANELS: dict[str, Callable[[], QWidget]] = {
    "live": _live, "steps": _steps, "escalations": _escalations, "breaker": _breaker, "breakpoints": _breakpoints,
    "log": _log,
    "recorder": _recorder, "window": populated_window,
}
#: Whole-window previews in other states than :func:`populated_window` (paused at an escalation).
WINDOWS: dict[str, Callable[[], MainWindow]] = {"recording": recording_window, "takeover": takeover_window}


def build_panel(name: str) -> QWidget:
    """Build the preview ``name`` (a key of :data:`PANELS` or :data:`WINDOWS`) with sample data."""
    return PANELS[name]() if name in PANELS else WINDOWS[name]()


def _drain(done: Callable[[], bool], rounds: int = 200) -> None:
    for _ in range(rounds):
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        if done():
            return


def grab(widget: QWidget, path: Path, size: QSize | None = None) -> Path:
    """Show ``widget`` (offscreen is fine), let it lay out, and save it as a PNG."""
    if size is not None:
        widget.resize(size)
    widget.show()
    _drain(lambda: False, rounds=5)
    widget.grab().save(str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    from .app import create_app  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m studio.preview", description=__doc__.splitlines()[0])
    parser.add_argument("panel", choices=sorted(PANELS) + sorted(WINDOWS))
    parser.add_argument("--grab", type=Path, help="save a PNG of the panel with sample data and exit")
    ns = parser.parse_args(argv)
    app = create_app()
    if ns.grab:
        widget = build_panel(ns.panel)
        grab(widget, ns.grab)
        print(ns.grab)
        if isinstance(widget, MainWindow):
            widget.shutdown()
        return 0
    widget = live_window() if ns.panel == "window" else build_panel(ns.panel)
    widget.show()
    code = app.exec()
    if isinstance(widget, MainWindow):
        widget.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
