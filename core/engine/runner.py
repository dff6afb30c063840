"""The engine thread: owns Playwright from creation to close (architecture rule 1).

Front ends send commands (:mod:`core.engine.events`: Start, Pause, Resume,
StepOnce, Stop, and the answers to an escalation: Retry, Skip, TakeOver, HandBack) with :meth:`EngineRunner.send` and receive typed events
through the ``on_event`` callback, which is called ON THE ENGINE THREAD.
"""
from __future__ import annotations

import queue
import threading
import time
import uuid
from typing import Callable

from core.domain import Escalation
from core.engine.control import Answer, StopRequested, TakeoverRequested
from core.engine.events import (
    Command, EngineError, EngineEvent, HandBack, Pause, Paused, Resume, Resumed, Retry, RunFinished, RunStarted,
    SetBreakpoints, Skip, Start, StepOnce, Stop, TakeOver, Compensate, ProposeHeal, UseCandidate,
)
from core.engine.breakpoints import Breakpoints
from core.engine.chosen import accepts
from core.engine.takeover import TAKEOVER_INPUTS, TakeoverRecording
from core.engine.session import ProjectSession
from core.project import Project

__all__ = ["EngineRunner"]

_CLOSE = object()


class _ThreadControl:
    """Pause / step / stop between phases, waiting on escalation answers, takeover and hand-back.

    Commands arrive on the runner's queue (:mod:`core.engine.events`); this
    object is only used on the engine thread.
    """

    def __init__(self, runner: "EngineRunner") -> None:
        self.runner = runner
        self.paused = False
        self.step_from: tuple[str, int] | None = None
        self.takeover_wanted = False
        self._answer: Answer | None = None
        self._handed_back = False
        self._where: tuple[str, int] = ("", -1)
        #: Seconds spent waiting for the user (paused, escalated, taken over) since the engine started:
        #: the step pipeline leaves them out of a step's duration.
        self.waited_s = 0.0
        #: Breakpoints checked by the step pipeline (:class:`core.engine.plugins.breakpoints.BreakpointPlugin`).
        self.breakpoints = Breakpoints()
        #: Set by the step loop while an escalation waits: takes a ProposeHeal (core.engine.chosen).
        self.on_propose: Callable[[ProposeHeal], object] | None = None
        #: The recording of the human's actions while a takeover lasts (:mod:`core.engine.takeover`).
        self.takeover: TakeoverRecording | None = None

    def attach_takeover(self, recording: TakeoverRecording | None) -> None:
        """While set, waiting pumps ``recording`` and forwarded input goes to the engine's page."""
        self.takeover = recording

    def _next_command(self) -> object:
        """The next command; during a takeover the page's events are pumped while none comes."""
        while self.takeover is not None:
            try:
                return self.runner._commands.get_nowait()
            except queue.Empty:
                self.takeover.pump()
        return self.runner._commands.get()

    def _apply(self, cmd: object) -> None:
        """Apply one command; raises StopRequested for Stop (and when the runner closes)."""
        if isinstance(cmd, TAKEOVER_INPUTS):
            if self.takeover is not None:  # input outside a takeover is stale: dropped
                self.takeover.forward(cmd)
            return
        if cmd is _CLOSE:
            self.runner._closing = True
            raise StopRequested()
        if isinstance(cmd, Stop):
            raise StopRequested()
        if isinstance(cmd, SetBreakpoints):
            self.breakpoints = cmd.breakpoints
            return  # not an answer: a pause or an escalation keeps waiting
        self._handed_back = isinstance(cmd, HandBack)
        if isinstance(cmd, Pause):
            self.paused = True
        elif isinstance(cmd, (Resume, Retry)):
            self.paused, self.step_from, self._answer = False, None, Answer("retry")
        elif isinstance(cmd, StepOnce):
            self.paused, self.step_from, self._answer = False, self._where, Answer("retry")
        elif isinstance(cmd, Skip):
            self.paused, self._answer = False, Answer("skip")
        elif isinstance(cmd, Compensate):
            self.paused, self._answer = False, Answer("compensate")
        elif isinstance(cmd, TakeOver):
            self.paused, self.takeover_wanted, self._answer = False, True, Answer("take_over")
        elif isinstance(cmd, HandBack):
            self.paused, self._answer = False, Answer("take_over", continue_from=cmd.continue_from,
                                                      meaning=cmd.meaning)
        elif isinstance(cmd, UseCandidate):
            self.paused, self._answer = False, Answer("use_candidate", ref=cmd.ref, confirmed=cmd.confirmed,
                                                          index=cmd.index, label=cmd.label)
        elif isinstance(cmd, ProposeHeal) and self.on_propose is not None:
            self.on_propose(cmd)  # not an answer: the escalation keeps waiting

    def _drain(self) -> None:
        while True:
            try:
                cmd = self.runner._commands.get_nowait()
            except queue.Empty:
                return
            self._apply(cmd)

    def _wait_for_answer(self, run_id: str, flow: str, index: int, reason: str,
                         accept: Callable[[Answer], bool]) -> Answer:
        """Block until a command gives an answer ``accept`` takes; Paused/Resumed around it."""
        self.paused, self._answer = True, None
        self.runner._emit(Paused(run_id, flow, index, reason))
        t0 = time.monotonic()
        try:
            while True:
                self._apply(self._next_command())
                if self._answer is not None and accept(self._answer):
                    break
                self._answer, self.paused = None, True  # not an answer to this question: keep waiting
        finally:
            # answered, or stopped: either way this question is over (a stopped flow's next flow runs)
            self.paused = False
            self.waited_s += time.monotonic() - t0
            self.runner._emit(Resumed(run_id))
        return self._answer

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        self._where = (flow, index)
        if index < 0:
            # a new flow: a takeover asked for in the last one does not carry over; a pause (Start paused,
            # or Pause pressed meanwhile) waits for the first step, so that it reads "before step 1"
            self.takeover_wanted = False
            self._drain()
            return
        self._drain()
        if self.step_from is not None and self.step_from != (flow, index):
            # one step was run: pause again at the start of the next one
            self.step_from = None
            self.paused = True
        if self.paused:
            reason = "paused" if phase == "observe" else f"paused before {phase}"
            self._wait_for_answer(run_id, flow, index, reason, lambda a: a.kind in ("retry", "take_over"))
        if self.takeover_wanted:
            self.takeover_wanted = False
            raise TakeoverRequested()

    def break_here(self, run_id: str, flow: str, index: int, reason: str) -> None:
        """A breakpoint fired (:class:`core.engine.plugins.breakpoints.BreakpointPlugin`): wait like a pause, ``reason`` shown.

        Resume goes on; Step runs the rest of this step and pauses before the
        next; Take over takes the page at the next pause point; Stop raises
        :class:`StopRequested`.
        """
        self._where = (flow, index)
        self.step_from = None
        self._wait_for_answer(run_id, flow, index, reason, lambda a: a.kind in ("retry", "take_over"))

    def escalate(self, escalation: Escalation) -> Answer:
        self._where = (escalation.flow, escalation.index)
        self.takeover_wanted = False
        try:
            return self._wait_for_answer(escalation.run_id, escalation.flow, escalation.index,
                                         f"escalated: {escalation.reason}",
                                         lambda a: a.kind in escalation.answers and not self._handed_back
                                         and accepts(escalation, a))
        except StopRequested:
            if self.runner._closing:
                raise
            return Answer("stop")
        finally:
            self.takeover_wanted = False  # a TakeOver this escalation did not take never outlives it

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        self.takeover_wanted = False
        answer = self._wait_for_answer(run_id, flow, index, "taken over by hand",
                                       lambda a: self._handed_back or a.kind == "retry")
        # Resume during a takeover hands back at the same step
        return answer if self._handed_back else Answer("take_over", continue_from=None)


