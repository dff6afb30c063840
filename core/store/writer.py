"""Write-behind for the run store: a step's records are committed by one writer thread, off the step's path.

A replay records about ten rows a step (two observations, resolution, two
checkpoint rows, verdict, step, evidence, baseline, state-graph
transition).  :class:`BackgroundWriter` runs those writes on one daemon
thread, in the order they were handed over, while the engine thread waits
for the browser; :meth:`core.store.Store.defer` hands one over.  The writes
themselves are prebuilt statements (:mod:`core.store.statements`), about
0.1 ms of this thread's CPU each on SQLite.

Guarantees (what :class:`core.store.Store` builds on them):

* **Order**: writes run one at a time, first in first out; a synchronous
  read or write of the store from any other thread first waits until every
  write handed over before it is committed (:meth:`BackgroundWriter.flush`),
  so it reads what was written and writes after it.  The resume machinery's
  "step under way" row (:func:`core.engine.acting.note_acting`) is such a
  synchronous write: it is committed, after the step's checkpoint, before
  the browser is told to act.
* **Kill safety**: each write is its own transaction, or its own savepoint
  in a batch's transaction; a killed process loses the writes not yet
  committed, whole, and never corrupts the file (SQLite WAL ignores an
  uncommitted tail on the next open).  A batch whose transaction the
  database rolled back by itself (a full disk) commits nothing and reports
  every write of it (``core.store.statements.TransactionLostError``).
* **Bounded**: at most :data:`QUEUE_MAX` writes wait (a full queue blocks
  the caller up to :data:`PUT_LIMIT_S`, then raises ``queue.Full``); a flush
  waits at most its limit and says so (returns False).
* **Errors** never reach the writer's loop: each write's exception goes to
  its ``on_error`` callback (the executor keeps it in ``store_errors``, as
  a synchronous store call would).

The writer's SQLAlchemy work is Python, so it holds the GIL while the engine
thread waits for the browser; each time the engine thread comes back from a
pipe write or read it may wait for the GIL up to the interpreter's switch
interval (5 ms by default) - at 20-30 round trips a step that is a
convoy.  Starting the writer lowers the process's switch interval to
:data:`SWITCH_INTERVAL_S` (never raises it), so the engine thread gets the
GIL back within half a millisecond.
"""
from __future__ import annotations

import queue
import sys
import threading
from typing import Any, Callable, ContextManager

__all__ = ["QUEUE_MAX", "PUT_LIMIT_S", "SWITCH_INTERVAL_S", "BATCH_MAX", "BackgroundWriter"]

#: Writes that may wait at once: about 30 steps' records (seven a step); a run that outpaces the disk by more
#: waits for it at the next hand-over instead of holding an unbounded backlog in memory.
QUEUE_MAX = 256
#: How long (s) a hand-over waits for room in a full queue before it raises ``queue.Full``: SQLite's own
#: busy timeout (``core.store.database.BUSY_TIMEOUT_S``, 30 s) plus as much again.
PUT_LIMIT_S = 60.0
#: The interpreter's switch interval (s) once a writer runs: how long the engine thread may wait for the GIL
#: the writer holds (CPython's default is 0.005).  0.5 ms: the value measured against 5 ms by running the demo
#: flows alternately under each in one process (6% less wall time at load average 17 on 2 cores, 24 runs).
SWITCH_INTERVAL_S = 0.0005
#: Writes the writer takes off its queue at once and commits in one transaction (a *batch*, when the store
#: gives :class:`BackgroundWriter` a ``batch`` context): a step's ten rows (observations, resolution, two
#: checkpoint rows, verdict, step, evidence, baseline, transition) queue while the engine thread waits for the
#: browser, and one ``BEGIN IMMEDIATE`` ... ``COMMIT`` with a savepoint each costs about a third of the writer
#: thread's time of ten transactions (measured on the demo flows).  Bounds how long one batch holds the write
#: lock.
BATCH_MAX = 32


