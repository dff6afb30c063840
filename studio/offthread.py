"""Reads done off the GUI thread whose results reach a widget only while it lives.

A panel that reads the store on a worker thread hands the result back by emitting one of its own
(queued) signals.  Emitting on a widget whose C++ object is being deleted is a race the binding cannot
always catch: the process may crash instead of raising.  :class:`OffThreadReads` closes that window:
the worker emits under a lock, and :meth:`OffThreadReads.close` - called when the window or the panel
closes - takes the lock, marks the reads closed (no hand-over after it) and joins the workers.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["CLOSE_TIMEOUT_S", "OffThreadReads", "ReadsOffThread"]

#: Longest wait (s) :meth:`OffThreadReads.close` gives a read still going (a store read takes ms; a
#: locked store waits for its busy timeout, and the read is then left to end on its own, unseen).
CLOSE_TIMEOUT_S = 5.0


class OffThreadReads:
    """Runs reads on daemon threads named ``name`` and hands each result to ``hand_over`` (a queued signal's
    ``emit``) unless closed meanwhile.

    Parameters
    ----------
    name : str
        Thread name (shown in stack dumps).
    hand_over : Callable[[Any], None]
        Called on the worker thread with the read's result, under the lock :meth:`close` takes; it must not
        wait for the GUI thread (a queued signal's ``emit`` posts an event and returns).
    """

    def __init__(self, name: str, hand_over: Callable[[Any], None]) -> None:
        self.name = name
        self._hand_over = hand_over
        self._lock = threading.Lock()
        self._closed = False
        self._pending = 0  # reads started whose result is not handed over (nor dropped) yet
        self._threads: list[threading.Thread] = []

    def start(self, read: Callable[..., Any], *args: Any) -> threading.Thread:
        """Run ``read(*args)`` on a new thread; its result is handed over unless :meth:`close` came first.

        Called by the owner (GUI thread): it lives, so reads are open again after an earlier close."""
        with self._lock:
            self._closed = False
            self._pending += 1
            self._threads = [t for t in self._threads if t.is_alive()]
            t = threading.Thread(target=self._run, args=(read, args), name=self.name, daemon=True)
            self._threads.append(t)
        t.start()
        return t

    def busy(self) -> bool:
        """True while a read started here has not handed its result over yet (the owner asking from the
        hand-over's own slot sees False: a read it starts there is served)."""
        with self._lock:
            return self._pending > 0

    def wait(self, timeout: float = CLOSE_TIMEOUT_S) -> bool:
        """Wait up to ``timeout`` s in all for the reads going; True when none goes any more."""
        deadline = time.monotonic() + timeout
        for t in list(self._threads):
            t.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> bool:
        """No hand-over after this returns; wait up to ``timeout`` s for the reads going. True when none goes."""
        with self._lock:
            self._closed = True
        return self.wait(timeout)

    def _run(self, read: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            result = read(*args)
        except BaseException:
            with self._lock:
                self._pending -= 1
            raise
        with self._lock:
            self._pending -= 1
            if self._closed:
                return
            try:
                self._hand_over(result)
            except RuntimeError:
                pass  # the owner's C++ object is gone already (deleted without closing)


class ReadsOffThread:
    """Mixin of a widget whose store reads go through ``self._reads`` (an :class:`OffThreadReads`): waiting for
    them, closing them, and closing them when the widget closes.  List it before ``QWidget`` in the bases."""

    _reads: OffThreadReads

    def wait_read(self, timeout: float = CLOSE_TIMEOUT_S) -> bool:
        """Wait (up to ``timeout`` s) for the reads going; True when none goes (tests, quit)."""
        return self._reads.wait(timeout)

    def close_reads(self, timeout: float = CLOSE_TIMEOUT_S) -> bool:
        """No read reaches the widget after this (its window closes); waits up to ``timeout`` s for one going.
        True when none goes."""
        return self._reads.close(timeout)

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        self.close_reads()
        super().closeEvent(event)  # type: ignore[misc]
