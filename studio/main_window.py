"""The studio's main window: flows, live view, steps, escalations and run controls.

Thin by design: it loads a project, hands commands to the engine through an
:class:`~studio.bridge.EngineBridge`, and lets each panel render the events
it receives.  The engine comes from an injected factory, so tests can use
:class:`studio.testing.FakeEngine` or the real ``EngineRunner``.
"""
from __future__ import annotations

import threading

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction, QCloseEvent, QColor, QIcon, QImage, QKeySequence, QPainter, QPen, QPixmap, QResizeEvent, QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea, QApplication, QDockWidget, QFileDialog, QFrame, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QMainWindow,
    QMenu, QMessageBox, QPushButton, QSizePolicy, QStyle, QToolBar, QToolButton, QVBoxLayout, QWidget,
)

from core.progress import counted
from core.domain import Candidate, EscalationCandidate, Observation
from core.engine.events import (
    Command, EngineError, EngineEvent, EscalationRaised, FlowStarted, HandBack, HandedBack, ObservationMade,
    Paused, PhaseChanged, Resumed, RunFinished, RunStarted, Start, StepStarted, TakeoverStarted, TargetResolved,
)
from core.engine.report import results_line
from core.record.events import LiveFrame, RecordingStarted

from .bridge import EngineBridge, EngineFactory, ProjectLike, default_engine_factory
from .habits import ErrorsButton, FindBar, ProjectWatcher, ShortcutsDialog, recent_projects, remember_project
from .inspector import install as install_inspector
from .recorder_bridge import RecorderFactory
from .run_state import RunState, RunStateMachine, controls_for
from .views.banner_slot import BannerSlot
from .views.breaker import BreakerIndicator, BreakerPanel
from .views.breakpoints import BreakpointBook, BreakpointGutter, BreakpointsPanel
from .theme import TAKEOVER_COLOR
from .views.escalations import AnswerBar, EscalationsPanel, TakeoverBanner
from .views.takeover import TakeoverController
from .views.event_log import EventLog
from .views.live_view import LiveView
from .views.recorder import RecorderDock
from .views.resolution import install_resolution_dock
from .views.timeline import TimelinePanel
from .views.heal_review import CorrectionSource, HealReviewPanel, HealSource
from .views.steps import StepsPanel

__all__ = ["MainWindow", "ProjectLoader", "default_project_loader"]

ProjectLoader = Callable[[Path], "ProjectLike | tuple[ProjectLike, dict]"]

#: Item data role of a flows-list entry whose file does not load: the error text (the flow is not runnable).
INVALID_ROLE = Qt.ItemDataRole.UserRole + 1


def default_project_loader(path: Path) -> tuple[ProjectLike, dict]:
    """``core.project.lenient.load_project_lenient(path)``: the valid flows and ``{file: error}`` of the others."""
    from core.project.lenient import load_project_lenient  # noqa: PLC0415 - the studio loads without it

    return load_project_lenient(path)


def _split_loaded(result: object) -> tuple[ProjectLike, dict[str, str]]:
    """A loader's result as ``(project, {flow file: error text})`` (a loader may return the project alone)."""
    if isinstance(result, tuple):
        project, problems = result
        return project, {str(k): str(v) for k, v in dict(problems).items()}
    return result, {}  # type: ignore[return-value]


def _still_shown(target: Candidate, observation: Observation) -> bool:
    """True when ``observation`` still has the target element at (about) the same place."""
    d, box = target.descriptor, target.descriptor.bbox
    for c in observation.candidates:
        e = c.descriptor
        if (e.frame, e.css_path, e.role, e.label_text) == (d.frame, d.css_path, d.role, d.label_text) and \
                box is not None and e.bbox is not None and abs(e.bbox.x - box.x) <= 4 and abs(e.bbox.y - box.y) <= 4:
            return True
    return False


