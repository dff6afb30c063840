"""Open one panel alone with sample data, for development (the Orange3 ``WidgetPreview`` habit).

``python -m studio.preview PANEL [--grab out.png]`` (``--help`` lists the panels: live, resolution,
steps, graph, history, ... window, recording, takeover)

``window`` runs the whole studio against the scripted :class:`~studio.testing.FakeEngine`
(slowed down so it can be watched); ``--grab`` renders the panel with a
finished set of sample events instead and saves a PNG (works offscreen).
``recorder`` is the Recorder dock alone after a recording and a replay;
``recording`` the whole studio while a :class:`~studio.testing.FakeRecorder`
records the sample steps (the live view shows the recorded page); ``takeover``
the whole studio after the escalation of the sample run was answered with
Take over (the "You have the page" bar, one action recorded).
``graph``, ``history`` and ``compare`` read a sample store of two runs
(:mod:`studio.history_samples`): the flow's state graph, a run opened
read-only, and the two runs compared.
``correction`` the flow edit offered after a takeover, as a diff.
``skill-review`` the review queue with a proposed skill (failure and correction side by side, the
editable skill, its validation) beside heal proposals; ``skill-library`` the skill library browser
(scope tree, quality, hits, where a skill fired) over a sample skill space.
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
from core.domain.resources import bundled_project

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
    view.show_resolution(target.resolution, target.candidate)
    view.set_grid_visible(True)
    view.resize(1120, 630)
    return view


def _resolution() -> QWidget:
    """The resolution panel at the sample run's escalation: the real locator chain (R2) run again on the
    sample page for a renamed target, said plainly (:func:`core.engine.explain.explain`)."""
    from dataclasses import replace  # noqa: PLC0415

    from core.engine.events import EscalationRaised  # noqa: PLC0415
    from core.engine.explain import explain, role_of  # noqa: PLC0415
    from core.locate import resolve  # noqa: PLC0415

    from .views.resolution import ResolutionPanel  # noqa: PLC0415

    panel = ResolutionPanel()
    events = _events()
    page: dict[int, tuple] = {}
    for e in events:
        if isinstance(e, ObservationMade) and e.when == "before":
            page[e.index] = e.observation.candidates
        if isinstance(e, EscalationRaised):
            cands = page.get(e.index, ())
            by_ref = {c.ref: c for c in cands}
            first = next((by_ref[c.ref] for c in e.candidates if c.ref in by_ref), None)
            if first is not None:  # the step's target as recorded without its kind: two look-alikes
                target = first.descriptor.with_(role="", tag="", id="", css_path="", xpath="", bbox=None)
                res = resolve(target, cands)
                panel.apply(TargetResolved(e.run_id, e.flow, e.index, res, None))
                tops = tuple(replace(c, role=role_of(by_ref[c.ref].descriptor)) for c in e.candidates
                             if c.ref in by_ref)
                top = tuple(t for s in res.top for t in tops if t.ref == s.ref) or tops
                e = replace(e, candidates=tuple(replace(t, score=next(s.score for s in res.top if s.ref == t.ref))
                                                for t in top if any(s.ref == t.ref for s in res.top)) or tops,
                            answers=(*e.answers, "use_candidate"),
                            plain=explain("abstained", e.reason, target=target, resolution=res, candidates=cands))
        if not isinstance(e, TargetResolved):
            panel.apply(e)
    if panel.rows():
        panel.select_ref(panel.rows()[0].ref)
        panel.show_element(panel.rows()[0].element)
    panel.resize(420, 760)
    return panel


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


def _timeline() -> QWidget:
    """The timeline after the sample run, resumed to its end, each step's evidence made by the engine's own
    image difference of the sample screenshots; step 5 met a console error and a failed request."""
    from core.domain.evidence import ConsoleMessage, FailedRequest, StepEvidence  # noqa: PLC0415
    from core.engine.events import StepEvidenceRecorded, StepFinished  # noqa: PLC0415
    from core.engine.evidence import secret_boxes  # noqa: PLC0415
    from core.state.diff import image_diff  # noqa: PLC0415

    from .views.timeline import TimelinePanel  # noqa: PLC0415

    panel = TimelinePanel()
    shots: dict[tuple[int, str], ObservationMade] = {}
    for e in sample_run_events(until_escalation=False):
        if isinstance(e, ObservationMade):
            shots[(e.index, e.when)] = e
        if isinstance(e, StepFinished):
            b, a = shots.get((e.index, "before")), shots.get((e.index, "after"))
            diff = None
            if b is not None and a is not None and b.observation.screenshot_png and a.observation.screenshot_png:
                diff = image_diff(b.observation.screenshot_png, a.observation.screenshot_png,
                                  device_pixel_ratio=a.observation.device_pixel_ratio,
                                  masks=secret_boxes(b.observation, a.observation))
            console = (ConsoleMessage("error", "TypeError: Cannot read properties of undefined (reading 'rows')",
                                      "http://127.0.0.1:8765/static/app.js:212", 140.0),) if e.index == 4 else ()
            failed = (FailedRequest("GET", "http://127.0.0.1:8765/api/reports", 500, "fetch", "", 95.0),
                      ) if e.index == 4 else ()
            panel.apply(StepEvidenceRecorded(e.run_id, e.flow, e.index, StepEvidence(
                e.index, 1, "", diff, console, failed, (), e.ms, e.ms, tuple(e.phase_ms))))
        panel.apply(e)
    panel.select_row(4)
    panel.resize(1280, 720)
    return panel


def _model() -> QWidget:
    from PySide6.QtWidgets import QVBoxLayout  # noqa: PLC0415

    from core.engine.events import ModelUsage  # noqa: PLC0415

    from .views.model_usage import ModelUsageLabel  # noqa: PLC0415

    box = QWidget()
    lay = QVBoxLayout(box)
    for counters, share, alarm in (
            ({"calls": 4, "cache_hits": 2, "rule_decisions": 1, "prompt_tokens": 5120, "completion_tokens": 210,
              "latency_ms": 842.0}, 0.0, False),
            ({"calls": 3, "cache_hits": 0, "rule_decisions": 0, "prompt_tokens": 3900, "completion_tokens": 150,
              "latency_ms": 1310.0, "errors": 1}, 0.5, True)):
        label = ModelUsageLabel()
        label.set_usage(ModelUsage("r1", "leave_goal", "qwen2.5-vl-7b", counters, share, alarm))
        lay.addWidget(label)
    box.resize(720, 90)
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


def _heal_review() -> QWidget:
    """The heal review queue over two sample proposals (nothing is written)."""
    from .heal_samples import SampleHealSource  # noqa: PLC0415
    from .views.heal_review import HealReviewPanel  # noqa: PLC0415

    panel = HealReviewPanel([SampleHealSource()])
    panel.resize(1180, 560)
    return panel


def _settings() -> QWidget:
    """The project settings dialog over a copy of the bundled demo project (written only on OK)."""
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    from .views.settings_dialog import SettingsDialog  # noqa: PLC0415

    root = Path(tempfile.mkdtemp(prefix="steadyhand-settings-")) / "demo"
    shutil.copytree(bundled_project("demo"), root,
                    ignore=shutil.ignore_patterns(".steadyhand"))
    return SettingsDialog(root)


def _window_small() -> QWidget:
    """The populated main window at 1024x680, the smallest size the layout is made for."""
    window = populated_window()
    window.resize(1024, 680)
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
    window.takeover_banner.set_actions(("Click Unlock account",))  # what the live view's click recorded
    window.takeover_banner.set_meaning("replace")  # the person did the step itself (an action never chooses it)
    return window


def _correction() -> QWidget:
    """The flow edit offered after a takeover: step 6 of the sample flow replaced by the click done by hand."""
    import tempfile  # noqa: PLC0415

    import yaml  # noqa: PLC0415

    from core.domain import Action, Step  # noqa: PLC0415
    from core.engine.events import CorrectionOffered  # noqa: PLC0415
    from core.heal.corrections import correction_edit, steps_as_mappings  # noqa: PLC0415
    from core.project.loader import flow_to_mapping  # noqa: PLC0415

    from .samples import _target  # noqa: PLC0415
    from .views.takeover import CorrectionDialog  # noqa: PLC0415

    project = sample_project()
    flow = project.flows["login_lockout"]
    text = yaml.dump(flow_to_mapping(flow), sort_keys=False, allow_unicode=True, width=100)
    by_hand = Step("s1", Action("click"), name="Click Unlock my account",
                   target=_target("Unlock my account", "button", "button"))
    edit = correction_edit(text, step_id="s6", meaning="replace",
                           steps=steps_as_mappings(flow.name, "", [by_hand]), path="flows/login_lockout.yaml")
    offer = CorrectionOffered("r1", flow.name, 5, 1, "replace", "offered", edit.diff, (by_hand.title,))
    return CorrectionDialog(offer, Path(tempfile.gettempdir()))


def live_window(phase_delay_s: float = 0.12) -> MainWindow:
    """A main window over the sample project driven live by a slowed-down FakeEngine."""
    project = sample_project()
    window = MainWindow(project.root, engine_factory=FakeEngine.factory(phase_delay_s=phase_delay_s),
                        project_loader=lambda _p: project, run_on_show=True)
    window.resize(1400, 900)
    return window


def _graph() -> QWidget:
    from core.state.graph import flow_graph_name  # noqa: PLC0415

    from .history_samples import preview_folder, sample_store  # noqa: PLC0415
    from .views.state_graph import StateGraphView  # noqa: PLC0415

    media, _a, _b = sample_store(preview_folder())
    view = StateGraphView(media)
    graph = view.load_stored(flow_graph_name("login_lockout"))
    last = graph.edges()[-1]
    view.set_graph(graph, current=last.target)
    view.select_state(graph.edges()[3].target)
    view.resize(1100, 560)
    return view


def _stored_graph(media: Path, name: str) -> QWidget:
    """The state graph dock over a real store (``--store``), showing graph ``name`` (else its first graph)."""
    from core.store import GraphTable, Store  # noqa: PLC0415

    from .views.state_graph import StateGraphView  # noqa: PLC0415

    if not name:
        with Store.open(media / "store.sqlite", read_only=True) as store:
            name = next(iter(GraphTable(store).names()), "")
    view = StateGraphView(media)
    graph = view.load_stored(name)
    if graph.edges():
        view.set_graph(graph, current=graph.edges()[-1].target)
    view.resize(1100, 560)
    return view


def _history(compare: bool = False) -> QWidget:
    from .history_samples import preview_folder, sample_store  # noqa: PLC0415
    from .views.history import HistoryPanel  # noqa: PLC0415

    media, a, b = sample_store(preview_folder())
    panel = HistoryPanel(media, flows=list(sample_project().flows))
    if compare:
        panel.compare(a, b)
    else:
        panel.open_run(b)
        panel.viewer.show_step(3)
    panel.resize(1100, 520)
    return panel


def _skill_review() -> QWidget:
    """The review queue with the sample skill space's proposed skill selected, beside sample heals."""
    from .heal_samples import SampleHealSource  # noqa: PLC0415
    from .history_samples import preview_folder  # noqa: PLC0415
    from .skill_samples import skill_store  # noqa: PLC0415
    from .views.heal_review import HealReviewPanel  # noqa: PLC0415
    from .views.skill_review import SkillSource  # noqa: PLC0415

    root = preview_folder()
    skill_store(root)
    panel = HealReviewPanel([SkillSource(root, "demo"), SampleHealSource()], root=root)
    panel.resize(1280, 700)
    return panel