class EngineRunner:
    """Runs a project's flows on its own thread.

    Parameters
    ----------
    project : Project
        The loaded project.
    on_event : Callable[[EngineEvent], None]
        Called on the engine thread for every event; must not block long.
    headless : bool
        Run Chromium headless (the studio shows screenshots either way).
    use_store : bool
        Record runs in the project's store.
    """

    def __init__(self, project: Project, *, on_event: Callable[[EngineEvent], None], headless: bool = True,
                 use_store: bool = True) -> None:
        self.project = project
        self.on_event = on_event
        self.headless = headless
        self.use_store = use_store
        self._commands: "queue.Queue[object]" = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closing = False
        self.running = False
        #: The engine thread's session (None before the first run); read it from other threads, never use it.
        self.session: ProjectSession | None = None

    def _emit(self, event: EngineEvent) -> None:
        try:
            self.on_event(event)
        except Exception:  # a failing subscriber never stops the engine
            pass

    def start(self) -> None:
        """Start the engine thread (idle until a Start command)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._main, name="steadyhand-engine", daemon=True)
        self._thread.start()

    def send(self, command: Command) -> None:
        """Queue a command; safe from any thread."""
        self._commands.put(command)

    def close(self, timeout: float = 10.0) -> None:
        """Stop any run, close the browser and join the thread."""
        if self._thread is None:
            return
        self._commands.put(_CLOSE)
        self._thread.join(timeout)
        self._thread = None

    def _main(self) -> None:
        session: ProjectSession | None = None
        control = _ThreadControl(self)
        try:
            while True:
                cmd = self._commands.get()
                if cmd is _CLOSE:
                    return
                if isinstance(cmd, SetBreakpoints):
                    control.breakpoints = cmd.breakpoints
                    continue
                if not isinstance(cmd, Start):
                    continue  # pause/resume/step/stop outside a run: nothing to do
                run_id = uuid.uuid4().hex
                names = tuple(cmd.flows) or tuple(self.project.flows)
                unknown = [n for n in names if n not in self.project.flows]
                if unknown:
                    self._emit(EngineError(run_id, f"unknown {'flow' if len(unknown) == 1 else 'flows'}: {', '.join(unknown)}"))
                    continue
                self._emit(RunStarted(run_id, self.project.name, names))
                results = []
                try:
                    if session is None:
                        session = ProjectSession(self.project, emit=self._emit, headless=self.headless,
                                                 control=control, use_store=self.use_store,
                                                 evidence="full",  # the studio watches every step
                                                 screencast=True)  # and the page, live
                        session.open()
                        self.session = session
                    control.paused = cmd.paused
                    control.step_from = None
                    self.running = True
                    for name in names:
                        result = session.run_flow(self.project.flows[name], params=cmd.params)
                        results.append(result)
                        if result.status == "stopped":
                            break
                except StopRequested:
                    pass
                except Exception as exc:  # noqa: BLE001 - report, keep the thread alive
                    self._emit(EngineError(run_id, f"{type(exc).__name__}: {exc}"))
                    if session is not None:
                        session.close()
                        session = self.session = None
                finally:
                    self.running = False
                self._emit(RunFinished(run_id, tuple(results)))
                if self._closing:
                    return
        finally:
            if session is not None:
                session.close()
