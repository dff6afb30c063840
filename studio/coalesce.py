"""Work of the GUI thread done once for a burst of engine events, and pictures decoded off it.

A run sends the studio a burst of events per step (started, phases,
observations, target, action, verdict, evidence, finished); each updates a
model at once (cheap), but redrawing a panel for each - rich text laid out
again, a table re-measured, a screenshot decoded - cost the GUI thread tens
of ms per event and stalled it for hundreds of ms per step on a loaded machine.

:class:`Deferred` runs a refresh once, :data:`VIEW_REFRESH_MS` after the
first event asked for it, however many asked meanwhile.
:class:`ImageLoader` decodes PNG screenshots (bytes or files) on its own
thread and keeps the last few decoded; the panel shows the picture when it
arrives (a queued signal).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Hashable

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QImage

__all__ = ["VIEW_REFRESH_MS", "Deferred", "ImageLoader"]

#: How long (ms) a panel's refresh waits for more events of the same burst: 50 ms, 20 refreshes a second at
#: most, faster than a person reads a table or a details pane, and below the 50 ms stall bar of issue 20.
VIEW_REFRESH_MS = 50


class Deferred(QObject):
    """Calls ``fn()`` once, ``interval_ms`` after the first :meth:`schedule` since the last call (GUI thread).

    :meth:`flush` calls it at once when one is pending (a user's action shows its result without waiting);
    :attr:`calls` counts the calls made.
    """

    def __init__(self, fn: Callable[[], None], interval_ms: int = VIEW_REFRESH_MS,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._run)
        self.calls = 0

    @property
    def pending(self) -> bool:
        """True while a call is scheduled."""
        return self._timer.isActive()

    def schedule(self) -> None:
        """Ask for a call; one already scheduled covers this one too."""
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Make the scheduled call now (nothing when none is scheduled)."""
        if self._timer.isActive():
            self._timer.stop()
            self._run()

    def cancel(self) -> None:
        """Drop the scheduled call."""
        self._timer.stop()

    def _run(self) -> None:
        self.calls += 1
        self._fn()


#: Decoded screenshots an :class:`ImageLoader` keeps (a 1280x800 picture is 4 MB decoded): the steps a
#: person scrubs back and forth over.
IMAGE_CACHE = 16


class ImageLoader(QObject):
    """Decodes PNG pictures on its own thread; the GUI thread takes them from a small cache.

    :meth:`get` (GUI thread) returns the decoded picture of ``key`` when it is
    cached and the ``source`` (``bytes`` of a PNG, or a file ``Path``) is the
    same object or path as when it was decoded; otherwise it queues the
    decoding, newest request first, and returns None; ``loaded(key)`` is
    emitted on the GUI thread when the picture is ready.  A source that does
    not decode gives a null ``QImage`` (cached like any other).
    :attr:`decoder_thread` is the ``threading.Thread`` that decodes (None
    before the first request); :meth:`close` stops it (joins up to 2 s).
    """

    loaded = Signal(object)
    _stored = Signal(object)

    def __init__(self, parent: QObject | None = None, capacity: int = IMAGE_CACHE) -> None:
        super().__init__(parent)
        self.capacity = capacity
        self._cache: OrderedDict[Hashable, tuple[object, QImage]] = OrderedDict()
        self._cond = threading.Condition()
        self._queue: OrderedDict[Hashable, object] = OrderedDict()
        self._closed = False
        self.decoder_thread: threading.Thread | None = None
        #: ``threading.get_ident()`` of the thread that decoded each picture, newest last (a test's view).
        self.decoded_on: list[int] = []
        self._stored.connect(self._store, Qt.ConnectionType.QueuedConnection)

    def get(self, key: Hashable, source: bytes | Path | None) -> QImage | None:
        """The decoded picture of ``key`` from ``source`` (a null image for no source), or None: queued."""
        if not source:
            return QImage()
        hit = self._cache.get(key)
        if hit is not None and _same(hit[0], source):
            self._cache.move_to_end(key)
            return hit[1]
        with self._cond:
            if self._closed:
                return QImage()
            self._queue[key] = source
            self._queue.move_to_end(key)
            if self.decoder_thread is None:
                self.decoder_thread = threading.Thread(target=self._main, name="studio-image-loader", daemon=True)
                self.decoder_thread.start()
            self._cond.notify()
        return None

    def cached(self, key: Hashable) -> QImage | None:
        """The last picture decoded for ``key`` whatever its source (None when none is cached)."""
        hit = self._cache.get(key)
        return hit[1] if hit is not None else None

    def clear(self) -> None:
        """Forget the cached pictures (the next :meth:`get` decodes again)."""
        self._cache.clear()

    def close(self) -> None:
        """Stop the decoding thread; later requests give null images. Idempotent."""
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._cond.notify()
            thread = self.decoder_thread
        if thread is not None:
            thread.join(2.0)

    def _main(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                key, source = self._queue.popitem(last=True)  # the newest request first
            if isinstance(source, (bytes, bytearray)):
                image = QImage.fromData(bytes(source), "PNG")
            else:
                image = QImage(str(source))
            self.decoded_on.append(threading.get_ident())
            self._deliver(key, source, image)

    def _deliver(self, key: Hashable, source: object, image: QImage) -> None:
        """On the decoder thread: hand the picture to the loader's (GUI) thread (a queued signal)."""
        self._stored.emit((key, source, image))

    def _store(self, item: tuple[Hashable, object, QImage]) -> None:
        key, source, image = item
        self._cache[key] = (source, image)
        self._cache.move_to_end(key)
        while len(self._cache) > self.capacity:
            self._cache.popitem(last=False)
        self.loaded.emit(key)


def _same(a: object, b: object) -> bool:
    """The same source: equal paths, or the very same bytes object (a step's screenshot is kept, not copied)."""
    if isinstance(a, Path) or isinstance(b, Path):
        return a == b
    return a is b