#: Width in px of the left dock column (Flows, Escalations) on a first launch: a flow's name and a line of its
#: description fit; a saved layout keeps the person's own width.
LEFT_COLUMN_PX = 300
#: The Steps dock's height on a first launch, px at least (about eight steps; more on a tall window).
STEPS_DOCK_PX = 280


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
                 record_headless: bool = True, settings: QSettings | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project_path = Path(project_path)
        self._project_loader = project_loader or default_project_loader
        self.project, self.invalid_flows = _split_loaded(self._project_loader(self.project_path))
        self.settings = settings  # None: nothing is saved between launches (tests, previews)
        self._state_restored = False  # a saved dock layout was applied (the first show keeps it)
        self._user_close = False  # the next close was asked for by the user (File > Quit, Open project)
        self.docks: list[QDockWidget] = []  # every dock, in View menu order
        self._recorder_factory = recorder_factory
        self._record_headless = record_headless
        self._engine_factory = engine_factory or default_engine_factory
        self._run_on_show = run_on_show
        self._auto_started = False
        self._close_timeout = close_timeout
        self._closing_engines: list[threading.Thread] = []  # engines let go by a reload, closing off the GUI thread
        #: Keep the window inside its screen's available geometry (:meth:`fit_to_screen`); off for a picture
        #: of a set size on a small virtual screen.
        self.fit_screen = True
        self._fit_pending = False
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
        self._build_graph_and_history()
        self._build_heal_review()
        from .views.skill_dock import install_skill_library  # noqa: PLC0415

        install_skill_library(self)
        self._build_status_bar()
        self._build_find_bar()
        self.resolution_dock = install_resolution_dock(self)
        self.docks.append(self.resolution_dock)  # in the View menu with the others
        self._build_menus()
        install_inspector(self)  # any stored step, large, and its target picked again (View > Inspect step)
        self._build_watcher()
        self._connect_bridge()
        self.takeover = TakeoverController(self)  # the live view drives the engine's page while taken over
        self._update_controls()
        self._update_status()
        self.restore_settings()

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
        self.action_run_flow = action("Run this flow", sp.SP_MediaSeekForward, "Ctrl+F5",
                                      "Run only the flow selected in the Flows list (its check box aside)",
                                      lambda: self.run_flow())
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
        for a in (self.action_start, self.action_run_flow, self.action_pause, self.action_step, self.action_stop,
                  self.action_take_over):
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
        # a button whose label changes keeps the width of its longest label: Step, Stop and Record never move
        # under the pointer when Start becomes Resume or Hand back (trial-33/34/37)
        for a, labels in ((self.action_start, START_LABELS), (self.action_take_over, TAKE_OVER_LABELS)):
            _fix_width(tb.widgetForAction(a), labels)

    def _build_central(self) -> None:
        self.live_view = LiveView()
        self.caption = QLabel("No observation yet")
        self.caption.setObjectName("liveCaption")
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # a long URL is cut, not a reason for the window to widen past the screen
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.caption.setMinimumWidth(1)

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
            if a is self.action_start:
                _fix_width(b, START_LABELS)
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
        # the bars take turns in a strip of fixed height: the live view never moves when one appears
        self.banner_slot = BannerSlot([self.banner, self.takeover_banner])
        lay.addWidget(self.banner_slot)
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
        # the status bar counts the checked flows ("4 of 5 flows checked"): a check mark changed, by hand or restored
        self.flows_list.itemChanged.connect(lambda _item: (self._update_controls(), self._update_status(),
                                                           self._remember_choices()))
        self.flows_list.currentItemChanged.connect(self._on_flow_clicked)
        self.flows_list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.flows_list.customContextMenuRequested.connect(self._flows_menu)
        self.watched: set[str] = set()  # flows re-run when their file changes (watch mode)
        self._watch_pending: set[str] = set()
        self._one_shot: tuple[str, str] | None = None  # (flow, step id): a pause asked for by "run to / from"
        self.flows_dock = self._dock("Flows", "flowsDock", self.flows_list, Qt.DockWidgetArea.LeftDockWidgetArea)

        self.escalations_panel = EscalationsPanel()
        self.escalations_panel.command_requested.connect(self._answer)
        self.escalations_panel.candidate_highlighted.connect(self._on_candidate_highlighted)
        # scrolled: an escalation's answers and candidates never widen the dock (the view would move sideways)
        self.escalations_dock = self._dock("Escalations", "escalationsDock", self.escalations_panel,
                                           Qt.DockWidgetArea.LeftDockWidgetArea)
        self.splitDockWidget(self.flows_dock, self.escalations_dock, Qt.Orientation.Vertical)

        self.steps_panel = StepsPanel()
        self.steps_dock = self._dock("Steps", "stepsDock", self.steps_panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.event_log = EventLog()
        self.log_dock = self._dock("Event log", "eventLogDock", self.event_log, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.steps_dock, self.log_dock)
        self.timeline_panel = TimelinePanel()
        self.timeline_dock = self._dock("Timeline", "timelineDock", self.timeline_panel,
                                        Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.log_dock, self.timeline_dock)
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
        self.breakpoints_dock = self._dock("Breakpoints", "breakpointsDock", self.breakpoints_panel,
                                           Qt.DockWidgetArea.LeftDockWidgetArea)
        self.tabifyDockWidget(self.escalations_dock, self.breakpoints_dock)
        self.breaker_panel = BreakerPanel()
        self.breaker_dock = self._dock("Breaker", "breakerDock", self.breaker_panel,
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
        if self._one_shot is not None and not bps.on(*self._one_shot):
            bps = bps.toggled(*self._one_shot)  # "run to / from a step": a pause of this run only
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
            watched = " \u00b7 watched: runs again when its file changes" if name in getattr(self, "watched", ()) else ""
            item.setText(f"{name}\n{len(flow.steps)} steps{watched}" + (f" \u00b7 {desc}" if desc else ""))
            self.flows_list.addItem(item)
        for path, error in sorted(self.invalid_flows.items()):
            item = QListWidgetItem(f"\u26a0 {Path(path).name}\ninvalid \u2014 {error.split(': ', 1)[-1][:90]}")
            item.setData(Qt.ItemDataRole.UserRole, None)
            item.setData(INVALID_ROLE, error)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            item.setForeground(QColor("#f0524f"))
            item.setToolTip(f"This flow file does not load and cannot run:\n{error}")
            self.flows_list.addItem(item)
        if not self.project.flows and not self.invalid_flows:
            item = QListWidgetItem("No flows yet.\nRecord your first one: Record (Ctrl+R), click through the app, "
                                   "then Save.")
            item.setData(Qt.ItemDataRole.UserRole, None)
            item.setData(INVALID_ROLE, "")
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            item.setForeground(QColor("#9aa3b2"))
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
        self.docks.append(self.recorder_dock)
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

    def _build_graph_and_history(self) -> None:
        """The state graph (grown by StateGraphChanged) and the run history, tabbed with the steps (P4)."""
        from core.store import STORE_DIRNAME  # noqa: PLC0415

        from .views.history import HistoryPanel  # noqa: PLC0415
        from .views.state_graph import StateGraphView  # noqa: PLC0415

        media = self.project.root / STORE_DIRNAME
        self.graph_view = StateGraphView(media)
        self.graph_dock = self._dock("State graph", "stateGraphDock", self.graph_view,
                                     Qt.DockWidgetArea.BottomDockWidgetArea)
        self.history_panel = HistoryPanel(media, flows=list(self.project.flows),
                                          flow_steps={n: len(f.steps) for n, f in self.project.flows.items()})
        self.history_dock = self._dock("History", "historyDock", self.history_panel,
                                       Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.log_dock, self.graph_dock)
        self.tabifyDockWidget(self.graph_dock, self.history_dock)
        self.steps_dock.raise_()
        self.bridge.event_received.connect(self.graph_view.apply)
        self.bridge.event_received.connect(self.history_panel.apply)
        self.history_panel.step_shown.connect(self._on_history_step)
        self.history_panel.run_opened.connect(self._on_history_run)

    def _on_history_run(self, detail: object) -> None:
        """A stored run opened in the history: the timeline shows it too (diffs, phases, errors), read-only."""
        run = getattr(detail, "run", None)
        store = self.history_panel._store()  # noqa: SLF001 - the history's own read-only store
        if run is None or store is None:
            return
        with store:
            self.timeline_panel.load_run(store, run.id)

    def _on_history_step(self, step: object, image: QImage) -> None:
        """A stored step scrubbed in the history: its before screenshot on the live view while no run is on,
        alone - the live run's target, alternatives and highlighted candidate belong to another page."""
        if self.state in (RunState.IDLE, RunState.FINISHED) and not image.isNull():
            self.live_view.set_target(None)  # clears the alternatives too
            self.live_view.set_highlight(None)
            self.live_view.set_image(image)
            index, title = getattr(step, "index", -1), getattr(step, "title", "")
            self.caption.setText(f"History \u00b7 before step {index + 1}: {title} \u00b7 a stored screenshot, "
                                 "not the live page")

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        if not isinstance(widget, QAbstractScrollArea):
            # a panel's minimum size (a long label, a wide picture, a bar shown after a review move) scrolls
            # inside its dock instead of pushing the window past the screen (trial-49, trial-78)
            widget = _scrolled(widget)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        self.docks.append(dock)
        return dock

    def _build_status_bar(self) -> None:
        sb = self.statusBar()
        self.state_label = QLabel()
        self.state_label.setObjectName("runStateLabel")
        sb.addWidget(self.state_label, 1)
        self.breaker = BreakerIndicator()
        sb.addPermanentWidget(self.breaker)
        from .views.model_usage import ModelUsageLabel

        self.model_usage = ModelUsageLabel()
        sb.addPermanentWidget(self.model_usage)
        self.run_label = QLabel()
        self.run_label.setObjectName("panelTitle")
        self.run_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        sb.addPermanentWidget(self.run_label)
        self.errors_button = ErrorsButton()
        sb.addPermanentWidget(self.errors_button)

    def _connect_bridge(self) -> None:
        b = self.bridge
        b.event_received.connect(self._on_event)
        b.command_sent.connect(self._on_command)
        b.observation_made.connect(self._on_observation)
        b.screencast_frame.connect(self._on_screencast_frame)
        self.live_view.resized.connect(lambda w, h: setattr(b.decoder, "fit", (w, h)))  # frames scaled off-thread
        b.target_resolved.connect(self._on_target)
        b.step_started.connect(lambda _e: self.live_view.set_target(None))
        b.escalation_raised.connect(self._on_escalation)
        b.paused.connect(self._on_paused)
        b.takeover_started.connect(self._on_takeover_started)
        b.handed_back.connect(self._on_handed_back)
        b.engine_error.connect(self._on_engine_error)
        b.event_received.connect(self.recorder_dock.apply_engine_event)
        b.event_received.connect(self.timeline_panel.apply)

    # --- desktop habits: heal review, menus, settings, files on disk ------------------------

    def _build_heal_review(self) -> None:
        from .views.skill_review import SkillSource  # noqa: PLC0415

        self.heal_review = HealReviewPanel([HealSource(self.project_path), CorrectionSource(self.project_path),
                                            SkillSource(self.project_path, self.project.name)],
                                           root=self.project_path)
        self.heal_review.flow_written.connect(self._on_flow_file_written)
        self.heal_dock = self._dock("Review", "healReviewDock", self.heal_review,
                                    Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.log_dock, self.heal_dock)
        self.steps_dock.raise_()

    def _build_find_bar(self) -> None:
        self.find_bar = FindBar(self)
        self.find_bar.set_targets([self.steps_panel.table], [self.event_log])
        self.addToolBar(Qt.ToolBarArea.BottomToolBarArea, self.find_bar)
        self.find_bar.hide()
        t = self.steps_panel.table
        t.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        t.customContextMenuRequested.connect(self._steps_menu)
        c = self.escalations_panel.candidates
        c.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        c.customContextMenuRequested.connect(self._candidates_menu)

    def _build_menus(self) -> None:
        """File, Edit, Run, View, Help.  View lists every dock of :attr:`docks` (a dock added later joins it)."""
        mb = self.menuBar()

        def act(menu: QMenu, text: str, key: str, slot: Callable[[], object], tip: str = "") -> QAction:
            a = menu.addAction(text)
            if key:
                a.setShortcut(QKeySequence(key))
                a.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)  # also from a floating dock
            a.setToolTip(tip or text)
            a.triggered.connect(lambda _checked=False: slot())
            self.addAction(a)  # the shortcut works whether or not the menu bar is shown
            return a

        file_menu = mb.addMenu("&File")
        self.action_open = act(file_menu, "&Open project\u2026", "Ctrl+O", self.choose_project)
        self.recent_menu = file_menu.addMenu("Recent projects")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._fill_recent()
        self.action_reload = act(file_menu, "Re&load project", "Ctrl+Shift+R", self.reload_project)
        self.action_settings = act(file_menu, "Project &settings\u2026", "Ctrl+,", self.show_settings,
                                   "Breaker, locator and wait settings of steadyhand.yaml")
        file_menu.addSeparator()
        self.action_quit = act(file_menu, "&Quit", "Ctrl+Q", self._quit)
        edit_menu = mb.addMenu("&Edit")
        self.action_find = act(edit_menu, "&Find in steps and log\u2026", "Ctrl+F", self._find)
        # one Ctrl+F for the window (two would be ambiguous to Qt): inside the timeline it searches the timeline
        self.timeline_panel.find_shortcut.setEnabled(False)
        run_menu = mb.addMenu("&Run")
        for a in (self.action_start, self.action_pause, self.action_step, self.action_stop, self.action_take_over):
            run_menu.addAction(a)
        run_menu.addSeparator()
        run_menu.addAction(self.action_record)
        view_menu = mb.addMenu("&View")
        self.view_menu = view_menu
        for d in self.docks:
            view_menu.addAction(d.toggleViewAction())
        a = self.heal_dock.toggleViewAction()
        a.setShortcut(QKeySequence("Ctrl+Shift+H"))
        a.triggered.connect(lambda on: self.show_heal_review() if on else None)
        view_menu.addSeparator()
        view_menu.addAction(self.action_grid)
        view_menu.addAction(self.action_boxes)
        help_menu = mb.addMenu("&Help")
        self.action_shortcuts = act(help_menu, "&Keyboard shortcuts", "F1", self.show_shortcuts)

    def _build_watcher(self) -> None:
        self._files_changed = False
        self.files_bar = QFrame()
        self.files_bar.setObjectName("escalationBanner")
        row = QHBoxLayout(self.files_bar)
        row.setContentsMargins(12, 6, 8, 6)
        self.files_text = QLabel()
        self.files_text.setWordWrap(True)
        row.addWidget(self.files_text, 1)
        self.files_reload = QPushButton("Reload")
        self.files_reload.clicked.connect(self.reload_project)
        row.addWidget(self.files_reload)
        self.files_bar.hide()
        self.banner_slot.add_bar(self.files_bar, compact=True)
        self.watcher: ProjectWatcher | None = None
        if self.project_path.is_dir():
            self.watcher = ProjectWatcher(self.project_path, self)
            self.watcher.changed.connect(self._on_files_changed)

    def _on_files_changed(self, paths: list[str]) -> None:
        self._watch_pending |= self._watched_changed(paths)
        names = sorted({Path(p).name for p in paths})
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        idle = self.state in (RunState.IDLE, RunState.FINISHED) and not self._recording
        self.event_log.log(f"files changed on disk: {shown}")
        if idle and self.reload_project():
            self.statusBar().showMessage(f"Reloaded after changes on disk ({shown})", 8000)
            if self._watch_pending:
                QTimer.singleShot(0, self._run_watched)  # watch mode: the changed flow runs again
            return
        self._files_changed = True
        self.files_text.setText(f"<b>Files changed on disk</b> ({_esc(shown)}). The run goes on with the files it "
                                "started with; the next Start uses the new ones.")
        self._update_files_bar()
        self.files_bar.show()

    def _reload_after_run(self) -> None:
        if self._files_changed and self.state in (RunState.IDLE, RunState.FINISHED) and not self._recording \
                and self.reload_project():
            self.statusBar().showMessage("Reloaded the files changed on disk during the run", 8000)

    def _update_files_bar(self) -> None:
        """Reload is offered only when nothing runs (a run keeps the files it started with)."""
        if hasattr(self, "files_reload"):
            self.files_reload.setVisible(self.state in (RunState.IDLE, RunState.FINISHED))

    def _on_flow_file_written(self, path: str) -> None:
        self.event_log.log(f"flow file written: {path}")
        self.reload_project()

    def show_heal_review(self) -> None:
        """Show the Review dock (heals, corrections, skills) in front, tall enough for its screenshots and diff, with fresh proposals."""
        d = self.heal_dock
        d.show()
        d.lower()
        d.raise_()
        if d.height() < 420 and not d.isFloating():
            self.resizeDocks([d], [max(420, self.height() // 2)], Qt.Orientation.Vertical)
        self.heal_review.refresh()

    def show_error(self, message: str, detail: str = "") -> None:
        """Show an error in the status bar and keep it, with ``detail``, under the status bar's error button."""
        self.statusBar().showMessage(message, 15000)
        self.errors_button.add(message, detail)

    def show_settings(self) -> bool:
        """The project settings dialog; True when it wrote the file (the project is then reloaded)."""
        from .views.settings_dialog import SettingsDialog  # noqa: PLC0415

        if not (self.project_path / "steadyhand.yaml").is_file():
            self.show_error(f"{self.project_path}: no steadyhand.yaml to edit")
            return False
        dlg = SettingsDialog(self.project_path, self)
        self.settings_dialog = dlg
        if dlg.exec() and dlg.written:
            self.reload_project()
            return True
        return False

    def show_shortcuts(self) -> None:
        """F1: the keyboard shortcuts."""
        self.shortcuts_dialog = ShortcutsDialog(self)
        self.shortcuts_dialog.open()

    def choose_project(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a Steadyhand project", str(self.project_path.parent))
        if path:
            self.open_project(Path(path))

    def open_project(self, path: Path | str) -> "MainWindow | None":
        """Open the project at ``path`` in a new window (this one closes); a problem gets a dialog, None."""
        path = Path(path).expanduser()
        problem = ""
        if not path.is_dir():
            problem = f"{path}: project folder not found"
        elif not (path / "steadyhand.yaml").is_file():
            problem = f"{path}: not a Steadyhand project (no steadyhand.yaml)"
        if not problem:
            try:
                window = MainWindow(path, engine_factory=self._engine_factory, recorder_factory=self._recorder_factory,
                                    record_headless=self._record_headless, close_timeout=self._close_timeout,
                                    settings=self.settings)
            except Exception as exc:  # noqa: BLE001 - shown in a dialog, not a traceback
                problem = f"{path}: {exc}"
        if problem:
            self.error_dialog = QMessageBox(QMessageBox.Icon.Warning, "Cannot open the project", problem,
                                            QMessageBox.StandardButton.Close, self)
            self.error_dialog.open()
            self.show_error(problem)
            return None
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # its shortcuts go with it
        if not self.request_close():
            self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
            window.shutdown()
            return None
        _OPEN_WINDOWS.append(window)
        window.resize(self.size())
        window.show()
        return window

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = [p for p in recent_projects(self.settings) if Path(p) != self.project_path.resolve()]
        for p in recent:
            self.recent_menu.addAction(p, lambda p=p: self.open_project(p))
        self.recent_menu.setEnabled(bool(recent))

    def request_close(self) -> bool:
        """Close as the user asked for it (asks about an unsaved recording); True when the window closed."""
        self._user_close = True
        return self.close()

    def _quit(self) -> None:
        """Ctrl+Q: close every studio window (each asks about an unsaved recording; Cancel stops the quit)."""
        for w in [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]:
            if not w.request_close():
                return

    def confirm_close(self) -> bool:
        """False when the user cancels closing over an unsaved recording (Save / Discard / Cancel)."""
        d = self.recorder_dock
        if not (d.is_recording or (d.dirty and d.model.rowCount())):
            return True
        if d.is_recording:
            answer = self.ask_unsaved(f"A recording of {d.flow_name() or 'a flow'} is in progress. Closing "
                                      "discards it.", save=False)
        else:
            answer = self.ask_unsaved(f"{counted(d.model.rowCount(), 'recorded step')} of {d.flow_name() or 'a flow'} {'is' if d.model.rowCount() == 1 else 'are'} "
                                      "not saved.", save=True)
        if answer == QMessageBox.StandardButton.Save:
            return d.save() is not None
        return answer == QMessageBox.StandardButton.Discard

    def ask_unsaved(self, text: str, *, save: bool) -> QMessageBox.StandardButton:
        """The Save / Discard / Cancel question (replaced in tests)."""
        sb = QMessageBox.StandardButton
        buttons = (sb.Save if save else sb.NoButton) | sb.Discard | sb.Cancel
        return QMessageBox.question(self, "Unsaved recording", text, buttons, sb.Cancel)

    def save_settings(self) -> None:
        """Geometry, dock layout, splitter sizes and the selected flow into :attr:`settings` (when given)."""
        st = self.settings
        if st is None:
            return
        st.setValue("window/geometry", self.saveGeometry())
        st.setValue("window/state", self.saveState())
        st.setValue("steps/splitter", self.steps_panel.splitter.saveState())
        st.setValue("healReview/splitter", self.heal_review.splitter.saveState())
        cur = self.flows_list.currentItem()
        if cur is not None and cur.data(INVALID_ROLE) is None:
            st.setValue(f"projects/{_key(self.project_path)}/flow", cur.data(Qt.ItemDataRole.UserRole))
        self._remember_choices()
        remember_project(st, self.project_path)
        st.sync()

    def _remember_choices(self) -> None:
        """The chosen flows (kept as the unchecked ones: a new flow starts checked) and the filters, per project,
        so that a relaunch runs what was chosen (F5) and lists what was filtered."""
        st = self.settings
        if st is None or not hasattr(self, "history_panel") or getattr(self, "_restoring", False):
            return
        import json  # noqa: PLC0415

        key = f"projects/{_key(self.project_path)}"
        unchecked = sorted(n for n in self.flow_names() if n not in self.checked_flows())
        st.setValue(f"{key}/uncheckedFlows", json.dumps(unchecked))
        st.setValue(f"{key}/historyFlow", json.dumps(self.history_panel.flow_filter.currentData()))
        st.setValue(f"{key}/watchedFlows", json.dumps(sorted(self.watched)))
        lib = getattr(self, "skill_library", None)
        if lib is not None:
            st.setValue(f"{key}/skillState", json.dumps(lib.state_filter.currentData()))
            st.setValue(f"{key}/skillSearch", lib.search.text())

    def _restore_choices(self) -> None:
        st = self.settings
        if st is None:
            return
        import json  # noqa: PLC0415

        def value(name: str) -> object:
            raw = st.value(f"projects/{_key(self.project_path)}/{name}")
            try:
                return json.loads(raw) if isinstance(raw, str) else None
            except ValueError:
                return None

        unchecked, flow, state = value("uncheckedFlows"), value("historyFlow"), value("skillState")
        watched = value("watchedFlows")
        self._restoring = True  # applying them must not write them back half applied
        try:
            if isinstance(watched, list):
                self.watched = {n for n in watched if n in self.project.flows}
                if self.watched:
                    self._populate_flows(frozenset())  # the watched ones say so
            self._apply_choices(unchecked, flow, state, st.value(f"projects/{_key(self.project_path)}/skillSearch"))
        finally:
            self._restoring = False

    def _apply_choices(self, unchecked: object, flow: object, state: object, search: object) -> None:
        if isinstance(unchecked, list):
            self.set_checked_flows([n for n in self.flow_names() if n not in unchecked])
        combo = self.history_panel.flow_filter
        if isinstance(flow, str) and combo.findData(flow) >= 0:
            combo.setCurrentIndex(combo.findData(flow))
        lib = getattr(self, "skill_library", None)
        if lib is not None and isinstance(state, str) and lib.state_filter.findData(state) >= 0:
            lib.state_filter.setCurrentIndex(lib.state_filter.findData(state))
        if lib is not None and isinstance(search, str) and search:
            lib.search.setText(search)

    def restore_settings(self) -> None:
        """Apply what :meth:`save_settings` kept (missing keys: the default layout)."""
        st = self.settings
        if st is None:
            return
        remember_project(st, self.project_path)
        for key, apply in (("window/geometry", self.restoreGeometry), ("window/state", self.restoreState)):
            value = st.value(key)
            if value is not None:
                apply(value)
                self._state_restored = self._state_restored or key == "window/state"
        # splitters once the restored docks have their sizes (on first show)
        self._splitters_to_restore = [(st.value(k), sp) for k, sp in (
            ("steps/splitter", self.steps_panel.splitter), ("healReview/splitter", self.heal_review.splitter))
            if st.value(k) is not None]
        flow = st.value(f"projects/{_key(self.project_path)}/flow")
        if flow in self.flow_names():
            self.flows_list.setCurrentRow(self.flow_names().index(flow))
        self._restore_choices()

    def _steps_menu(self, pos: object) -> None:
        t = self.steps_panel.table
        index = t.indexAt(pos)  # type: ignore[arg-type]
        m = QMenu(self)
        if index.isValid():
            title = " ".join(str(index.sibling(index.row(), c).data() or "")
                             for c in range(t.model().columnCount())).strip()
            m.addAction("Copy row", lambda: QApplication.clipboard().setText(title))
        flow = self.project.flows.get(self.steps_panel.model.current_flow) if hasattr(
            self.steps_panel.model, "current_flow") else None
        source = getattr(flow, "source", "") if flow is not None else ""
        if source:
            m.addAction("Copy flow file path", lambda: QApplication.clipboard().setText(str(source)))
        if index.isValid() and flow is not None:
            row, name = index.row(), flow.name
            idle = self.state in (RunState.IDLE, RunState.FINISHED) and not self._recording
            m.addSeparator()
            a = m.addAction(f"Run up to step {row + 1} (pause before it)", lambda: self.run_from_step(name, row))
            a.setEnabled(idle)
            a = m.addAction(f"Run through step {row + 1} (pause after it)", lambda: self.run_to_step(name, row))
            a.setEnabled(idle)
        m.addAction("Find\u2026", self.find_bar.open_bar)
        m.popup(t.viewport().mapToGlobal(pos))  # type: ignore[arg-type]
        self._context_menu = m

    def _find(self) -> None:
        """Ctrl+F: the timeline's search when the focus is in the timeline, else the find bar (steps, log)."""
        focus = QApplication.focusWidget()
        if focus is not None and (focus is self.timeline_panel or self.timeline_panel.isAncestorOf(focus)):
            self.timeline_panel.focus_search()
            return
        self.find_bar.open_bar()

    def _candidates_menu(self, pos: object) -> None:
        tree = self.escalations_panel.candidates
        item = tree.itemAt(pos)  # type: ignore[arg-type]
        if item is None:
            return
        text = " ".join(item.text(c) for c in range(tree.columnCount())).strip()
        cand = item.data(0, Qt.ItemDataRole.UserRole)
        ref = getattr(cand, "ref", "")
        panel = getattr(self, "resolution_panel", None)
        # use once / propose as heal (the resolution panel's menu), then copy and show
        m = (panel.menu_for(ref) if panel is not None and ref and panel.select_ref(ref) else None) or QMenu(self)
        m.addSeparator()
        m.addAction("Copy candidate", lambda: QApplication.clipboard().setText(text))
        m.addAction("Show on the page", lambda: tree.setCurrentItem(item))
        m.popup(tree.viewport().mapToGlobal(pos))  # type: ignore[arg-type]
        self._context_menu = m

    # --- public API -----------------------------------------------------------------------

    def flow_names(self) -> list[str]:
        """All flows of the project, in list order."""
        return [self.flows_list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.flows_list.count())
                if self.flows_list.item(i).data(INVALID_ROLE) is None]

    def checked_flows(self) -> tuple[str, ...]:
        """Flows checked in the list, in list order."""
        return tuple(self.flows_list.item(i).data(Qt.ItemDataRole.UserRole)
                     for i in range(self.flows_list.count())
                     if self.flows_list.item(i).checkState() == Qt.CheckState.Checked
                     and self.flows_list.item(i).data(INVALID_ROLE) is None)

    def set_checked_flows(self, names: tuple[str, ...] | list[str]) -> None:
        """Check exactly ``names``."""
        for i in range(self.flows_list.count()):
            item = self.flows_list.item(i)
            if item.data(INVALID_ROLE) is not None:
                continue
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
        if self._files_changed and not self.reload_project():
            return False  # a run always uses the files as they are at Start
        if not flows or not self._ensure_engine():
            return False
        self.escalations_panel.model.clear()
        self.breaker.reset()
        self.model_usage.reset()
        for name in flows:  # the last run's results are not this run's: its flows start as pending rows
            flow = self.project.flows.get(name)
            if flow is not None:
                self.steps_panel.model.set_flow(name, tuple(st.title for st in flow.steps), reset=True)
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

    def selected_flow(self) -> str | None:
        """The flow selected in the Flows list (None: none, or an invalid file)."""
        item = self.flows_list.currentItem() if hasattr(self, "flows_list") else None
        if item is None or item.data(INVALID_ROLE) is not None:
            return None
        name = item.data(Qt.ItemDataRole.UserRole)
        return name if name in self.project.flows else None

    def run_flow(self, name: str | None = None) -> bool:
        """Run one flow (default: the selected one) whatever is checked; False when it cannot start."""
        name = name or self.selected_flow()
        if not name or name not in self.project.flows:
            return False
        return self.start_run((name,))

    def run_from_step(self, name: str, index: int) -> bool:
        """Bring the page to step ``index``'s start by running the steps before it, then pause before it
        (step on with F10, go on with F5).  Step 1: pause before it at once."""
        steps = self.project.flows[name].steps if name in self.project.flows else ()
        if not 0 <= index < len(steps):
            return False
        return self._run_with_pause(name, steps[index].id, f"run up to step {index + 1}")

    def run_to_step(self, name: str, index: int) -> bool:
        """Run ``name`` through step ``index`` and pause after it (before the next one); the last step: the
        whole flow."""
        steps = self.project.flows[name].steps if name in self.project.flows else ()
        if not 0 <= index < len(steps):
            return False
        if index + 1 >= len(steps):
            return self.run_flow(name)
        return self._run_with_pause(name, steps[index + 1].id, f"run through step {index + 1}")

    def _run_with_pause(self, name: str, step_id: str, what: str) -> bool:
        self._one_shot = (name, step_id)
        if not self.run_flow(name):
            self._one_shot = None
            return False
        self.event_log.log(f"{what} of {name}: the run pauses there")
        return True

    def _end_one_shot(self) -> None:
        """The asked-for pause was reached (or the run ended): the user's own breakpoints only, from now on."""
        if self._one_shot is None:
            return
        self._one_shot = None
        self._sent_breakpoints = None
        engine = self.bridge.engine
        if engine is not None:
            from core.engine.events import SetBreakpoints  # noqa: PLC0415

            engine.send(SetBreakpoints(self.breakpoint_book.breakpoints))
            self._sent_breakpoints = (engine, self.breakpoint_book.breakpoints)

    def set_watched(self, name: str, on: bool) -> None:
        """Watch mode: re-run flow ``name`` whenever its file changes on disk (after the project reloads)."""
        if on:
            self.watched.add(name)
        else:
            self.watched.discard(name)
            self._watch_pending.discard(name)
        self.event_log.log(f"watch {'on' if on else 'off'}: {name}"
                           + (" is run again whenever its file changes" if on else ""))
        self._remember_choices()
        self._populate_flows(frozenset(n for n in self.flow_names() if n not in self.checked_flows()))
        self._update_controls()

    def _flows_menu(self, pos: object) -> None:
        item = self.flows_list.itemAt(pos)  # type: ignore[arg-type]
        name = item.data(Qt.ItemDataRole.UserRole) if item is not None and item.data(INVALID_ROLE) is None else None
        m = QMenu(self)
        if name in self.project.flows:
            idle = self.state in (RunState.IDLE, RunState.FINISHED) and not self._recording
            a = m.addAction(f"Run {name}", lambda: self.run_flow(name))
            a.setEnabled(idle)
            w = m.addAction("Watch: run it again when its file changes")
            w.setCheckable(True)
            w.setChecked(name in self.watched)
            w.toggled.connect(lambda on: self.set_watched(name, on))
            m.addAction("Run only this one (F5 runs it alone)", lambda: self.set_checked_flows([name]))
        m.popup(self.flows_list.viewport().mapToGlobal(pos))  # type: ignore[arg-type]
        self._context_menu = m

    def _watched_changed(self, paths: list[str]) -> set[str]:
        """The watched flows whose files are among ``paths``."""
        touched = {str(Path(p).resolve()) for p in paths}
        out = set()
        for name in self.watched:
            flow = self.project.flows.get(name)
            src = getattr(flow, "source", "") if flow is not None else ""
            if src and str(Path(src).resolve()) in touched:
                out.add(name)
        return out

    def _after_watched_run(self) -> None:
        if self._files_changed and not self.reload_project():
            return
        self._run_watched()

    def _run_watched(self) -> None:
        names = tuple(n for n in self.flow_names() if n in self._watch_pending)
        self._watch_pending.clear()
        if names and self.state in (RunState.IDLE, RunState.FINISHED) and not self._recording:
            self.event_log.log(f"watch: {', '.join(names)} changed on disk, running again")
            self.start_run(names)

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
        """Stop and join the recorder and the engine (each blocks up to ``close_timeout`` s) and the panels'
        store reads (no read reaches a panel after this). Idempotent."""
        for panel in (self.heal_review, self.history_panel, self.graph_view):
            panel.close_reads(self._close_timeout)
        self.recorder_dock.shutdown(self._close_timeout)
        self.bridge.close(timeout=self._close_timeout)
        for t in self._closing_engines:
            t.join(self._close_timeout)
        self._closing_engines = [t for t in self._closing_engines if t.is_alive()]

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
            project, invalid = _split_loaded(self._project_loader(self.project_path))
        except Exception as exc:  # noqa: BLE001 - a broken file is shown, the loaded project kept
            msg = f"Could not reload the project: {type(exc).__name__}: {exc}"
            self.event_log.log(msg)
            self.show_error(msg)
            return False
        self.invalid_flows = invalid
        unchecked = frozenset(n for n in self.flow_names() if n not in self.checked_flows())
        current = self.flows_list.currentItem()
        current_name = current.data(Qt.ItemDataRole.UserRole) if current is not None else ""
        self.project = project
        engine = self.bridge.engine
        if engine is not None:
            self.bridge.attach(None)  # type: ignore[arg-type] - the next run builds an engine for the new project
            # closing an idle engine (its browser, its process) takes seconds: never on the GUI thread
            self._closing_engines.append(_close_in_background(engine, self._close_timeout))
        model = self.steps_panel.model
        for name, flow in project.flows.items():
            titles = [s.title for s in flow.steps]
            if name in model.flow_names() and [r.title for r in model.rows(name)] != titles:
                model.update_titles(name, titles)  # the steps still there keep their last results
        self._populate_flows(unchecked)
        self.history_panel.set_flow_steps({n: len(f.steps) for n, f in project.flows.items()})
        self.recorder_dock.set_project(project)
        self.breakpoint_book.load(project.root)
        self.setWindowTitle(f"Steadyhand Studio \u2014 {project.name}")
        self.project_label.setText(f"{project.name}  \u00b7  {self.project_path}")
        names = self.flow_names()
        if names:
            self.flows_list.setCurrentRow(names.index(current_name) if current_name in names else 0)
        self._update_controls()
        self._update_status()
        self.event_log.log(f"project reloaded: {len(names)} flows"
                           + (f", {counted(len(invalid), 'invalid flow file')}" if invalid else ""))
        self._project_stale = False
        self._files_changed = False
        self.files_bar.hide()
        self.heal_review.refresh_later()  # the store is read off the GUI thread
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

    def fit_to_screen(self) -> bool:
        """Keep the window (its frame) inside its screen's available geometry: shrink it, then move it in.

        Off (:attr:`fit_screen` False) for a picture of a set size (``--screenshot`` on a small virtual screen,
        ``bench studio``).  True when the window was resized or moved.
        """
        screen = self.screen() or QApplication.primaryScreen()
        if not self.fit_screen or screen is None or self.isMaximized() or self.isFullScreen():
            return False
        avail = screen.availableGeometry()
        frame = self.frameGeometry()
        extra_w, extra_h = frame.width() - self.width(), frame.height() - self.height()
        w = max(self.minimumWidth(), min(self.width(), avail.width() - extra_w))
        h = max(self.minimumHeight(), min(self.height(), avail.height() - extra_h))
        changed = (w, h) != (self.width(), self.height())
        if changed:
            self.resize(w, h)
        frame = self.frameGeometry()
        x = max(avail.left(), min(frame.left(), avail.right() + 1 - frame.width()))
        y = max(avail.top(), min(frame.top(), avail.bottom() + 1 - frame.height()))
        if (x, y) != (frame.left(), frame.top()):
            self.move(x, y)
            changed = True
        return changed

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        screen = self.screen()
        if self.fit_screen and screen is not None and not self._fit_pending and self.isVisible():
            avail = screen.availableGeometry()
            if event.size().width() > avail.width() or event.size().height() > avail.height():
                self._fit_pending = True  # once the resize is done (a layout asked for more room)
                QTimer.singleShot(0, self._fit_later)

    def _size_left_docks(self) -> None:
        """Give the Flows and Escalations column :data:`LEFT_COLUMN_PX` (at most a quarter of the window).

        Set before the first show, the width was ignored and the column kept its minimum (about 120 px: one
        word a line of a flow's description).
        """
        width = min(LEFT_COLUMN_PX, max(self.width() // 4, 160))
        if self._state_restored and self.flows_dock.width() >= width * 2 // 3:
            return  # the person's own layout (a saved column of about a word a line is widened)
        self.resizeDocks([self.flows_dock], [width], Qt.Orientation.Horizontal)
        if not self._state_restored:  # the bottom docks' height, once the window has its size (set before: ignored)
            self.resizeDocks([self.steps_dock], [max(STEPS_DOCK_PX, self.height() * 3 // 8)], Qt.Orientation.Vertical)

    def _fit_later(self) -> None:
        self._fit_pending = False
        self.fit_to_screen()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self.fit_to_screen()
        if not getattr(self, "_docks_sized", False):
            self._docks_sized = True  # the left column's width, once the window has its size (before: ignored)
            QTimer.singleShot(0, self._size_left_docks)
        pending, self._splitters_to_restore = getattr(self, "_splitters_to_restore", []), []
        for value, splitter in pending:
            QTimer.singleShot(0, lambda v=value, sp=splitter: sp.restoreState(v))
        if self._run_on_show and not self._auto_started:
            self._auto_started = True
            QTimer.singleShot(0, self.start_all)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        asked_by_user = event.spontaneous() or self._user_close
        self._user_close = False
        if asked_by_user and not self.confirm_close():
            event.ignore()
            return
        self.save_settings()
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
            self.show_error(msg, _traceback(exc))
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
        self.escalations_panel.model.note_command(command)  # an escalation is listed by the answer it got
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
            detail = f" continue from step {command.continue_from + 1}" + (
                f" ({command.meaning})" if command.meaning else "")
        self.event_log.log(f"\u2192 {type(command).__name__}{detail}")
        if self.run_state.on_command(command):
            self._state_changed()
        else:
            self._update_controls()  # e.g. a TakeOver asked for: not twice

    def _show_run_id(self, run_id: str) -> None:
        """The flow run's id as the store, History and ``steadyhand history list`` show it (its first 8
        characters, selectable); the full id in the tooltip.  Any unique prefix names it on the command line."""
        from core.store import short_run_id  # noqa: PLC0415

        self.run_label.setText(f"run {short_run_id(run_id)}")
        self.run_label.setToolTip(f"Run {run_id} in the project's store (History, `steadyhand history list`); "
                                  f"`steadyhand report {short_run_id(run_id)}` and `steadyhand skills learn` take "
                                  "it or any unique prefix")

    def _on_event(self, event: EngineEvent) -> None:
        self.steps_panel.apply(event)
        self.escalations_panel.apply(event)
        self.breaker.apply(event)
        self.model_usage.apply(event)
        self.breaker_panel.apply(event)
        if not isinstance(event, PhaseChanged):
            self.event_log.apply(event)
        if isinstance(event, RunFinished):
            QTimer.singleShot(0, self.heal_review.refresh)  # the run's heal proposals
        if isinstance(event, RunStarted):
            self.run_label.clear()  # the batch's own id is no store id: each flow's run id follows (FlowStarted)
            self.run_label.setToolTip("")
        elif isinstance(event, FlowStarted):
            self._show_run_id(event.run_id)
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
            if event.reason.startswith("breakpoint") and self._one_shot is not None:
                self._end_one_shot()  # reached: the pause asked for by "run up to / through" is spent
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
            self._end_one_shot()
            if self._watch_pending:
                QTimer.singleShot(0, self._after_watched_run)  # a watched file changed during the run
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

    def _on_screencast_frame(self, live: object) -> None:
        """A live frame of the engine's page (a :class:`studio.bridge.LiveImage`): the live view shows it."""
        if self._recording:
            return  # the live view shows the recorder's page meanwhile
        self.live_view.set_frame(live.image, live.css_width, live.scaled,  # type: ignore[attr-defined]
                                 url=live.url, scroll=live.scroll)  # type: ignore[attr-defined]

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
                    f"{_esc(esc.event.plain or esc.event.reason)}")
            self.banner_answers.set_answers(esc.event.answers, esc.event.kind)
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
        self.show_error(f"Engine error: {event.message}", f"run {event.run_id}")

    def _on_flow_clicked(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if current is None:
            return
        if current.data(INVALID_ROLE) is not None:
            if current.data(INVALID_ROLE):
                self.caption.setText(f"Invalid flow file \u2014 {current.data(INVALID_ROLE)}")
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
        self._update_files_bar()
        if getattr(self, "_files_changed", False) and self.state in (RunState.IDLE, RunState.FINISHED) \
                and not getattr(self, "_recording", False):
            # files changed on disk during the run: reloaded once nothing runs, as the README says (trial-72/82)
            QTimer.singleShot(0, self._reload_after_run)
        self.recorder_dock.set_run_active(self.state not in (RunState.IDLE, RunState.FINISHED))
        self._update_controls()
        self._update_status()
        self.run_state_changed.emit(self.state.value)

    def _update_controls(self) -> None:
        c = controls_for(self.state, has_flows=bool(self.checked_flows()), answers=self.run_state.answers)
        if getattr(self, "_recording", False) and self.state in (RunState.IDLE, RunState.FINISHED):
            c = controls_for(self.state, has_flows=False)  # one browser at a time in the live view
        self.action_start.setEnabled(c.start)
        if hasattr(self, "banner_slot"):  # the bars' strip keeps its full height only while a run is live
            self.banner_slot.set_reserved(self.state not in (RunState.IDLE, RunState.FINISHED))
        idle = self.state in (RunState.IDLE, RunState.FINISHED) and not getattr(self, "_recording", False)
        if hasattr(self, "action_run_flow"):
            self.action_run_flow.setEnabled(idle and self.selected_flow() is not None)
        self.action_start.setText(c.start_text)
        self.action_start.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))
        self.action_pause.setEnabled(c.pause)
        self.action_step.setEnabled(c.step)
        self.action_stop.setEnabled(c.stop)
        self.action_take_over.setEnabled(c.take_over and not self.run_state.takeover_asked)
        for i in range(self.flows_list.count()):
            item = self.flows_list.item(i)
            if item.data(INVALID_ROLE) is not None:
                continue  # an invalid file (or the empty-project hint) is never checkable
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
            total = len(self.flow_names())
            parts.append(f"{n} of {total} flows checked \u00b7 F5 to start" if total else
                         "no flows yet \u2014 record your first flow (Ctrl+R)")
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


#: Every label the Start button shows (idle, paused, taken over) and the Take over button's.
START_LABELS = ("Start", "Resume", "Hand back")
TAKE_OVER_LABELS = ("Take over",)


def _fix_width(button: QWidget | None, labels: tuple[str, ...]) -> None:
    """Give a tool button the width of its longest label (its icon and margins included), once."""
    if not isinstance(button, QToolButton):
        return
    shown = button.text()
    widths = []
    for text in labels:
        button.setText(text)
        widths.append(button.sizeHint().width())
    button.setText(shown)
    button.setFixedWidth(max(widths))


def _close_in_background(engine: Any, timeout: float) -> threading.Thread:
    """Close ``engine`` (its browser and process; up to ``timeout`` s) on a thread of its own; returns the thread."""
    def close() -> None:
        try:
            engine.close(timeout=timeout)
        except Exception:  # noqa: BLE001 - an engine that fails to close is let go (its process is a daemon)
            pass

    t = threading.Thread(target=close, name="studio-engine-close", daemon=True)
    t.start()
    return t


def _scrolled(widget: QWidget) -> QWidget:
    """``widget`` in a frameless scroll area: a dock never makes the window's minimum size grow."""
    from PySide6.QtWidgets import QScrollArea  # noqa: PLC0415

    area = QScrollArea()
    area.setObjectName(f"{widget.objectName() or type(widget).__name__}Scroll")
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


#: Windows opened from File > Open project (kept referenced while shown).
_OPEN_WINDOWS: list[MainWindow] = []


def _key(path: Path) -> str:
    """A QSettings-safe key for a project folder."""
    return str(path.expanduser().resolve()).strip("/").replace("/", "|") or "root"


def _traceback(exc: BaseException) -> str:
    import traceback  # noqa: PLC0415

    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
