"""The engine thread: owns Playwright from creation to close (ARCHITECTURE rule 1).

Front ends send commands (:mod:`core.engine.events`: Start, Pause, Resume,
StepOnce, Stop) with :meth:`EngineRunner.send` and receive typed events
through the ``on_event`` callback, which is called ON THE ENGINE THREAD.
"""
from __future__ import annotations

import queue
import threading
import uuid
from typing import Callable, Literal

from core.engine.events import (
    Command, EngineError, EngineEvent, EscalationRaised, FlowFinished, Pause, Paused, Resume, Resumed,
    RunFinished, RunStarted, Start, StepOnce, Stop,
)
from core.engine.executor import StopRequested
from core.engine.session import ProjectSession
from core.project import Project

__all__ = ["EngineRunner"]

_CLOSE = object()


class _ThreadControl:
    """Pause / step / stop between phases, and waiting on escalations."""

    def __init__(self, runner: "EngineRunner") -> None:
        self.runner = runner
        self.paused = False
        self.step_from: tuple[str, int] | None = None

    def _apply(self, cmd: object) -> None:
        if cmd is _CLOSE:
            self.runner._closing = True
            raise StopRequested()
        if isinstance(cmd, Stop):
            raise StopRequested()
        if isinstance(cmd, Pause):
            self.paused = True
        elif isinstance(cmd, Resume):
            self.paused = False
            self.step_from = None
        elif isinstance(cmd, StepOnce):
            self.paused = False
            self.step_from = self._where

    def _drain(self) -> None:
        while True:
            try:
                cmd = self.runner._commands.get_nowait()
            except queue.Empty:
                return
            self._apply(cmd)

    def _wait(self, run_id: str, flow: str, index: int, reason: str) -> None:
        self.runner._emit(Paused(run_id, flow, index, reason))
        while self.paused:
            self._apply(self.runner._commands.get())
        self.runner._emit(Resumed(run_id))

    def checkpoint(self, run_id: str, flow: str, index: int) -> None:
        self._where = (flow, index)
        self._drain()
        if self.step_from is not None and self.step_from != (flow, index) and index >= 0:
            # one step was run: pause again at the start of the next one
            self.step_from = None
            self.paused = True
        if self.paused:
            self._wait(run_id, flow, index, "paused")

    def escalate(self, event: EscalationRaised) -> Literal["retry", "stop"]:
        self._where = (event.flow, event.index)
        self.paused = True
        try:
            self._wait(event.run_id, event.flow, event.index, f"escalated: {event.reason}")
        except StopRequested:
            return "stop"
        return "retry"

    _where: tuple[str, int] = ("", -1)


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
                if not isinstance(cmd, Start):
                    continue  # pause/resume/step/stop outside a run: nothing to do
                run_id = uuid.uuid4().hex
                names = tuple(cmd.flows) or tuple(self.project.flows)
                unknown = [n for n in names if n not in self.project.flows]
                if unknown:
                    self._emit(EngineError(run_id, f"unknown flow(s): {', '.join(unknown)}"))
                    continue
                self._emit(RunStarted(run_id, self.project.name, names))
                results = []
                try:
                    if session is None:
                        session = ProjectSession(self.project, emit=self._emit, headless=self.headless,
                                                 control=control, use_store=self.use_store)
                        session.open()
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
                        session = None
                finally:
                    self.running = False
                self._emit(RunFinished(run_id, tuple(results)))
                if self._closing:
                    return
        finally:
            if session is not None:
                session.close()
