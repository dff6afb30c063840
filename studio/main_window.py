"""The studio's main window: flows, live view, steps, escalations and run controls.

Thin by design: it loads a project, hands commands to the engine through an
:class:`~studio.bridge.EngineBridge`, and lets each panel render the events
it receives.  The engine comes from an injected factory, so tests can use
:class:`studio.testing.FakeEngine` or the real ``EngineRunner``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction, QCloseEvent, QColor, QIcon, QImage, QKeySequence, QPainter, QPen, QPixmap, QShowEvent,
)
from PySide6.QtWidgets import (
    QDockWidget, QFrame, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QMainWindow, QSizePolicy, QStyle,
    QToolBar, QToolButton, QVBoxLayout, QWidget,
)

from core.domain import Candidate, EscalationCandidate, Observation
from core.engine.events import (
    Command, EngineError, EngineEvent, EscalationRaised, FlowStarted, HandBack, HandedBack, ObservationMade,
    Paused, PhaseChanged, Resumed, RunFinished, RunStarted, Start, StepStarted, TakeoverStarted, TargetResolved,
)
from core.engine.report import results_line
from core.record.events import LiveFrame, RecordingStarted

from .bridge import EngineBridge, EngineFactory, ProjectLike, default_engine_factory
from .recorder_bridge import RecorderFactory
from .run_state import RunState, RunStateMachine, controls_for
from .views.breaker import BreakerIndicator, BreakerPanel
from .views.breakpoints import BreakpointBook, BreakpointGutter, BreakpointsPanel
from .theme import TAKEOVER_COLOR
from .views.escalations import AnswerBar, EscalationsPanel, TakeoverBanner
from .views.event_log import EventLog
from .views.live_view import LiveView
from .views.recorder import RecorderDock
from .views.steps import StepsPanel

__all__ = ["MainWindow", "ProjectLoader", "default_project_loader"]

ProjectLoader = Callable[[Path], ProjectLike]


def default_project_loader(path: Path) -> ProjectLike:
    """``core.project.load_project(path)``, imported lazily."""
    from core.project import load_project  # noqa: PLC0415 - the studio loads without it

    return load_project(path)


def _still_shown(target: Candidate, observation: Observation) -> bool:
    """True when ``observation`` still has the target element at (about) the same place."""
    d, box = target.descriptor, target.descriptor.bbox
    for c in observation.candidates:
        e = c.descriptor
        if (e.frame, e.css_path, e.role, e.label_text) == (d.frame, d.css_path, d.role, d.label_text) and \
                box is not None and e.bbox is not None and abs(e.bbox.x - box.x) <= 4 and abs(e.bbox.y - box.y) <= 4:
            return True
    return False


class MainWindow(QMainWindow):
    """Studio window for one project.

    Parameters
    ----------
    project_path : Path | str
        Project folder (holding ``steadyhand.yaml``).
    engine_factory : EngineFactory | None
        ``factory(project, on_event) -> engine``; default the real
        ``EngineRunner`` (headless).  The engine is built on the first run.
    project_loader : ProjectLoader | None
        ``loader(path) -> project``; default ``core.project.load_project``.
    run_on_show : bool
        Start all flows as soon as the window is first shown.
    close_timeout : float
        Seconds to wait for the engine to stop when the window closes.
    recorder_factory : RecorderFactory | None
        ``factory(project, flow_name, url, on_event, headless) -> recorder``
        for the Recorder dock; default the real ``RecorderRunner``.
    record_headless : bool
        Record on a headless Chromium (input comes from the live view).

    Signals
    -------
    run_state_changed(str)
        The :class:`~studio.run_state.RunState` value after each change.

    Raises
    ------
    Exception
        Whatever the project loader raises for an unreadable project.
    """

    run_state_changed = Signal(str)

    def __init__(self, project_path: Path | str, *, engine_factory: EngineFactory | None = None,
                 project_loader: ProjectLoader | None = None, run_on_show: bool = False,
                 close_timeout: float = 10.0, recorder_factory: RecorderFactory | None = None,
                 record_headless: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project_path = Path(project_path)
        self._project_loader = project_loader or default_project_loader
        self.project: ProjectLike = self._project_loader(self.project_path)
        self._recorder_factory = recorder_factory
        self._record_headless = record_headless
        self._engine_factory = engine_factory or default_engine_factory
        self._run_on_show = run_on_show
        self._auto_started = False
        self._close_timeout = close_timeout
        self.run_state = RunStateMachine()
        self.bridge = EngineBridge(self)
        self._flow = ""
        self._step_count = 0
        self._step_index = -1
        self._phase = ""
        self._last_results = ""
        self._note = ""  # "handed back, continuing from step M" until the run moves past it
        self._note_until = -1

        self.setWindowTitle(f"Steadyhand Studio \u2014 {self.project.name}")
        self.setObjectName("MainWindow")
        self.setDockNestingEnabled(True)
        self._build_actions()
        self._build_central()
        self._build_docks()
        self._build_debug_docks()
        self._build_recorder()
        self._build_status_bar()
        self._connect_bridge()
        self._update_controls()
        self._update_status()

    # --- building -------------------------------------------------------------------------

    def _build_actions(self) -> None:
        style = self.style()
        sp = QStyle.StandardPixmap

        def action(text: str, icon: QStyle.StandardPixmap, key: QKeySequence | str, tip: str,
                   slot: Callable[[], None]) -> QAction:
            a = QAction(style.standardIcon(icon), text, self)
            a.setShortcut(QKeySequence(key))
            a.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
            a.setToolTip(f"{tip} ({QKeySequence(key).toString()})")
            a.triggered.connect(slot)
            return a

        self.action_start = action("Start", sp.SP_MediaPlay, "F5", "Start the checked flows, or resume",
                                   self.start_or_resume)
        self.action_pause = action("Pause", sp.SP_MediaPause, "F6", "Pause at the next phase boundary", self.pause)
        self.action_step = action("Step", sp.SP_MediaSkipForward, "F10",
                                  "Run one step, then pause (from idle: start paused)", self.step)
        self.action_stop = action("Stop", sp.SP_MediaStop, "Shift+F5", "Stop the run", self.stop)
        self.action_take_over = action("Take over", sp.SP_MediaStop, "F8",
                                       "Take the page yourself: the engine stops at its next pause point and waits "
                                       "until you hand back", self.take_over)
        self.action_take_over.setIcon(_takeover_icon())
        self.action_grid = QAction("Grid", self)
        self.action_grid.setCheckable(True)
        self.action_grid.setShortcut(QKeySequence("Ctrl+G"))
        self.action_grid.setToolTip("Show the A1..J10 grid over the screenshot (Ctrl+G)")
        self.action_boxes = QAction("Boxes", self)
        self.action_boxes.setCheckable(True)
        self.action_boxes.setChecked(True)
        self.action_boxes.setShortcut(QKeySequence("Ctrl+B"))
        self.action_boxes.setToolTip("Show the DOM boxes of the candidates (Ctrl+B)")

        tb = QToolBar("Run", self)
        tb.setObjectName("runToolbar")
        tb.setMovable(False)
        tb.setIconSize(QSize(18, 18))
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for a in (self.action_start, self.action_pause, self.action_step, self.action_stop, self.action_take_over):
            tb.addAction(a)
        tb.addSeparator()
        tb.addAction(self.action_grid)
        tb.addAction(self.action_boxes)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        tb.addWidget(spacer)
        self.project_label = QLabel(f"{self.project.name}  \u00b7  {self.project_path}")
        self.project_label.setObjectName("panelTitle")
        tb.addWidget(self.project_label)
        self.toolbar = tb
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, tb)

    def _build_central(self) -> None:
        self.live_view = LiveView()
        self.caption = QLabel("No observation yet")
        self.caption.setObjectName("liveCaption")
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.banner = QFrame()
        self.banner.setObjectName("escalationBanner")
        self.banner_text = QLabel()
        self.banner_text.setWordWrap(True)
        self.banner_text.setTextFormat(Qt.TextFormat.RichText)
        row = QHBoxLayout(self.banner)
        row.setContentsMargins(12, 8, 8, 8)
        row.addWidget(self.banner_text, 1)
        self.banner_buttons: list[QToolButton] = []
        for a in (self.action_start, self.action_step, self.action_take_over, self.action_stop):
            b = QToolButton()
            b.setDefaultAction(a)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            row.addWidget(b)
            self.banner_buttons.append(b)
        # an escalation is answered with exactly the answers it accepts
        self.banner_answers = AnswerBar()
        self.banner_answers.command_requested.connect(self._answer)
        row.addWidget(self.banner_answers)
        self.banner.hide()

        self.takeover_banner = TakeoverBanner()
        self.takeover_banner.command_requested.connect(self._answer)
        stop = QToolButton()
        stop.setDefaultAction(self.action_stop)
        stop.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.takeover_banner.add_button(stop)

        central = QWidget()
        lay = QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.caption)
        banner_box = QVBoxLayout()
        banner_box.setContentsMargins(8, 8, 8, 0)
        banner_box.addWidget(self.banner)
        banner_box.addWidget(self.takeover_banner)
        lay.addLayout(banner_box)
        lay.addWidget(self.live_view, 1)
        self.setCentralWidget(central)

        self.action_grid.toggled.connect(self.live_view.set_grid_visible)
        self.action_boxes.toggled.connect(self._on_boxes_toggled)

    def _build_docks(self) -> None:
        self.flows_list = QListWidget()
        self.flows_list.setObjectName("flowsList")
        self.flows_list.setSpacing(2)
        self.flows_list.setWordWrap(True)
        self._populate_flows()
        self.flows_list.itemChanged.connect(lambda _item: self._update_controls())
        self.flows_list.currentItemChanged.connect(self._on_flow_clicked)
        self.flows_dock = self._dock("Flows", "flowsDock", self.flows_list, Qt.DockWidgetArea.LeftDockWidgetArea)

        self.escalations_panel = EscalationsPanel()
        self.escalations_panel.command_requested.connect(self._answer)
        self.escalations_panel.candidate_highlighted.connect(self._on_candidate_highlighted)
        self.escalations_dock = self._dock("Escalations", "escalationsDock", self.escalations_panel,
                                           Qt.DockWidgetArea.LeftDockWidgetArea)
        self.splitDockWidget(self.flows_dock, self.escalations_dock, Qt.Orientation.Vertical)

        self.steps_panel = StepsPanel()
        self.steps_dock = self._dock("Steps", "stepsDock", self.steps_panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.event_log = EventLog()
        self.log_dock = self._dock("Event log", "eventLogDock", self.event_log, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.steps_dock, self.log_dock)
        self.steps_dock.raise_()

        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.resizeDocks([self.flows_dock], [300], Qt.Orientation.Horizontal)
        self.resizeDocks([self.flows_dock, self.escalations_dock], [190, 500], Qt.Orientation.Vertical)
        self.resizeDocks([self.steps_dock], [300], Qt.Orientation.Vertical)
        if self.flows_list.count():
            self.flows_list.setCurrentRow(0)

    def _build_debug_docks(self) -> None:
        """Breakpoints (gutter of the steps table, conditions dock) and the Breaker panel with its plots."""
        self.breakpoint_book = BreakpointBook(self.project.root, self)
        self.breakpoint_gutter = BreakpointGutter(self.breakpoint_book, lambda: self.steps_panel.model.current_flow,
                                                  self._step_ids, self.steps_panel.table)
        self.steps_panel.table.setVerticalHeader(self.breakpoint_gutter)
        self.steps_panel.model.current_flow_changed.connect(lambda _f: self.breakpoint_gutter.viewport().update())
        self.breakpoints_panel = BreakpointsPanel(self.breakpoint_book, self._step_ids, self._step_titles)
        self.breakpoints_dock = self._dock("Breakpoints", "breakpointsDock", _scrolled(self.breakpoints_panel),
                                           Qt.DockWidgetArea.LeftDockWidgetArea)
        self.tabifyDockWidget(self.escalations_dock, self.breakpoints_dock)
        self.breaker_panel = BreakerPanel()
        self.breaker_dock = self._dock("Breaker", "breakerDock", _scrolled(self.breaker_panel),
                                       Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.log_dock, self.breaker_dock)
        self.escalations_dock.raise_()
        self.steps_dock.raise_()
        self.breakpoint_book.changed.connect(self._send_breakpoints)
        self.breakpoint_book.error.connect(lambda m: self.statusBar().showMessage(m, 15000))
        self._pause_reason = ""
        self._sent_breakpoints: tuple[object, object] | None = None
        self.breakpoint_book.load()

    def _step_ids(self, flow: str) -> list[str]:
        f = self.project.flows.get(flow)
        return [s.id for s in f.steps] if f is not None else []

    def _step_titles(self, flow: str) -> list[str]:
        f = self.project.flows.get(flow)
        return [s.title for s in f.steps] if f is not None else []

    def _send_breakpoints(self, _bps: object = None) -> None:
        """Give the engine the current breakpoints (at once when it runs, else before the next Start)."""
        engine, bps = self.bridge.engine, self.breakpoint_book.breakpoints
        if engine is None:
            return
        sent = self._sent_breakpoints
        if sent is not None and sent[0] is engine and sent[1] == bps:
            return
        if sent is None or sent[0] is not engine:
            if bps.empty:
                self._sent_breakpoints = (engine, bps)
                return  # a new engine has none: nothing to say
        from core.engine.events import SetBreakpoints  # noqa: PLC0415

        engine.send(SetBreakpoints(bps))
        self._sent_breakpoints = (engine, bps)

    def _populate_flows(self, unchecked: frozenset[str] = frozenset()) -> None:
        """Fill the flows list from ``self.project`` (every flow checked except ``unchecked``)."""
        self.flows_list.blockSignals(True)
        self.flows_list.clear()
        for name, flow in self.project.flows.items():
            item = QListWidgetItem(name)
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked if name in unchecked else Qt.CheckState.Checked)
            desc = flow.description or ""
            item.setToolTip(f"{desc}\n{len(flow.steps)} steps \u00b7 starts at {flow.start_url}".strip())
            item.setText(f"{name}\n{len(flow.steps)} steps" + (f" \u00b7 {desc}" if desc else ""))
            self.flows_list.addItem(item)
        self.flows_list.blockSignals(False)

    def _build_recorder(self) -> None:
        self.recorder_dock = RecorderDock(self.project, recorder_factory=self._recorder_factory,
                                          headless=self._record_headless, close_timeout=self._close_timeout,
                                          parent=self)
        self.recorder_dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                                       | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                                       | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.recorder_dock)
        self.tabifyDockWidget(self.log_dock, self.recorder_dock)
        self.recorder_dock.hide()
        self.steps_dock.raise_()
        self.recorder_dock.replay_handler = self.replay_recorded
        self._recording = False
        self._project_stale = False

        a = self.recorder_dock.toggleViewAction()
        a.setText("Record")
        a.setIcon(_record_icon())
        a.setShortcut(QKeySequence("Ctrl+R"))
        a.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        a.setToolTip("Show the Recorder: record a new flow by demonstration (Ctrl+R)")
        a.triggered.connect(self._on_record_toggled)  # after the dock's own handler showed it
        self.action_record = a
        self.toolbar.insertAction(self.action_grid, a)
        self.toolbar.insertSeparator(self.action_grid)

        d = self.recorder_dock
        d.recording_changed.connect(self._on_recording_changed)
        d.inspect_changed.connect(self._on_inspect_changed)
        d.flow_saved.connect(self._on_flow_saved)
        d.bridge.recording_started.connect(self._on_recording_started)
        d.bridge.live_frame.connect(self._on_live_frame)
        lv = self.live_view
        lv.page_clicked.connect(d.forward_click)
        lv.page_scrolled.connect(d.forward_scroll)
        lv.pointer_moved.connect(d.forward_move)
        lv.text_typed.connect(d.forward_text)
        lv.key_pressed.connect(d.forward_key)

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        return dock

    def _build_status_bar(self) -> None:
        sb = self.statusBar()
        self.state_label = QLabel()
        self.state_label.setObjectName("runStateLabel")
        sb.addWidget(self.state_label, 1)
        self.breaker = BreakerIndicator()
        sb.addPermanentWidget(self.breaker)
        self.run_label = QLabel()
        self.run_label.setObjectName("panelTitle")
        sb.addPermanentWidget(self.run_label)

    def _connect_bridge(self) -> None:
        b = self.bridge
        b.event_received.connect(self._on_event)
        b.command_sent.connect(self._on_command)
        b.observation_made.connect(self._on_observation)
        b.target_resolved.connect(self._on_target)
        b.step_started.connect(lambda _e: self.live_view.set_target(None))
        b.escalation_raised.connect(self._on_escalation)
        b.paused.connect(self._on_paused)
        b.takeover_started.connect(self._on_takeover_started)
        b.handed_back.connect(self._on_handed_back)
        b.engine_error.connect(self._on_engine_error)
        b.event_received.connect(self.recorder_dock.apply_engine_event)

    # --- public API -----------------------------------------------------------------------

    def flow_names(self) -> list[str]:
        """All flows of the project, in list order."""
        return [self.flows_list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.flows_list.count())]

    def checked_flows(self) -> tuple[str, ...]:
        """Flows checked in the list, in list order."""
        return tuple(self.flows_list.item(i).data(Qt.ItemDataRole.UserRole)
                     for i in range(self.flows_list.count())
                     if self.flows_list.item(i).checkState() == Qt.CheckState.Checked)

    def set_checked_flows(self, names: tuple[str, ...] | list[str]) -> None:
        """Check exactly ``names``."""
        for i in range(self.flows_list.count()):
            item = self.flows_list.item(i)
            on = item.data(Qt.ItemDataRole.UserRole) in names
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    @property
    def state(self) -> RunState:
        """Current run state as shown."""
        return self.run_state.state

    def start_run(self, flows: tuple[str, ...] | None = None, *, paused: bool = False) -> bool:
        """Start a run of ``flows`` (default: the checked ones); False when it cannot start."""
        flows = self.checked_flows() if flows is None else tuple(flows)
        if self._recording:
            self.statusBar().showMessage("Stop the recording before starting a run", 8000)
            return False
        if not flows or not self._ensure_engine():
            return False
        self.escalations_panel.model.clear()
        self.breaker.reset()
        self.live_view.set_target(None)
        self.live_view.clear()  # the last run's frame is not this run's page
        self.live_view.set_placeholder("Starting the run\u2026")
        self.caption.setText("Starting the run \u2014 the first screenshot comes with the first step")
        self._send_breakpoints()
        self.bridge.start(flows, paused=paused)
        return True

    def start_all(self) -> bool:
        """Start a run of every flow of the project."""
        return self.start_run(tuple(self.flow_names()))

    def start_or_resume(self) -> None:
        """F5: resume when paused (an escalation: retry), hand back when taken over, else start the checked flows."""
        if not self.action_start.isEnabled():
            return
        if self.state is RunState.PAUSED:
            self.bridge.resume()
        elif self.state is RunState.TAKEN_OVER:
            self.takeover_banner.hand_back()
        else:
            self.start_run()

    def take_over(self) -> None:
        """F8: take the page (answers an escalation, or at the engine's next pause point)."""
        if self.action_take_over.isEnabled():
            self.bridge.take_over()

    def hand_back(self, continue_from: int | None = None) -> None:
        """End a takeover; the engine continues from step ``continue_from`` (0-based; None = the banner's choice)."""
        if self.state is not RunState.TAKEN_OVER:
            return
        if continue_from is None:
            self.takeover_banner.hand_back()
        else:
            self.bridge.hand_back(continue_from)

    def pause(self) -> None:
        """F6: pause at the next phase boundary."""
        if self.action_pause.isEnabled():
            self.bridge.pause()

    def step(self) -> None:
        """F10: one step when paused; from idle, start paused before the first step."""
        if not self.action_step.isEnabled():
            return
        if self.state is RunState.PAUSED:
            self.bridge.step()
        else:
            self.start_run(paused=True)

    def stop(self) -> None:
        """Shift+F5: stop the run."""
        if self.action_stop.isEnabled():
            self.bridge.stop()

    def shutdown(self) -> None:
        """Stop and join the recorder and the engine (each blocks up to ``close_timeout`` s). Idempotent."""
        self.recorder_dock.shutdown(self._close_timeout)
        self.bridge.close(timeout=self._close_timeout)

    def reload_project(self) -> bool:
        """Load the project again from disk (e.g. after the Recorder saved a flow).

        Refreshes the flows list (check marks kept, new flows checked), the
        steps of flows whose steps changed, and the Recorder's project.  The
        engine holds the project it was built with, so an idle engine is
        closed; the next run builds a new one.  Refused (False) while a run
        is in progress; a project that no longer loads is reported and the
        previous one kept (False).
        """
        if self.state not in (RunState.IDLE, RunState.FINISHED):
            self.statusBar().showMessage("Cannot reload the project while a run is in progress", 8000)
            return False
        try:
            project = self._project_loader(self.project_path)
        except Exception as exc:  # noqa: BLE001 - a broken file is shown, the loaded project kept
            msg = f"Could not reload the project: {type(exc).__name__}: {exc}"
            self.event_log.log(msg)
            self.statusBar().showMessage(msg, 15000)
            return False
        unchecked = frozenset(n for n in self.flow_names() if n not in self.checked_flows())
        current = self.flows_list.currentItem()
        current_name = current.data(Qt.ItemDataRole.UserRole) if current is not None else ""
        self.project = project
        engine = self.bridge.engine
        if engine is not None:
            try:
                engine.close(timeout=self._close_timeout)
            except Exception as exc:  # noqa: BLE001 - a failing close must not block the reload
                self.event_log.log(f"engine close failed: {type(exc).__name__}: {exc}")
            self.bridge.attach(None)  # type: ignore[arg-type] - the next run builds an engine for the new project
        model = self.steps_panel.model
        for name, flow in project.flows.items():
            titles = [s.title for s in flow.steps]
            if name in model.flow_names() and [r.title for r in model.rows(name)] != titles:
                model.set_flow(name, titles, reset=True)
        self._populate_flows(unchecked)
        self.recorder_dock.set_project(project)
        self.breakpoint_book.load(project.root)
        self.setWindowTitle(f"Steadyhand Studio \u2014 {project.name}")
        self.project_label.setText(f"{project.name}  \u00b7  {self.project_path}")
        names = self.flow_names()
        if names:
            self.flows_list.setCurrentRow(names.index(current_name) if current_name in names else 0)
        self._update_controls()
        self._update_status()
        self.event_log.log(f"project reloaded: {len(names)} flows")
        self._project_stale = False
        return True

    def replay_recorded(self, name: str) -> bool:
        """Run the (saved) flow ``name`` alone, reloading the project first when it is not known yet."""
        if (name not in self.project.flows or self._project_stale) and not self.reload_project():
            return False
        if name not in self.project.flows:
            self.statusBar().showMessage(f"No flow named {name!r} in the project", 8000)
            return False
        self._select_flow_item(name)
        return self.start_run((name,))  # the Recorder stays in front: its Replay column follows the run

    # --- Qt -------------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self._run_on_show and not self._auto_started:
            self._auto_started = True
            QTimer.singleShot(0, self.start_all)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        self.shutdown()
        super().closeEvent(event)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(1400, 900)

    # --- handlers -------------------------------------------------------------------------

    def _ensure_engine(self) -> bool:
        if self.bridge.engine is not None:
            return True
        try:
            self.bridge.open(self.project, self._engine_factory)
        except Exception as exc:  # noqa: BLE001 - any engine start failure is shown, not raised
            msg = f"Could not start the engine: {type(exc).__name__}: {exc}"
            self.event_log.log(msg)
            self.statusBar().showMessage(msg, 15000)
            return False
        return True

    def _answer(self, command: Command) -> None:
        """Send an answer chosen in the escalation panel, the banner or the takeover bar (once)."""
        if self.bridge.engine is None:
            return
        if not isinstance(command, HandBack):
            self.escalations_panel.answers.set_pending()
            self.banner_answers.set_pending()
        self.bridge.send(command)

    def _on_command(self, command: Command) -> None:
        if isinstance(command, Start):
            self.banner.hide()
            self.takeover_banner.end()
            self._flow, self._step_index, self._phase, self._step_count = "", -1, "", 0
            self._note = ""
        elif isinstance(command, HandBack):
            self.takeover_banner.end()
        detail = ""
        if isinstance(command, Start):
            detail = f" {', '.join(command.flows)}"
        elif isinstance(command, HandBack) and command.continue_from is not None:
            detail = f" continue from step {command.continue_from + 1}"
        self.event_log.log(f"\u2192 {type(command).__name__}{detail}")
        if self.run_state.on_command(command):
            self._state_changed()
        else:
            self._update_controls()  # e.g. a TakeOver asked for: not twice

    def _on_event(self, event: EngineEvent) -> None:
        self.steps_panel.apply(event)
        self.escalations_panel.apply(event)
        self.breaker.apply(event)
        self.breaker_panel.apply(event)
        if not isinstance(event, PhaseChanged):
            self.event_log.apply(event)
        if isinstance(event, RunStarted):
            self.run_label.setText(f"run {event.run_id}")
        elif isinstance(event, FlowStarted):
            self._flow, self._step_count, self._step_index, self._phase = event.flow, len(event.step_titles), -1, ""
            self._select_flow_item(event.flow)
        elif isinstance(event, StepStarted):
            self._step_index, self._phase = event.index, ""
            self.banner.hide()
            if self._note and event.index != self._note_until:
                self._note = ""
        elif isinstance(event, PhaseChanged):
            self._phase = event.phase
        elif isinstance(event, Paused):
            self._step_index, self._phase, self._pause_reason = event.index, "", event.reason
        elif isinstance(event, Resumed):
            self.banner.hide()
            self._pause_reason = ""
        elif isinstance(event, RunFinished):
            self.breaker.finish()
            self._pause_reason = ""
            self.banner.hide()
            self.takeover_banner.end()
            self._note = ""
            self._last_results = results_line(event.results)
        if self.run_state.on_event(event):
            self._state_changed()
        else:
            self._update_status()

    def _on_observation(self, event: ObservationMade, image: QImage) -> None:
        if self._recording:
            return  # the live view shows the recorder's page meanwhile
        target = self.live_view.target
        self.live_view.set_observation(event.observation, image)
        o = event.observation
        if event.when == "after" and target is not None and not _still_shown(target, o):
            self.live_view.set_target(None)  # the page moved on: the box would point at something else
        self.caption.setText(f"{o.url}   \u00b7   {o.title}   \u00b7   {event.when} step {event.index + 1}"
                             f"   \u00b7   {len(o.candidates)} candidates   \u00b7   dpr {o.device_pixel_ratio:g}")

    def _on_target(self, event: TargetResolved) -> None:
        r = event.resolution
        if event.candidate is None or r.abstained:
            self.live_view.set_target(None)
            by_ref = {c.ref: c for c in self.live_view.candidates}
            self.live_view.set_alternatives(
                [(by_ref[s.ref], f"#{i + 1} {s.score:.2f}") for i, s in enumerate(r.top[:3]) if s.ref in by_ref])
            return
        self.live_view.set_target(event.candidate, f"{r.strategy} {r.score:.2f}")

    def _on_escalation(self, event: EscalationRaised) -> None:
        self.escalations_dock.raise_()
        self.escalations_dock.show()

    def _on_paused(self, event: Paused) -> None:
        if self.state is RunState.TAKEN_OVER:
            return  # the takeover bar says it all
        esc = self.escalations_panel.selected()
        escalated = esc is not None and esc.state == "open"
        if escalated:
            text = (f"<b>Escalated at step {esc.event.index + 1} \u2014 {_esc(esc.event.step_title)}</b><br>"
                    f"{_esc(esc.event.reason)}")
            self.banner_answers.set_answers(esc.event.answers)
        elif event.reason.startswith(("breakpoint:", "paused before ")):  # inside the step
            text = f"<b>Paused at step {event.index + 1}</b> \u2014 {_esc(event.reason)}"
        else:  # before the step starts
            why = "" if event.reason == "paused" else event.reason
            text = (f"<b>Paused before step {event.index + 1}</b>"
                    + (f" \u2014 {_esc(why)}" if why else " \u2014 F10 runs it, F5 goes on"))
        for b in self.banner_buttons:
            b.setVisible(not escalated)
        self.banner_answers.setVisible(escalated)
        self.banner_text.setText(text)
        self.banner.show()

    def _on_takeover_started(self, event: TakeoverStarted) -> None:
        self.banner.hide()
        titles = [r.title for r in self.steps_panel.model.rows(event.flow)]
        if not titles and event.flow in self.project.flows:
            titles = [s.title for s in self.project.flows[event.flow].steps]
        headless = getattr(self.bridge.engine, "headless", None)
        self.takeover_banner.begin(event.flow, event.index, titles,
                                   headless=headless if isinstance(headless, bool) else None, acted=event.acted)

    def _on_handed_back(self, event: HandedBack) -> None:
        self.takeover_banner.end()
        self._note = f"handed back, continuing from step {event.continue_from + 1}"
        self._note_until = event.continue_from
        self._update_status()

    def _on_candidate_highlighted(self, candidate: EscalationCandidate | None) -> None:
        if candidate is None or candidate.box is None or getattr(self, "_recording", False):
            self.live_view.set_highlight(None)
        else:
            self.live_view.set_highlight(candidate.box, f"{candidate.label or candidate.ref} {candidate.score:.2f}")

    def _on_engine_error(self, event: EngineError) -> None:
        self.statusBar().showMessage(f"Engine error: {event.message}", 15000)

    def _on_flow_clicked(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if current is None:
            return
        name = current.data(Qt.ItemDataRole.UserRole)
        flow = self.project.flows.get(name)
        if flow is not None:
            self.steps_panel.model.set_flow(name, [s.title for s in flow.steps])
        self.steps_panel.model.show_flow(name)

    def _select_flow_item(self, name: str) -> None:
        for i in range(self.flows_list.count()):
            if self.flows_list.item(i).data(Qt.ItemDataRole.UserRole) == name:
                self.flows_list.blockSignals(True)
                self.flows_list.setCurrentRow(i)
                self.flows_list.blockSignals(False)

    def _on_boxes_toggled(self, on: bool) -> None:
        self.live_view.set_boxes_visible(on)

    def _on_record_toggled(self, on: bool) -> None:
        if on:
            self.show_recorder()

    def show_recorder(self) -> None:
        """Show the Recorder dock and make it the current tab of its dock area."""
        d = self.recorder_dock
        d.show()
        d.lower()  # raise_() only switches tabs when it changes the z-order (Qt raises a tab on ZOrderChange)
        d.raise_()
        if d.height() < 330:  # room for the form and about six recorded steps
            self.resizeDocks([d], [max(330, self.height() // 3)], Qt.Orientation.Vertical)
        if not d.is_recording:
            d.name_edit.setFocus()

    def _on_recording_changed(self, on: bool) -> None:
        self._recording = on
        self.live_view.set_interactive(on, picking=on and self.recorder_dock.inspecting)
        if on:
            self.live_view.set_target(None)
            self.live_view.clear()
            self.live_view.set_placeholder("Starting Chromium for the recording\u2026")
            self.caption.setText(f"\u25cf Recording {self.recorder_dock.flow_name()} \u2014 starting the browser")
        else:
            self.live_view.set_placeholder("No screenshot yet \u2014 press Start (F5)")
            self.caption.setText("Recording ended \u2014 edit the steps in the Recorder, then Save")
        self._update_controls()
        self._update_status()

    def _on_inspect_changed(self, on: bool) -> None:
        self.live_view.set_interactive(self._recording, picking=on)

    def _on_recording_started(self, event: RecordingStarted) -> None:
        self.caption.setText(f"\u25cf Recording {event.flow}   \u00b7   {event.url}   \u00b7   "
                             "click, scroll and type in the view")

    def _on_live_frame(self, event: LiveFrame, image: QImage) -> None:
        if not self._recording:
            return
        self.live_view.set_image(image, device_pixel_ratio=event.device_pixel_ratio, candidates=event.candidates)
        mode = "pick an element to assert" if self.recorder_dock.inspecting else "click, scroll and type in the view"
        self.caption.setText(f"\u25cf Recording {self.recorder_dock.flow_name()}   \u00b7   {event.url}   \u00b7   "
                             f"{len(event.candidates)} candidates   \u00b7   dpr {event.device_pixel_ratio:g}"
                             f"   \u00b7   {mode}")

    def _on_flow_saved(self, name: str, path: str) -> None:
        self._project_stale = True
        if self.reload_project() and name in self.flow_names():
            self.flows_list.setCurrentRow(self.flow_names().index(name))  # shows its steps
        self.event_log.log(f"recorder saved flow {name} to {path}")  # the Recorder shows it too

    def _state_changed(self) -> None:
        self.recorder_dock.set_run_active(self.state not in (RunState.IDLE, RunState.FINISHED))
        self._update_controls()
        self._update_status()
        self.run_state_changed.emit(self.state.value)

    def _update_controls(self) -> None:
        c = controls_for(self.state, has_flows=bool(self.checked_flows()), answers=self.run_state.answers)
        if getattr(self, "_recording", False) and self.state in (RunState.IDLE, RunState.FINISHED):
            c = controls_for(self.state, has_flows=False)  # one browser at a time in the live view
        self.action_start.setEnabled(c.start)
        self.action_start.setText(c.start_text)
        self.action_start.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))
        self.action_pause.setEnabled(c.pause)
        self.action_step.setEnabled(c.step)
        self.action_stop.setEnabled(c.stop)
        self.action_take_over.setEnabled(c.take_over and not self.run_state.takeover_asked)
        for i in range(self.flows_list.count()):
            item = self.flows_list.item(i)
            flags = item.flags()
            if c.flows_editable:
                flags |= Qt.ItemFlag.ItemIsUserCheckable
            else:
                flags &= ~Qt.ItemFlag.ItemIsUserCheckable
            self.flows_list.blockSignals(True)
            item.setFlags(flags)
            self.flows_list.blockSignals(False)

    def _update_status(self) -> None:
        s = self.state
        if not self.flows_list.count() and not getattr(self, "_recording", False):
            self.live_view.set_placeholder("No flow yet \u2014 record your first flow: Record (Ctrl+R)")
        parts = [s.label]
        if getattr(self, "_recording", False) and s in (RunState.IDLE, RunState.FINISHED):
            parts = ["Recording", f"{self.recorder_dock.flow_name()} \u00b7 stop it in the Recorder to run flows"]
        elif s in (RunState.IDLE, RunState.FINISHED) and not self.flows_list.count():
            parts.append("no flow yet \u2014 record your first flow (Ctrl+R)")
        elif s in (RunState.IDLE,):
            n = len(self.checked_flows())
            parts.append(f"{n} of {self.flows_list.count()} flows checked \u00b7 F5 to start")
        elif s is RunState.FINISHED:
            parts.append(self._last_results or "no results")
        elif s is RunState.TAKEN_OVER and self.run_state.takeover is not None:
            flow, index = self.run_state.takeover
            parts += [flow, f"taken over at step {index + 1}/{self._step_count or '?'}",
                      "you have the page \u2014 hand back (F5) to continue"]
        elif self._flow:
            parts.append(self._flow)
            if self._step_index >= 0:
                where = f"step {self._step_index + 1}/{self._step_count}"
                if s is RunState.PAUSED:
                    where = f"at step {self._step_index + 1}/{self._step_count}"
                parts.append(where)
            if s is RunState.PAUSED and self._pause_reason.startswith(("breakpoint:", "paused before ")):
                parts.append(self._pause_reason)
            if self._phase and s in (RunState.RUNNING, RunState.PAUSING):
                parts.append(self._phase)
            if self._note and s in (RunState.RUNNING, RunState.PAUSING, RunState.PAUSED):
                parts.append(self._note)
        self.state_label.setText("   \u00b7   ".join(parts))


def _scrolled(widget: QWidget) -> QWidget:
    """``widget`` in a frameless scroll area: a dock never makes the window's minimum size grow."""
    from PySide6.QtWidgets import QScrollArea  # noqa: PLC0415

    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setMinimumSize(120, 90)
    return area


def _record_icon() -> QIcon:
    pm = QPixmap(18, 18)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("#f0524f"))
    p.drawEllipse(3, 3, 12, 12)
    p.end()
    return QIcon(pm)


def _takeover_icon() -> QIcon:
    """A violet hand-over sign: two arrows around a dot (the takeover colour)."""
    pm = QPixmap(18, 18)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    color = QColor(TAKEOVER_COLOR)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(color)
    p.drawEllipse(5, 5, 8, 8)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.setPen(QPen(color, 1.6))
    p.drawArc(1, 1, 16, 16, 30 * 16, 120 * 16)
    p.drawArc(1, 1, 16, 16, 210 * 16, 120 * 16)
    p.end()
    return QIcon(pm)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