class BackgroundWriter:
    """One daemon thread that runs handed-over writes in order (see the module docstring).

    The thread starts with the first :meth:`submit` and ends with
    :meth:`close`; a writer closed is not used again.
    """

    def __init__(self, name: str = "steadyhand-store-writer", maxsize: int = QUEUE_MAX,
                 batch: Callable[[], ContextManager[Any]] | None = None) -> None:
        self._name = name
        #: ``batch()``: a context in which the writes run in one transaction, committed when it exits (each
        #: write in its own savepoint: one that fails is undone alone); None: each write commits on its own.
        self._batch = batch
        #: Batches committed (transactions of more than one write), counted.
        self.batches = 0
        self._queue: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...], Callable[[BaseException], None] | None]
                                 | None] = queue.Queue(maxsize)
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._done = threading.Condition()
        self._pending = 0
        self._closed = False

    @property
    def pending(self) -> int:
        """Writes handed over and not yet finished (committed or failed)."""
        return self._pending

    def on_writer_thread(self) -> bool:
        """True when called from the writer thread itself (its writes never wait for themselves)."""
        t = self._thread
        return t is not None and threading.get_ident() == t.ident

    def submit(self, fn: Callable[..., Any], args: tuple[Any, ...] = (),
               on_error: Callable[[BaseException], None] | None = None) -> None:
        """Run ``fn(*args)`` on the writer thread after every write submitted before it.

        Called from the writer thread itself, ``fn`` runs at once (a write
        that hands over another one never waits for itself).

        Raises
        ------
        RuntimeError
            When the writer was closed.
        queue.Full
            When the queue stayed full for :data:`PUT_LIMIT_S`.
        """
        if self._closed:
            raise RuntimeError("the store's writer was closed")
        if self.on_writer_thread():
            _run(fn, args, on_error)
            return
        self._start()
        with self._done:
            self._pending += 1
        try:
            self._queue.put((fn, args, on_error), timeout=PUT_LIMIT_S)
        except BaseException:
            self._finished()
            raise

    def flush(self, timeout_s: float = PUT_LIMIT_S) -> bool:
        """Wait until every write submitted so far has finished; False when ``timeout_s`` passed first.

        Returns at once on the writer thread and when nothing is pending.
        """
        if self._pending == 0 or self.on_writer_thread():
            return True
        with self._done:
            return self._done.wait_for(lambda: self._pending == 0, timeout=timeout_s)

    def close(self, timeout_s: float = PUT_LIMIT_S) -> bool:
        """Finish the pending writes (up to ``timeout_s``) and stop the thread; idempotent.

        Returns False when the pending writes did not finish in time (the
        daemon thread is then left to end with the process).
        """
        if self._closed:
            return True
        self._closed = True
        if self._thread is None:
            return True
        if self.on_writer_thread():
            return False  # a write closing its own store: the thread ends after it (never joins itself)
        done = self.flush(timeout_s)
        try:
            self._queue.put(None, timeout=1.0)
        except queue.Full:
            return False
        self._thread.join(timeout=timeout_s if done else 1.0)
        return done and not self._thread.is_alive()

    def _start(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                if sys.getswitchinterval() > SWITCH_INTERVAL_S:
                    sys.setswitchinterval(SWITCH_INTERVAL_S)
                t = threading.Thread(target=self._loop, name=self._name, daemon=True)
                t.start()
                self._thread = t

    def _finished(self) -> None:
        with self._done:
            self._pending -= 1
            if self._pending <= 0:
                self._pending = 0
                self._done.notify_all()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            items = [item]
            stop = False
            while self._batch is not None and len(items) < BATCH_MAX:  # what queued meanwhile: one transaction
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                items.append(more)
            try:
                self._run_all(items)
            finally:
                for _ in items:  # finished only once committed: a flush returns when its writes are on disk
                    self._finished()
            if stop:
                return

    def _run_all(self, items: list[tuple[Callable[..., Any], tuple[Any, ...],
                                         Callable[[BaseException], None] | None]]) -> None:
        """Run ``items`` in order; more than one in one batch (one commit), when the writer has a ``batch``."""
        if self._batch is None or len(items) == 1:
            for fn, args, on_error in items:
                _run(fn, args, on_error)
            return
        failed: set[int] = set()  # writes whose own error was said already (their savepoint undone)

        def noted(i: int, on_error: Callable[[BaseException], None] | None) -> Callable[[BaseException], None]:
            def note(exc: BaseException) -> None:
                failed.add(i)
                if on_error is not None:
                    on_error(exc)
            return note

        try:
            with self._batch():
                for i, (fn, args, on_error) in enumerate(items):
                    _run(fn, args, noted(i, on_error))
            self.batches += 1
        except Exception as exc:  # noqa: BLE001 - the commit failed: none of the batch's writes is stored
            for i, (_, _, on_error) in enumerate(items):
                if on_error is not None and i not in failed:
                    try:
                        on_error(exc)
                    except Exception:  # noqa: BLE001 - a broken callback never stops the writer
                        pass


def _run(fn: Callable[..., Any], args: tuple[Any, ...], on_error: Callable[[BaseException], None] | None) -> None:
    """``fn(*args)``; its exception goes to ``on_error`` (dropped without one: the writer never dies of it)."""
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - a failed write is the caller's to report, never the thread's end
        if on_error is not None:
            try:
                on_error(exc)
            except Exception:  # noqa: BLE001 - a broken callback never stops the writer
                pass