def _skill_library() -> QWidget:
    """The skill library over the sample skill space, the approved cookie-banner skill and its uses selected."""
    from .history_samples import preview_folder  # noqa: PLC0415
    from .skill_samples import SAMPLE_APPROVED_ID, skill_store  # noqa: PLC0415
    from .views.skill_library import SkillLibraryPanel  # noqa: PLC0415

    root = preview_folder()
    skill_store(root)
    panel = SkillLibraryPanel(root, "demo")
    panel.select_skill(SAMPLE_APPROVED_ID)
    panel.resize(1100, 560)
    return panel


PANELS: dict[str, Callable[[], QWidget]] = {
    "live": _live, "resolution": _resolution, "steps": _steps, "escalations": _escalations, "breaker": _breaker, "breakpoints": _breakpoints, "log": _log,
    "recorder": _recorder, "window": populated_window, "correction": _correction,
    "timeline": _timeline, "model": _model,
    "graph": _graph, "history": _history, "compare": lambda: _history(compare=True),
}
PANELS.update({"heal-review": _heal_review, "settings": _settings, "window-small": _window_small})
PANELS.update({"skill-review": _skill_review, "skill-library": _skill_library})
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
    parser.add_argument("--store", type=Path, metavar="DIR",
                        help="graph: a real store folder (<project>/.steadyhand) instead of the sample one")
    parser.add_argument("--graph", default="", metavar="NAME", help="graph: the stored graph to show (explore:...)")
    ns = parser.parse_args(argv)
    app = create_app()
    if ns.panel == "graph" and ns.store:
        PANELS["graph"] = lambda: _stored_graph(ns.store, ns.graph)
    if ns.grab:
        widget = build_panel(ns.panel)
        grab(widget, ns.grab, widget.size() if ns.panel == "window-small" else None)
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
