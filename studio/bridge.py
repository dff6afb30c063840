"""The bridge between the engine thread and the GUI thread (architecture rule 1).

The engine calls :meth:`EngineBridge.post` on ITS thread.  ``post`` only
appends the event to the bridge's queue and, when the GUI thread is not
already due to empty it, emits a private signal; Qt queues that to the
thread the bridge lives in (the GUI thread), which takes the events in
order, in batches of at most :data:`DISPATCH_BUDGET_MS` of its time (the
rest waits for the next turn of the event loop, so that a burst of events
never keeps timers, input and painting waiting), and
:meth:`EngineBridge._dispatch` drops stale events and re-emits each one on
a typed per-event signal.  Screenshots are decoded into
a ``QImage`` there, on the GUI thread; no ``QPixmap`` is ever built off it.

Live frames - the screencast of the engine's page
(:class:`~core.engine.events.ScreencastFrame`, JPEG) - never queue on the GUI
thread: ``post`` hands each to a :class:`FrameDecoder`, which keeps only the
newest frame, decodes it (and paints its secret masks) on its own thread and
wakes the GUI thread with at most one queued call, which emits
``screencast_frame``.  Once a run sends frames, its observations' PNGs are no
longer decoded on the GUI thread: the frames show the page (an observation's
masked PNG goes to the decoder when no frame came since the last one: the
page is still, or the engine holds frames back while a secret shows).

Commands go the other way: :meth:`start`, :meth:`pause`, :meth:`resume`,
:meth:`step`, :meth:`stop`, the answers to an escalation (:meth:`retry`,
:meth:`skip`, :meth:`take_over`) and the end of a takeover
(:meth:`hand_back`) put typed commands of ``core.engine.events`` on the
engine's queue (``engine.send``), which is thread-safe by contract.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

from PySide6.QtCore import QObject, QRectF, QSize, Qt, Signal, Slot
from PySide6.QtGui import QColor, QImage, QPainter

from core.domain import Flow
from core.engine.events import (
    ActionPerformed, BreakerChanged, Command, EngineError, EngineEvent, EscalationRaised,
    FlowFinished, FlowStarted, HandBack, HandedBack, ObservationMade, Pause, Paused, PhaseChanged, Resume,
    Resumed, Retry, RunFinished, RunStarted, ScreencastFrame, Skip, Start, StepFinished, StepOnce, StepStarted, Stop,
    TakeOver, TakeoverStarted, TargetResolved, VerdictReached,
)
from core.domain import BBox

__all__ = ["EngineLike", "ProjectLike", "OnEvent", "EngineFactory", "EngineBridge", "FrameQueue", "FrameDecoder",
           "LiveImage", "MASK_COLOR", "DISPATCH_BUDGET_MS", "fit_size", "default_engine_factory",
           "thread_engine_factory"]

_log = logging.getLogger(__name__)

OnEvent = Callable[[EngineEvent], None]


class ProjectLike(Protocol):
    """What the studio needs of a loaded project (``core.project.Project``)."""

    name: str
    root: Path
    flows: Mapping[str, Flow]


class EngineLike(Protocol):
    """What the studio needs of an engine (``core.engine.runner.EngineRunner``).

    ``on_event`` given at construction is called on the engine thread;
    ``send`` must be callable from any thread.
    """

    def start(self) -> None: ...

    def send(self, command: Command) -> None: ...

    def close(self, timeout: float = 10.0) -> None: ...


#: GUI-thread time (ms) one batch of engine events may take before the rest waits for the next turn of the event
#: loop: 20 ms, well below the 50 ms stall bar of issue 20 (one event's own handlers can take longer).
DISPATCH_BUDGET_MS = 20.0

#: Builds an engine for a project, wired to ``on_event``.
EngineFactory = Callable[[ProjectLike, OnEvent], EngineLike]


def default_engine_factory(project: ProjectLike, on_event: OnEvent) -> EngineLike:
    """The real engine, in its own process: :class:`~studio.engine_process.EngineProcess` running
    ``EngineRunner(project, on_event=..., headless=True)`` (its Python never holds the GUI thread's GIL)."""
    from .engine_process import EngineProcess  # noqa: PLC0415

    return EngineProcess(project, on_event=on_event, headless=True)


def thread_engine_factory(project: ProjectLike, on_event: OnEvent) -> EngineLike:
    """The real engine in a thread of the studio's process: ``EngineRunner(project, on_event=..., headless=True)``
    (tests that look into the engine's session; the studio itself uses :func:`default_engine_factory`).

    Imported lazily so that the studio (and its previews) load without it.
    """
    from core.engine.runner import EngineRunner  # noqa: PLC0415 - optional until the runner exists

    return EngineRunner(project, on_event=on_event, headless=True)


class FrameQueue:
    """Counts screenshots queued to the GUI thread: only the newest one is worth decoding.

    The emitting thread calls :meth:`queued` before posting one; the GUI
    thread calls :meth:`taken` when it arrives, which says whether a newer
    one is already queued behind it (then it is dropped undecoded).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending = 0

    def queued(self) -> None:
        with self._lock:
            self._pending += 1

    def taken(self) -> bool:
        """True when a newer screenshot is already queued (this one is superseded)."""
        with self._lock:
            self._pending -= 1
            return self._pending > 0


#: Colour painted over a secret field in a live frame (opaque: nothing of the field shows through).
MASK_COLOR = QColor(40, 44, 52)


class LiveImage:
    """A decoded live frame: ``event`` (a ``ScreencastFrame`` or an ``ObservationMade``), ``image`` (device px,
    masks painted), ``css_width`` (CSS px of the page's viewport), ``received`` (``time.monotonic()`` s
    when the engine posted it) and ``scaled``: the image already scaled to fit the decoder's
    :attr:`FrameDecoder.fit` box (aspect kept, smooth), or a null ``QImage``.  :attr:`url` and
    :attr:`scroll` (CSS px) say which page and scroll position the frame shows."""

    __slots__ = ("event", "image", "css_width", "received", "scaled")

    def __init__(self, event: object, image: QImage, css_width: float, received: float,
                 scaled: QImage | None = None) -> None:
        self.event, self.image, self.css_width, self.received = event, image, css_width, received
        self.scaled = scaled if scaled is not None else QImage()

    @property
    def url(self) -> str:
        obs = getattr(self.event, "observation", None)
        return str(obs.url if obs is not None else getattr(self.event, "url", ""))

    @property
    def scroll(self) -> tuple[float, float]:
        obs = getattr(self.event, "observation", None)
        x, y = obs.scroll if obs is not None else getattr(self.event, "scroll", (0.0, 0.0))
        return (float(x), float(y))


def fit_size(width: int, height: int, box: tuple[int, int]) -> tuple[int, int]:
    """The size (px) of a ``width`` x ``height`` image scaled to fit ``box`` (w, h), aspect kept, rounded
    as the live view rounds it (:meth:`studio.views.live_view.LiveView.image_rect`); (0, 0) for an empty box."""
    if width <= 0 or height <= 0 or box[0] <= 0 or box[1] <= 0:
        return (0, 0)
    s = min(box[0] / width, box[1] / height)
    return (round(width * s), round(height * s))


class FrameDecoder:
    """Decodes live frames on its own thread, newest only: at most one waits, one is ready, one call is queued.

    :meth:`offer` (any thread) replaces the waiting frame (the replaced one
    counts in :attr:`superseded`); the decoder thread decodes it with
    ``QImage.fromData`` (a 1280x800 JPEG: about 10 ms, the GIL released),
    paints ``masks`` (CSS px) over it in :data:`MASK_COLOR`, keeps it as
    the ready frame (replacing one the GUI thread has not taken) and calls
    ``wake`` once until :meth:`take` (the GUI thread) takes it.  Frames
    that do not decode are dropped (:attr:`failed`).  The thread starts on
    the first offer; :meth:`close` stops it (joins up to 2 s).
    """

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        #: The box (w, h widget px) the live view fits frames into, set by the GUI thread; frames are also
        #: scaled to it here (``LiveImage.scaled``), so that the GUI thread only draws them. None: not scaled.
        self.fit: tuple[int, int] | None = None
        self._cond = threading.Condition()
        self._waiting: tuple[object, bytes, str, float, tuple[BBox, ...], float] | None = None
        self._ready: LiveImage | None = None
        self._woken = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self.offered = self.decoded = self.superseded = self.failed = 0

    def offer(self, event: object, data: bytes, fmt: str, css_width: float, masks: Sequence[BBox] = ()) -> None:
        """Queue ``data`` (``fmt`` ``"JPEG"`` or ``"PNG"``) for decoding, replacing a frame still waiting."""
        with self._cond:
            if self._closed:
                return
            if self._waiting is not None:
                self.superseded += 1
            self._waiting = (event, data, fmt, css_width, tuple(masks), time.monotonic())
            self.offered += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._main, name="live-frame-decoder", daemon=True)
                self._thread.start()
            self._cond.notify()

    def take(self) -> LiveImage | None:
        """The newest decoded frame (None when there is none); the next decoded frame wakes again."""
        with self._cond:
            ready, self._ready, self._woken = self._ready, None, False
            return ready

    def close(self) -> None:
        """Stop the decoder thread; frames offered later are ignored. Idempotent."""
        with self._cond:
            self._closed = True
            self._waiting = self._ready = None
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join(2.0)

    def _main(self) -> None:
        while True:
            with self._cond:
                while self._waiting is None and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                job, self._waiting = self._waiting, None
            assert job is not None
            event, data, fmt, css_width, masks, received = job
            image = decode_live(data, fmt, css_width, masks)
            scaled = QImage()
            fit = self.fit
            if fit is not None and not image.isNull():
                w, h = fit_size(image.width(), image.height(), fit)
                if w > 0 and (w, h) != (image.width(), image.height()):
                    scaled = image.scaled(QSize(w, h), Qt.AspectRatioMode.IgnoreAspectRatio,
                                          Qt.TransformationMode.SmoothTransformation)
            with self._cond:
                if self._closed:
                    return
                if image.isNull():
                    self.failed += 1
                    continue
                self.decoded += 1
                if self._ready is not None:
                    self.superseded += 1
                self._ready = LiveImage(event, image, css_width, received, scaled)
                wake, self._woken = not self._woken, True
            if wake:
                self._wake()


def decode_live(data: bytes, fmt: str, css_width: float, masks: Sequence[BBox] = ()) -> QImage:
    """``data`` decoded (any thread), with ``masks`` (CSS px; image px = CSS px * width / ``css_width``)
    painted over in :data:`MASK_COLOR`; a null ``QImage`` when ``data`` does not decode."""
    image = QImage.fromData(data, fmt)
    if image.isNull() or not masks:
        return image
    if image.format() != QImage.Format.Format_RGB32:
        image = image.convertToFormat(QImage.Format.Format_RGB32)
    k = image.width() / css_width if css_width > 0 else 1.0
    p = QPainter(image)
    for b in masks:
        p.fillRect(QRectF(b.x * k, b.y * k, b.width * k, b.height * k), MASK_COLOR)
    p.end()
    return image


class EngineBridge(QObject):
    """Owns one engine; turns its events into queued, typed Qt signals.

    Every signal is emitted on the bridge's (GUI) thread and carries the
    event dataclass (``object``); ``observation_made`` also carries the
    decoded screenshot (a null ``QImage`` when the PNG was superseded by a
    newer observation already queued, or was empty/unreadable, or the run
    streams live frames).  ``screencast_frame`` carries a
    :class:`LiveImage`: the newest live frame of the current run, decoded
    off the GUI thread; frames are not passed to ``event_received``.

    Stale events: the bridge follows one run at a time.  A ``RunStarted``
    makes its ``run_id`` current, and each ``FlowStarted`` that follows it
    adds the flow run's ``run_id`` (a flow may run as its own job with its
    own id); events of any other run are dropped (counted in
    :attr:`dropped_count`).  :meth:`start` forgets the current
    run, so late events of a stopped run never reach the views.
    An ``EngineError`` passes when it has no ``run_id`` (not tied to a run)
    or arrives before any ``RunStarted`` of the run asked for (that run
    could not start, e.g. an unknown flow).
    """

    event_received = Signal(object)
    run_started = Signal(object)
    flow_started = Signal(object)
    step_started = Signal(object)
    phase_changed = Signal(object)
    observation_made = Signal(object, QImage)
    target_resolved = Signal(object)
    action_performed = Signal(object)
    verdict_reached = Signal(object)
    step_finished = Signal(object)
    breaker_changed = Signal(object)
    escalation_raised = Signal(object)
    flow_finished = Signal(object)
    run_finished = Signal(object)
    engine_error = Signal(object)
    paused = Signal(object)
    resumed = Signal(object)
    takeover_started = Signal(object)
    handed_back = Signal(object)
    #: A command was sent to the engine (GUI thread): the command dataclass.
    command_sent = Signal(object)
    #: The newest live frame of the current run (a :class:`LiveImage`), decoded off the GUI thread.
    screencast_frame = Signal(object)

    _incoming = Signal()
    _frame_ready = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pending: deque[EngineEvent] = deque()
        self._pending_lock = threading.Lock()
        self._woken = False
        #: Batches of engine events taken on the GUI thread, and those cut short by the budget (the rest
        #: went to the next turn of the event loop).
        self.batches = self.batches_split = 0
        self._engine: EngineLike | None = None
        self._run_id: str | None = None
        self._run_ids: set[str] = set()
        self._closed = False
        self._frames = FrameQueue()
        self.dropped_count = 0
        #: Live frames of the engine's page, decoded off the GUI thread (newest only).
        self.decoder = FrameDecoder(self._frame_ready.emit)
        #: Live frames emitted on ``screencast_frame`` (GUI thread), and screencast frames posted (engine thread).
        self.frames_shown = self.frames_received = 0
        self._streaming = False  # the current run sends live frames
        self._framed = False  # a live frame came since the last observation
        self._incoming.connect(self._drain, Qt.ConnectionType.QueuedConnection)
        self._frame_ready.connect(self._deliver_frame, Qt.ConnectionType.QueuedConnection)
        self._signals: dict[type, Signal] = {
            RunStarted: self.run_started, FlowStarted: self.flow_started,
            StepStarted: self.step_started, PhaseChanged: self.phase_changed,
            TargetResolved: self.target_resolved, ActionPerformed: self.action_performed,
            VerdictReached: self.verdict_reached, StepFinished: self.step_finished,
            BreakerChanged: self.breaker_changed, EscalationRaised: self.escalation_raised,
            FlowFinished: self.flow_finished, RunFinished: self.run_finished,
            EngineError: self.engine_error, Paused: self.paused, Resumed: self.resumed,
            TakeoverStarted: self.takeover_started, HandedBack: self.handed_back,
        }

    # --- engine side (any thread) ---------------------------------------------------------

    def post(self, event: EngineEvent) -> None:
        """Hand an engine event to the GUI thread; safe to call from any thread.

        This is the ``on_event`` callback given to the engine.
        """
        if self._closed:
            return
        if isinstance(event, ScreencastFrame):
            self._framed = True
            self.frames_received += 1
            self.decoder.offer(event, event.jpeg, "JPEG", event.width, event.masks)
            return
        if isinstance(event, ObservationMade):
            self._frames.queued()
        with self._pending_lock:
            self._pending.append(event)
            wake, self._woken = not self._woken, True
        if wake:
            self._incoming.emit()

    # --- GUI side -------------------------------------------------------------------------

    @property
    def engine(self) -> EngineLike | None:
        """The engine, once :meth:`attach` or :meth:`open` gave one."""
        return self._engine

    @property
    def run_id(self) -> str | None:
        """The run whose events are passed on; None before the first ``RunStarted``."""
        return self._run_id

    def open(self, project: ProjectLike, factory: EngineFactory) -> EngineLike:
        """Build the engine with ``factory(project, self.post)``, start its thread, attach it."""
        engine = factory(project, self.post)
        engine.start()
        self.attach(engine)
        return engine

    def attach(self, engine: EngineLike) -> None:
        """Use ``engine`` (already wired to :meth:`post`) for commands."""
        self._engine = engine

    def send(self, command: Command) -> None:
        """Send a command to the engine.

        Raises
        ------
        RuntimeError
            When no engine is attached or the bridge is closed.
        """
        if self._engine is None or self._closed:
            raise RuntimeError("no engine attached to the bridge")
        if isinstance(command, Start):
            self._run_id, self._run_ids = None, set()  # everything of the previous run is stale from now on
            self._streaming = False
        self._engine.send(command)
        self.command_sent.emit(command)

    def start(self, flows: tuple[str, ...] = (), *, params: Mapping[str, str] | None = None,
              paused: bool = False) -> None:
        """Start a run of ``flows`` (all when empty); ``paused`` stops before the first step."""
        self.send(Start(flows=tuple(flows), params=dict(params or {}), paused=paused))

    def pause(self) -> None:
        """Ask the engine to pause at the next phase boundary."""
        self.send(Pause())

    def resume(self) -> None:
        """Resume a paused run."""
        self.send(Resume())

    def step(self) -> None:
        """Run exactly one more step, then pause again."""
        self.send(StepOnce())

    def stop(self) -> None:
        """Stop the run (answering an escalation: end its flow there)."""
        self.send(Stop())

    def retry(self) -> None:
        """Answer an escalation: try the step again."""
        self.send(Retry())

    def skip(self) -> None:
        """Answer an escalation: leave the step as skipped and go on."""
        self.send(Skip())

    def take_over(self) -> None:
        """Take the page: answers an escalation, or takes over at the engine's next pause point."""
        self.send(TakeOver())

    def hand_back(self, continue_from: int | None = None) -> None:
        """End a takeover; the engine continues from step ``continue_from`` (0-based; None = where it began)."""
        self.send(HandBack(continue_from=continue_from))

    def close(self, timeout: float = 10.0) -> None:
        """Stop and join the engine (blocks up to ``timeout`` s); later events are ignored.

        Idempotent.  Errors of the engine's ``close`` are logged, not raised,
        so that a window can always close.
        """
        if self._closed:
            return
        self._closed = True  # from now on post() drops events: nothing reaches closing views
        self.decoder.close()
        engine, self._engine = self._engine, None
        if engine is not None:
            try:
                engine.close(timeout=timeout)
            except Exception:  # noqa: BLE001 - closing must never fail the window
                _log.exception("engine close failed")

    @Slot()
    def _drain(self) -> None:
        """Dispatch the queued events in order until none is left or :data:`DISPATCH_BUDGET_MS` is spent."""
        self.batches += 1
        start = time.perf_counter()
        while True:
            with self._pending_lock:
                if not self._pending:
                    self._woken = False
                    return
                event = self._pending.popleft()
            self._dispatch(event)
            if (time.perf_counter() - start) * 1000.0 >= DISPATCH_BUDGET_MS:
                with self._pending_lock:
                    if not self._pending:
                        self._woken = False
                        return
                self.batches_split += 1
                self._incoming.emit()  # queued behind what waits already (timers, input, paints)
                return

    def _dispatch(self, event: EngineEvent) -> None:
        image = QImage()
        superseded = False
        if isinstance(event, ObservationMade):
            superseded = self._frames.taken()
        if self._closed or not self._accept(event):
            self.dropped_count += 1
            return
        self.event_received.emit(event)
        if isinstance(event, ObservationMade):
            png = event.observation.screenshot_png
            if self._streaming:
                # the live frames show the page; the observation's masked picture only when none came since
                framed, self._framed = self._framed, False
                if png and not framed:
                    self.decoder.offer(event, png, "PNG", float(event.observation.viewport[0]))
            elif not superseded and png:
                image = QImage.fromData(png, "PNG")
            self.observation_made.emit(event, image)
            return
        signal = self._signals.get(type(event))
        if signal is not None:
            signal.emit(event)

    @Slot()
    def _deliver_frame(self) -> None:
        live = self.decoder.take()
        if live is None or self._closed:
            return
        run_id = getattr(live.event, "run_id", None)
        if run_id is None or run_id not in self._run_ids:
            self.dropped_count += 1  # a frame of a run no longer shown
            return
        self._streaming = True
        self.frames_shown += 1
        self.screencast_frame.emit(live)

    def _accept(self, event: EngineEvent) -> bool:
        if isinstance(event, RunStarted):
            self._run_id = event.run_id
            self._run_ids = {event.run_id}
            return True
        if isinstance(event, EngineError) and (not event.run_id or self._run_id is None):
            return True  # not tied to a run, or the run we asked for failed before RunStarted
        if self._run_id is None:
            return False
        if isinstance(event, FlowStarted):
            # A flow may run under its own id (one flow run = one job, architecture rule 8).
            # The engine is sequential, so a FlowStarted after our RunStarted belongs to our run.
            self._run_ids.add(event.run_id)
            return True
        return getattr(event, "run_id", None) in self._run_ids
