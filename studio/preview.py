"""Open one panel alone with sample data, for development (the Orange3 ``WidgetPreview`` habit).

``python -m studio.preview live|steps|escalations|breaker|log|window [--grab out.png]``

``window`` runs the whole studio against the scripted :class:`~studio.testing.FakeEngine`
(slowed down so it can be watched); ``--grab`` renders the panel with a
finished set of sample events instead and saves a PNG (works offscreen).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QCoreApplication, QEventLoop, QSize
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from core.engine.events import EngineEvent, ObservationMade, TargetResolved

from .main_window import MainWindow
from .run_state import RunState
from .samples import sample_project
from .testing import FakeEngine, RecordingEngine, sample_run_events
from .views.breaker import BreakerIndicator
from .views.escalations import EscalationsPanel
from .views.event_log import EventLog
from .views.live_view import LiveView
from .views.steps import StepsPanel

__all__ = ["PANELS", "build_panel", "populated_window", "live_window", "grab"]


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
    from PySide6.QtWidgets import QVBoxLayout  # noqa: PLC0415

    box = QWidget()
    lay = QVBoxLayout(box)
    for state, n in (("closed", 0), ("half_open", 2), ("open", 3)):
        b = BreakerIndicator()
        b.set_state(state, n, 3)
        lay.addWidget(b)
    box.resize(260, 110)
    return box


def _log() -> EventLog:
    log = EventLog()
    for e in _events():
        log.apply(e)
    log.resize(900, 400)
    return log


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


def live_window(phase_delay_s: float = 0.12) -> MainWindow:
    """A main window over the sample project driven live by a slowed-down FakeEngine."""
    project = sample_project()
    window = MainWindow(project.root, engine_factory=FakeEngine.factory(phase_delay_s=phase_delay_s),
                        project_loader=lambda _p: project, run_on_show=True)
    window.resize(1400, 900)
    return window


PANELS: dict[str, Callable[[], QWidget]] = {
    "live": _live, "steps": _steps, "escalations": _escalations, "breaker": _breaker, "log": _log,
    "window": populated_window,
}


def build_panel(name: str) -> QWidget:
    """Build the preview ``name`` (a key of :data:`PANELS`) with sample data."""
    return PANELS[name]()


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
    parser.add_argument("panel", choices=sorted(PANELS))
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
