"""The bridge between a recorder thread and the GUI thread (the recorder's EngineBridge).

The recorder (``core.record.runner.RecorderRunner``) calls the ``on_event``
callback it was built with ON ITS THREAD.  That callback only emits a private
signal; Qt queues it to the thread the bridge lives in (the GUI thread), where
:meth:`RecorderBridge._dispatch` drops events of an older session and
re-emits each one on a typed signal.  Element crops are decoded into
``QImage`` there, on the GUI thread (they are small); live frames (a whole
page's PNG) are decoded off the GUI thread by a
:class:`~studio.bridge.FrameDecoder`, newest only: a frame superseded by a
newer one before it was decoded is not decoded at all.

Commands go the other way: :meth:`send` puts typed commands of
``core.record.events`` on the recorder (``recorder.send``, thread-safe by
contract).

One bridge serves any number of recording sessions, one at a time: each
:meth:`open` starts a new session (closing the previous recorder), and
events still queued from an older session are dropped.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable, Protocol

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QImage

from core.record.events import (
    ElementPicked, InspectChanged, LiveFrame, RecorderCommand, RecorderError, RecorderEvent, RecordingStarted,
    RecordingStopped, StepRecorded, StepRemoved, StopRecording,
)

from .bridge import FrameDecoder, ProjectLike

__all__ = [
    "RecorderLike", "OnRecorderEvent", "RecorderFactory", "RecorderBridge", "default_recorder_factory",
]

_log = logging.getLogger(__name__)

OnRecorderEvent = Callable[[RecorderEvent], None]


class RecorderLike(Protocol):
    """What the studio needs of a recorder (``core.record.runner.RecorderRunner``).

    ``on_event`` given at construction is called on the recorder's thread;
    ``send`` must be callable from any thread; ``close`` stops the recording
    (if any), closes the browser and joins the thread.
    """

    def start(self) -> None: ...

    def send(self, command: RecorderCommand) -> None: ...

    def close(self, timeout: float = 10.0) -> None: ...


#: ``factory(project, flow_name, url, on_event, headless) -> recorder`` (not started yet).
RecorderFactory = Callable[[ProjectLike, str, "str | None", OnRecorderEvent, bool], RecorderLike]


def default_recorder_factory(project: ProjectLike, flow_name: str, url: str | None, on_event: OnRecorderEvent,
                             headless: bool) -> RecorderLike:
    """The real recorder, in its own process: :class:`~studio.engine_process.RecorderProcess` running
    ``RecorderRunner(project, flow_name=..., url=..., on_event=..., headless=...)`` (its Python, its Chromium
    and its site's server never hold the GUI thread's GIL)."""
    from .engine_process import RecorderProcess  # noqa: PLC0415

    return RecorderProcess(project, flow_name=flow_name, url=url, on_event=on_event, headless=headless)


class RecorderBridge(QObject):
    """Owns one recorder at a time; turns its events into queued, typed Qt signals.

    Every signal is emitted on the bridge's (GUI) thread and carries the
    event dataclass (``object``).  ``step_recorded`` also carries the decoded
    crop (a null ``QImage`` for targetless steps), ``live_frame`` the decoded
    screenshot (frames superseded by a newer queued frame are dropped, never
    decoded).

    Signals
    -------
    event_received(object)
        Every accepted event, before its typed signal.
    recording_started, step_removed, element_picked, recording_stopped, recorder_error (object)
        The event.
    step_recorded(object, QImage)
        ``StepRecorded`` and its decoded ``crop_png``.
    live_frame(object, QImage)
        ``LiveFrame`` and its decoded ``png`` (never null).
    command_sent(object)
        A command was sent to the recorder (GUI thread).
    """

    event_received = Signal(object)
    recording_started = Signal(object)
    step_recorded = Signal(object, QImage)
    step_removed = Signal(object)
    element_picked = Signal(object)
    inspect_changed = Signal(bool)
    live_frame = Signal(object, QImage)
    recording_stopped = Signal(object)
    recorder_error = Signal(object)
    command_sent = Signal(object)

    _incoming = Signal(int, object)
    _frame_ready = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._recorder: RecorderLike | None = None
        self._session = 0
        #: The live frames, decoded off the GUI thread (newest only).
        self.decoder = FrameDecoder(self._frame_ready.emit)
        self._closed = False
        self._closing: list[threading.Thread] = []
        self.dropped_count = 0
        self._incoming.connect(self._dispatch, Qt.ConnectionType.QueuedConnection)
        self._frame_ready.connect(self._deliver_frame, Qt.ConnectionType.QueuedConnection)
        self._signals = {
            RecordingStarted: self.recording_started, StepRemoved: self.step_removed,
            ElementPicked: self.element_picked, RecordingStopped: self.recording_stopped,
            RecorderError: self.recorder_error,
        }

    # --- recorder side (any thread) -------------------------------------------------------

    def _poster(self, session: int) -> OnRecorderEvent:
        def post(event: RecorderEvent) -> None:
            if self._closed:
                return
            if isinstance(event, LiveFrame):
                if event.png:
                    self.decoder.offer((session, event), event.png, "PNG", 0.0)
                return
            self._incoming.emit(session, event)
        return post

    # --- GUI side -------------------------------------------------------------------------

    @property
    def recorder(self) -> RecorderLike | None:
        """The recorder of the current session, or None."""
        return self._recorder

    @property
    def session(self) -> int:
        """Number of the current session (0 before the first :meth:`open`)."""
        return self._session

    def open(self, project: ProjectLike, flow_name: str, url: str | None, factory: RecorderFactory, *,
             headless: bool = True, close_timeout: float = 10.0) -> RecorderLike:
        """Close the previous recorder, build a new one with ``factory`` and start it.

        Raises
        ------
        Exception
            Whatever the factory or ``start`` raise (the session is then left without a recorder).
        """
        if self._closed:
            raise RuntimeError("the recorder bridge is closed")
        self.release(timeout=close_timeout)
        self._session += 1
        recorder = factory(project, flow_name, url, self._poster(self._session), headless)
        recorder.start()
        self._recorder = recorder
        return recorder

    def send(self, command: RecorderCommand) -> bool:
        """Send ``command`` to the current recorder; False (nothing sent) when there is none."""
        if self._recorder is None or self._closed:
            return False
        self._recorder.send(command)
        self.command_sent.emit(command)
        return True

    def stop(self) -> bool:
        """Ask the recorder to finish (it answers with ``RecordingStopped``)."""
        return self.send(StopRecording())

    def release(self, timeout: float = 10.0, *, wait: bool = True) -> None:
        """Close and forget the current recorder; later events of it are dropped.

        ``wait`` blocks up to ``timeout`` s for its thread; otherwise it is
        closed on a helper thread (after ``RecordingStopped`` the recorder
        only has to shut its site down) and :meth:`close` joins it.
        """
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return
        self._session += 1  # whatever it still emits is stale from now on
        if wait:
            _close_quietly(recorder, timeout)
            return
        self._closing = [t for t in self._closing if t.is_alive()]
        t = threading.Thread(target=_close_quietly, args=(recorder, timeout), name="recorder-close", daemon=True)
        t.start()
        self._closing.append(t)

    def close(self, timeout: float = 10.0) -> None:
        """Close the recorder for good (window closing), joining those still closing; idempotent."""
        if self._closed:
            return
        self.release(timeout=timeout)
        for t in self._closing:
            t.join(timeout)
        self._closing.clear()
        self._closed = True
        self.decoder.close()

    @Slot()
    def _deliver_frame(self) -> None:
        live = self.decoder.take()
        if live is None:
            return
        session, event = live.event  # type: ignore[misc]
        if self._closed or session != self._session:
            self.dropped_count += 1
            return
        self.event_received.emit(event)
        self.live_frame.emit(event, live.image)

    @Slot(int, object)
    def _dispatch(self, session: int, event: RecorderEvent) -> None:
        if self._closed or session != self._session:
            self.dropped_count += 1
            return
        self.event_received.emit(event)
        if isinstance(event, StepRecorded):
            crop = QImage.fromData(event.crop_png, "PNG") if event.crop_png else QImage()
            self.step_recorded.emit(event, crop)
            return
        if isinstance(event, InspectChanged):
            self.inspect_changed.emit(event.on)
            return
        signal = self._signals.get(type(event))
        if signal is not None:
            signal.emit(event)


def _close_quietly(recorder: RecorderLike, timeout: float) -> None:
    try:
        recorder.close(timeout=timeout)
    except Exception:  # noqa: BLE001 - closing must never fail the window
        _log.exception("recorder close failed")
