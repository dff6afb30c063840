"""The engine (and the recorder) in its own process: the studio's GUI thread never waits for their Python.

With the engine in a thread of the studio's process, every Python thread
of the engine (its run, Playwright's event dispatch, the evidence workers)
shares one GIL with the GUI thread: on a loaded machine a thread that is
preempted while it holds the GIL stops the GUI thread too, for as long as
the machine takes to give that thread a core again (``bench studio --why``
measured stalls of 400-600 ms in which the GUI thread neither ran nor
waited for a core).

:class:`EngineProcess` is an :class:`~studio.bridge.EngineLike` that runs
:class:`core.engine.runner.EngineRunner` in a child process
(``python -m core.engine.child``: a fresh interpreter that never loads Qt;
frozen, the bundle runs ``-m`` modules of ``core`` the same way).  The protocol between the two is
the engine's own typed commands and events (``core.engine.events``),
pickled over a pipe: :meth:`EngineProcess.send` writes a command, the
child puts it on the runner's queue; the runner's events are written back
and a reader thread of the studio hands each to ``on_event`` (the bridge's
``post``), as the engine thread did.  When the child ends without being
asked to (it crashed, it was killed), ``on_event`` gets an
``EngineError`` saying so.

:class:`RecorderProcess` does the same for the recorder
(:class:`core.record.runner.RecorderRunner`, its typed commands and events
of ``core.record.events``): its Chromium, its site's server threads and
its own Python leave the studio's process too.
"""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any, Callable

from core.domain.resources import module_name, source_tree
from core.engine.child import CLOSE
from core.engine.events import Command, EngineError, EngineEvent
from core.record.events import RecorderError

__all__ = ["RunnerProcess", "EngineProcess", "RecorderProcess", "CLOSE_JOIN_S"]

_log = logging.getLogger(__name__)

#: Seconds :meth:`RunnerProcess.close` waits for a child that did not end after its timeout before killing it.
CLOSE_JOIN_S = 5.0
#: The folder that holds the ``core`` package: the child finds it there whatever the working directory.


class RunnerProcess:
    """A runner (``start``, thread-safe ``send``, ``close``; events to ``on_event``) in a child process.

    ``kind`` and ``args`` say which runner the child builds (:func:`core.engine.child.build_runner`);
    ``lost(message)`` makes the event that says the child ended without being asked to.
    """

    def __init__(self, kind: str, args: tuple[Any, ...], on_event: Callable[[Any], None], *,
                 name: str, lost: Callable[[str], Any]) -> None:
        self.on_event = on_event
        self.pid: int | None = None
        self._kind, self._args, self._name, self._lost = kind, args, name, lost
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._closing = False

    def start(self) -> None:
        """Start the child process and the reader thread (the runner idles until its first command)."""
        if self._proc is not None:
            return
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        root = source_tree()  # a checkout: the child imports Steadyhand from it (installed or frozen: nothing)
        if root is not None:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
        try:
            self._proc = subprocess.Popen([sys.executable, "-m", module_name("core.engine.child"), "--fd", str(theirs.fileno())],
                                          pass_fds=(theirs.fileno(),), env=env)
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        self.pid = self._proc.pid
        self._conn.send((self._kind, self._args))
        self._reader = threading.Thread(target=self._read, name=f"{self._name}-events", daemon=True)
        self._reader.start()

    def send(self, command: Any) -> None:
        """Send ``command`` to the runner; safe from any thread. A child that is gone drops it (logged)."""
        if self._conn is None or self._closing:
            return
        try:
            with self._send_lock:
                self._conn.send(command)
        except (OSError, ValueError):
            _log.warning("the %s process is gone: %s not sent", self._name, type(command).__name__)

    def close(self, timeout: float = 10.0) -> None:
        """Close the runner (its run, its browser) and end the child (waits up to ``timeout`` s, then kills it)."""
        proc, conn = self._proc, self._conn
        if proc is None or conn is None:
            return
        self._closing = True
        try:
            with self._send_lock:
                conn.send(CLOSE)
        except (OSError, ValueError):
            pass
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(CLOSE_JOIN_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(CLOSE_JOIN_S)
        if self._reader is not None:
            self._reader.join(CLOSE_JOIN_S)
        conn.close()
        self._proc = None

    def _read(self) -> None:
        conn = self._conn
        assert conn is not None
        while True:
            try:
                event = conn.recv()
            except (EOFError, OSError):
                break
            except Exception as exc:  # noqa: BLE001 - an event that cannot be read is said, the rest goes on
                self._deliver(self._lost(f"an event could not be read: {exc}"))
                continue
            self._deliver(event)
        if not self._closing:
            proc, code = self._proc, None
            try:
                code = proc.wait(CLOSE_JOIN_S) if proc is not None else None
            except subprocess.TimeoutExpired:
                pass  # the socket broke, the process still runs: said without its exit code
            self._deliver(self._lost(f"the {self._name.replace('steadyhand-', '')} process ended unexpectedly"
                                     + (f" (exit code {code})" if code is not None else "")))

    def _deliver(self, event: Any) -> None:
        try:
            self.on_event(event)
        except Exception:  # noqa: BLE001 - a failing subscriber never stops the reader
            _log.exception("on_event failed")


class EngineProcess(RunnerProcess):
    """An engine in a child process; the same interface as ``EngineRunner`` for the studio.

    Parameters
    ----------
    project : object
        The loaded project (pickled to the child; ``core.project.Project``).
    on_event : Callable[[EngineEvent], None]
        Called with each engine event, on the studio's reader thread ("steadyhand-engine-events").
    headless : bool
        Chromium without a window (the live view shows the page either way).

    Attributes
    ----------
    pid : int | None
        The child's process id once started.
    """

    def __init__(self, project: Any, *, on_event: Callable[[EngineEvent], None], headless: bool = True) -> None:
        super().__init__("engine", (project, headless), on_event, name="steadyhand-engine",
                         lost=lambda message: EngineError("", message))
        self.project, self.headless = project, headless

    def send(self, command: Command) -> None:
        super().send(command)


class RecorderProcess(RunnerProcess):
    """A recorder in a child process; the same interface as ``RecorderRunner`` for the studio
    (``project``, ``flow_name``, ``url``, ``headless`` as there; ``on_event`` on the reader thread)."""

    def __init__(self, project: Any, *, flow_name: str, url: str | None, on_event: Callable[[Any], None],
                 headless: bool = True) -> None:
        super().__init__("recorder", (project, flow_name, url, headless), on_event, name="steadyhand-recorder",
                         lost=lambda message: RecorderError(message, fatal=True))
        self.project, self.flow_name, self.url, self.headless = project, flow_name, url, headless
